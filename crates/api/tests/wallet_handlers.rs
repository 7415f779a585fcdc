//! The wallets through the handlers, on the in-memory store: a link records its wallet and
//! answers exactly what the spec says, a 21st identity is a 409 that writes nothing, the list and
//! the removal (`me-wallets`).

use std::sync::Arc;

use api::handlers::my_wallets::WalletsState;
use api::handlers::web3_link::LinkState;
use api::http::routes::{me_wallets_routes, web3_link_routes};
use domain::links::WEB3_PROVIDER;
use domain::wallets::{MAX_WALLETS_PER_FAN, wallet_id};
use serde_json::{Value, json};
use store::MemoryStore;
use store::links::GetLink;
use testkit::events::{ApiEvent, call, parts};
use testkit::tokens::{token, verifier};

struct Api {
    link: Arc<LinkState<MemoryStore>>,
    wallets: Arc<WalletsState<MemoryStore>>,
}

impl Api {
    fn new() -> Self {
        let store = MemoryStore::default();
        Self {
            link: testkit::link_state(store.clone()),
            wallets: Arc::new(WalletsState {
                store,
                verifier: verifier(),
            }),
        }
    }

    async fn link(&self, fan: &str, payload: &str) -> (u16, Value) {
        let event = ApiEvent::post("/api/web3-link")
            .bearer(&token(fan, Some("fan@example.com")))
            .json(&format!(r#"{{"payload": {payload}}}"#));
        parts(&call(web3_link_routes(), &self.link, event.request()).await)
    }

    async fn wallets(&self, fan: &str) -> (u16, Value) {
        let event = ApiEvent::get("/api/me/wallets").bearer(&token(fan, None));
        parts(&call(me_wallets_routes(), &self.wallets, event.request()).await)
    }

    async fn delete(&self, fan: &str, wallet: &str) -> lambda_http::Response<lambda_http::Body> {
        let event =
            ApiEvent::new("DELETE", &format!("/api/me/wallets/{wallet}")).bearer(&token(fan, None));
        call(me_wallets_routes(), &self.wallets, event.request()).await
    }
}

fn identity(n: u32) -> String {
    format!(r#"{{"address":"0x{n:040x}"}}"#)
}

fn code(body: &Value) -> &str {
    body["error"]["code"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn a_link_answers_as_the_spec_says_and_lists_its_wallet_newest_first() {
    let api = Api::new();
    let spec_answer =
        json!({"success": true, "data": {"userId": "fan_1", "email": "fan@example.com"}});
    let first = r#"{"address": "0xAbC", "chainId": 1}"#;
    assert_eq!(api.link("fan_1", first).await, (200, spec_answer.clone()));
    // The same identity respelled: the same answer, one wallet.
    let respelled = r#"{"chainId":1.0,"address":"0x\u0041bC"}"#;
    assert_eq!(
        api.link("fan_1", respelled).await,
        (200, spec_answer.clone())
    );
    assert_eq!(api.link("fan_1", "[2]").await, (200, spec_answer));

    let (status, body) = api.wallets("fan_1").await;
    assert_eq!(status, 200, "{body}");
    let wallets = body["wallets"].as_array().unwrap();
    assert_eq!(wallets.len(), 2);
    assert_eq!(wallets[0]["id"], wallet_id("[2]").unwrap().as_str());
    assert_eq!(wallets[0]["payload"], json!([2]));
    let older = &wallets[1];
    assert_eq!(older["id"], wallet_id(first).unwrap().as_str());
    // The payload as last linked, as a JSON value.
    assert_eq!(
        older["payload"],
        json!({"chainId": 1.0, "address": "0xAbC"})
    );
    assert!(older["lastLinkedAt"].as_str() > older["linkedAt"].as_str());
    let mut keys: Vec<&String> = older.as_object().unwrap().keys().collect();
    keys.sort();
    assert_eq!(keys, ["id", "lastLinkedAt", "linkedAt", "payload"]);
    // Another fan sees none of them.
    assert_eq!(api.wallets("fan_2").await, (200, json!({"wallets": []})));
}

#[tokio::test]
async fn a_21st_identity_is_409_and_writes_nothing() {
    let api = Api::new();
    for n in 0..MAX_WALLETS_PER_FAN {
        assert_eq!(api.link("fan", &identity(n)).await.0, 200);
    }
    let (status, body) = api.link("fan", &identity(99)).await;
    assert_eq!(
        (status, code(&body)),
        (409, "wallet_limit_reached"),
        "{body}"
    );
    assert_eq!(body["success"], false);
    let link = api
        .link
        .store
        .get_link(&testkit::ids::user("fan"), WEB3_PROVIDER)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        link.payload,
        identity(MAX_WALLETS_PER_FAN - 1),
        "the link is kept"
    );
    assert_eq!(
        api.wallets("fan").await.1["wallets"]
            .as_array()
            .unwrap()
            .len(),
        20
    );
    // A held identity still links.
    assert_eq!(api.link("fan", &identity(0)).await.0, 200);
}

#[tokio::test]
async fn a_removal_is_204_then_404_and_frees_a_slot() {
    let api = Api::new();
    for n in 0..MAX_WALLETS_PER_FAN {
        api.link("fan", &identity(n)).await;
    }
    api.link("other", &identity(50)).await;
    let mine = wallet_id(&identity(4)).unwrap();
    let others = wallet_id(&identity(50)).unwrap();

    let response = api.delete("fan", others.as_str()).await;
    assert_eq!(parts(&response).0, 404);
    assert_eq!(code(&parts(&response).1), "wallet_not_found");
    assert_eq!(
        api.wallets("other").await.1["wallets"][0]["id"],
        others.as_str()
    );

    let response = api.delete("fan", mine.as_str()).await;
    assert_eq!(response.status(), 204);
    assert!(response.body().is_empty());
    let response = api.delete("fan", mine.as_str()).await;
    assert_eq!(
        (parts(&response).0, code(&parts(&response).1)),
        (404, "wallet_not_found")
    );
    let listed = api.wallets("fan").await.1;
    assert_eq!(listed["wallets"].as_array().unwrap().len(), 19);
    assert_eq!(
        api.link("fan", &identity(99)).await.0,
        200,
        "a slot was freed"
    );
    assert_eq!(api.link("fan", &identity(100)).await.0, 409);
}

#[tokio::test]
async fn bad_requests_are_clear_4xx() {
    let api = Api::new();
    // Not an id: no such resource.
    for path in [
        "/api/me/wallets/a.b",
        "/api/me/wallets/%20",
        "/api/me/wallets/é",
    ] {
        let event = ApiEvent::new("DELETE", path).bearer(&token("fan", None));
        let (status, body) = parts(&call(me_wallets_routes(), &api.wallets, event.request()).await);
        assert_eq!((status, code(&body)), (404, "not_found"), "{path}");
    }
    for event in [
        ApiEvent::get("/api/me/wallets"),
        ApiEvent::new("DELETE", "/api/me/wallets/w1"),
    ] {
        let (status, body) = parts(&call(me_wallets_routes(), &api.wallets, event.request()).await);
        assert_eq!((status, code(&body)), (401, "missing_token"));
    }
    let event = ApiEvent::post("/api/me/wallets").bearer(&token("fan", None));
    let response = call(me_wallets_routes(), &api.wallets, event.request()).await;
    assert_eq!(parts(&response).0, 405);
    assert_eq!(response.headers()["allow"], "GET");
}
