//! The event fixtures of `infra/events/` are real API Gateway events that the handlers answer.

use api::handlers::list_packs::ListPacksState;
use api::http::routes::{list_packs_routes, web3_link_routes};
use std::sync::Arc;
use store::MemoryStore;
use store::links::GetLink;
use testkit::events::{call, parts};
use testkit::packs::active;
use testkit::tokens::token;

fn fixture(name: &str) -> String {
    let path = format!("{}/../../infra/events/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[tokio::test]
async fn list_packs_fixture_lists_two_packs() {
    let state = Arc::new(ListPacksState {
        store: MemoryStore::with_packs(&[active("a", 1), active("b", 2), active("c", 3)]),
        cursors: testkit::cursor_signer(),
    });
    let request = lambda_http::request::from_str(&fixture("list-packs.json")).unwrap();
    let (status, body) = parts(&call(list_packs_routes(), &state, request).await);
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["packs"].as_array().unwrap().len(), 2);
    assert!(body["nextCursor"].is_string());
}

#[tokio::test]
async fn web3_link_fixture_links_with_a_token_in_place_of_the_placeholder() {
    let state = testkit::link_state(MemoryStore::default());
    let event = fixture("web3-link.json");
    assert!(event.contains("Bearer <TOKEN>"));

    let as_is = lambda_http::request::from_str(&event).unwrap();
    assert_eq!(
        parts(&call(web3_link_routes(), &state, as_is).await).0,
        401,
        "the placeholder is no token"
    );

    let request =
        lambda_http::request::from_str(&event.replace("<TOKEN>", &token("fixture-user", None)))
            .unwrap();
    let (status, body) = parts(&call(web3_link_routes(), &state, request).await);
    assert_eq!(status, 200, "{body}");
    let link = state
        .store
        .get_link(&testkit::ids::user("fixture-user"), "web3")
        .await
        .unwrap()
        .unwrap();
    assert!(
        link.payload
            .contains("0x52908400098527886E0F7030069857D2E4169EE7")
    );
}
