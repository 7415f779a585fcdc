//! README's routing rule on the functions, as API Gateway hands them requests: a trailing slash
//! is no route, the `$default` function's JSON 404 `not_found` on every method, never the list
//! its path without the slash would answer, nor a 405 whose `Allow` names a method that 404s
//! on that path too. A route's own function answers the same if one ever reaches it.

use std::sync::Arc;

use api::config::Secret;
use api::handlers::get_pack::GetPackState;
use api::handlers::list_packs::ListPacksState;
use api::handlers::stripe_webhook::WebhookState;
use api::http::request::DEFAULT_MAX_BODY_BYTES;
use api::http::routes::{get_pack_routes, list_packs_routes, routes, stripe_webhook_routes};
use store::MemoryStore;
use testkit::events::{ApiEvent, call, parts};

fn store() -> MemoryStore {
    MemoryStore::with_packs(&[testkit::packs::active("rookies", 10)])
}

fn assert_404(response: &lambda_http::Response<lambda_http::Body>, what: &str) {
    let (status, body) = parts(response);
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (404, Some("not_found")),
        "{what}: {body}"
    );
    assert!(!response.headers().contains_key("allow"), "{what}");
}

#[tokio::test]
async fn the_default_function_answers_404_for_every_path_with_a_trailing_slash() {
    let state = Arc::new(ListPacksState {
        store: store(),
        cursors: testkit::cursor_signer(),
    });
    let (status, _) = parts(
        &call(
            list_packs_routes(),
            &state,
            ApiEvent::get("/api/packs").request(),
        )
        .await,
    );
    assert_eq!(status, 200, "the list, without the slash");
    for route in routes() {
        let values: Vec<&str> = route.param_names().map(|_| "rookies").collect();
        let path = format!("{}/", route.fill(&values));
        for method in ["GET", "POST", "PUT", "DELETE"] {
            let event = ApiEvent::new(method, &path).json("{}");
            let response = call(list_packs_routes(), &state, event.request()).await;
            assert_404(&response, &format!("{method} {path}"));
        }
    }
}

#[tokio::test]
async fn a_routes_own_function_answers_404_for_its_path_with_a_trailing_slash() {
    let pack = Arc::new(GetPackState {
        store: store(),
        recent: Default::default(),
    });
    let (status, _) = parts(
        &call(
            get_pack_routes(),
            &pack,
            ApiEvent::get("/api/packs/rookies").request(),
        )
        .await,
    );
    assert_eq!(status, 200, "the pack, without the slash");
    let response = call(
        get_pack_routes(),
        &pack,
        ApiEvent::get("/api/packs/rookies/").request(),
    )
    .await;
    assert_404(&response, "GET /api/packs/rookies/");

    let webhook = Arc::new(WebhookState {
        store: store(),
        secret: Secret::new(testkit::stripe::WEBHOOK_SECRET),
        max_body_bytes: DEFAULT_MAX_BODY_BYTES,
    });
    for method in ["GET", "POST"] {
        let event = ApiEvent::new(method, "/api/webhooks/stripe/").json("{}");
        let response = call(stripe_webhook_routes(), &webhook, event.request()).await;
        assert_404(&response, &format!("{method} /api/webhooks/stripe/"));
    }
}
