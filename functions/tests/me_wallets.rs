//! The real `me-wallets` binary (GET /api/me/wallets, DELETE /api/me/wallets/{walletId}) and
//! the real `web3-link` binary that fills it, each run through a Lambda Runtime API emulator
//! against moto_server, with their JWKS from a loopback stub.

use domain::wallets::{MAX_WALLETS_PER_FAN, wallet_id};
use serde_json::json;
use testkit::events::ApiEvent;
use testkit::purchases::{Function, PurchaseEnv, fixture, sibling_binary};
use testkit::tokens::token;

const BINARY: &str = env!("CARGO_BIN_EXE_me-wallets");

fn identity(n: u32) -> String {
    format!(r#"{{"address":"0x{n:040x}"}}"#)
}

fn link_event(fan: &str, payload: &str) -> ApiEvent {
    ApiEvent::post("/api/web3-link")
        .bearer(&token(fan, Some("fan@example.com")))
        .json(&format!(r#"{{"payload":{payload}}}"#))
}

async fn spawn_both(env: &PurchaseEnv) -> (Function, Function) {
    let web3_link = sibling_binary(BINARY, "web3-link");
    (
        env.spawn(BINARY, &[]).await,
        env.spawn(web3_link.to_str().unwrap(), &[]).await,
    )
}

#[tokio::test]
async fn links_fill_the_list_up_to_the_cap_and_a_removal_frees_a_slot() {
    let env = PurchaseEnv::new().await;
    let (wallets, link) = spawn_both(&env).await;
    // All but two straight into the store; the last two through the link function.
    let fan = testkit::ids::user("fan");
    for n in 0..MAX_WALLETS_PER_FAN - 2 {
        let at = testkit::packs::at(i64::from(n) - 100);
        testkit::wallets::link(&env.store, &fan, &identity(n), at, None)
            .await
            .unwrap();
    }
    for n in MAX_WALLETS_PER_FAN - 2..MAX_WALLETS_PER_FAN {
        let answer = link.call(&link_event("fan", &identity(n))).await;
        assert_eq!(answer.status, 200, "{answer:?}");
        assert_eq!(
            answer.body,
            json!({"success": true, "data": {"userId": "fan", "email": "fan@example.com"}})
        );
    }
    let refused = link.call(&link_event("fan", &identity(99))).await;
    assert_eq!(
        (refused.status, refused.code()),
        (409, Some("wallet_limit_reached"))
    );

    let listed = wallets
        .call(&ApiEvent::get("/api/me/wallets").bearer(&token("fan", None)))
        .await;
    assert_eq!(listed.status, 200, "{listed:?}");
    let list = listed.body["wallets"].as_array().unwrap();
    assert_eq!(list.len(), 20);
    let newest = identity(MAX_WALLETS_PER_FAN - 1);
    assert_eq!(list[0]["id"], wallet_id(&newest).unwrap().as_str());
    assert_eq!(
        list[0]["payload"],
        serde_json::from_str::<serde_json::Value>(&newest).unwrap()
    );

    let delete = |fan: &str, id: &str| {
        ApiEvent::new("DELETE", &format!("/api/me/wallets/{id}")).bearer(&token(fan, None))
    };
    let removed = wallet_id(&identity(3)).unwrap();
    let stranger = wallets.call(&delete("stranger", removed.as_str())).await;
    assert_eq!(
        (stranger.status, stranger.code()),
        (404, Some("wallet_not_found"))
    );
    let answer = wallets.call(&delete("fan", removed.as_str())).await;
    assert_eq!(
        (answer.status, &answer.body),
        (204, &json!(null)),
        "no body"
    );
    let again = wallets.call(&delete("fan", removed.as_str())).await;
    assert_eq!(
        (again.status, again.code()),
        (404, Some("wallet_not_found"))
    );
    let linked = link.call(&link_event("fan", &identity(99))).await;
    assert_eq!(linked.status, 200, "the removal freed a slot: {linked:?}");
}

/// `infra/events/web3-link.json`, then `me-wallets.json` and `me-wallets.delete.json` (with a
/// token for `me`): the fixtures name the wallet the link fixture makes.
#[tokio::test]
async fn the_event_fixtures_answer_in_order() {
    let env = PurchaseEnv::new().await;
    let (wallets, link) = spawn_both(&env).await;
    let me = token("me", None);
    let linked = link.call_json(fixture("web3-link", Some(&me))).await;
    assert_eq!(linked.status, 200, "{linked:?}");
    let listed = wallets.call_json(fixture("me-wallets", Some(&me))).await;
    assert_eq!(listed.status, 200, "{listed:?}");
    let id = listed.body["wallets"][0]["id"].as_str().unwrap().to_owned();
    let removed = wallets
        .call_json(fixture("me-wallets.delete", Some(&me)))
        .await;
    assert_eq!(removed.status, 204, "{removed:?} ({id})");
    let listed = wallets.call_json(fixture("me-wallets", Some(&me))).await;
    assert_eq!(listed.body, json!({"wallets": []}));
}

#[tokio::test]
async fn missing_auth_settings_stop_the_function_with_a_clear_message() {
    testkit::runtime_api::assert_init_needs_auth(BINARY).await;
}

#[tokio::test]
async fn a_dynamodb_outage_is_a_503_with_retry_after() {
    let (env, proxy) = PurchaseEnv::behind_proxy().await;
    let function = env.spawn(BINARY, &[]).await;
    let event = ApiEvent::get("/api/me/wallets").bearer(&token("fan", None));
    testkit::purchases::assert_outage_then_recovery(&function, &proxy, &event).await;
}
