//! The real `get-purchase` binary, run through a Lambda Runtime API emulator against
//! moto_server, with its JWKS fetched from a loopback identity-provider stub.

use std::time::Duration;

use testkit::packs::active;
use testkit::purchases::{PurchaseEnv, fixture, get_event, reserve, reserve_fixture_purchase};
use testkit::tokens::token;

const BINARY: &str = env!("CARGO_BIN_EXE_get-purchase");

#[tokio::test]
async fn answers_the_buyer_and_nobody_else_over_the_runtime_api() {
    let env = PurchaseEnv::new().await;
    for pack in [active("p", 10), active("other", 10)] {
        testkit::packs::save(&env.store, &pack).await;
    }
    let purchase = reserve(&env.store, "buyer", "p", "key-1", 600).await;
    let short = reserve(&env.store, "buyer", "p", "key-2", 1).await;
    let mut function = env.spawn(BINARY, &[]).await;
    let buyer = token("buyer", None);

    let answer = function
        .call(&get_event("p", purchase.id.as_str(), &buyer))
        .await;
    assert_eq!(answer.status, 200, "{answer:?}");
    let json = &answer.body["purchase"];
    assert_eq!(json["id"], purchase.id.as_str());
    assert_eq!(json["packId"], "p");
    assert_eq!(json["status"], "reserved");
    assert_eq!(json["clientSeed"], purchase.client_seed.as_str());
    assert_eq!(json["nonce"], 1);
    assert_eq!(json["expiresAt"], purchase.expires_at.to_string());
    assert_eq!(json["items"], serde_json::Value::Null);
    assert_eq!(answer.header("idempotent-replayed"), None);

    // Another user's token, another pack in the path, an unknown id: the same 404.
    for (event, who) in [
        (
            get_event("p", purchase.id.as_str(), &token("someone-else", None)),
            "another user",
        ),
        (
            get_event("other", purchase.id.as_str(), &buyer),
            "another pack",
        ),
        (get_event("p", "no-such-purchase", &buyer), "an unknown id"),
    ] {
        let answer = function.call(&event).await;
        assert_eq!(
            (answer.status, answer.code()),
            (404, Some("purchase_not_found")),
            "{who}: {answer:?}"
        );
    }
    let anonymous = function
        .call(&testkit::events::ApiEvent::get(&format!(
            "/api/packs/p/purchases/{}",
            purchase.id
        )))
        .await;
    assert_eq!(
        (anonymous.status, anonymous.code()),
        (401, Some("missing_token"))
    );

    // A hold that ran out reads `expired`, released or not.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let answer = function
        .call(&get_event("p", short.id.as_str(), &buyer))
        .await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(answer.body["purchase"]["status"], "expired");
    assert!(function.is_running());
}

/// `infra/events/get-purchase.json` (with a token for `me`) reads the purchase the start
/// fixture makes.
#[tokio::test]
async fn the_event_fixture_reads_the_fixture_purchase() {
    let env = PurchaseEnv::new().await;
    let purchase = reserve_fixture_purchase(&env.store).await;
    let function = env.spawn(BINARY, &[]).await;
    let answer = function
        .call_json(fixture("get-purchase", Some(&token("me", None))))
        .await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(answer.body["purchase"]["id"], purchase.id.as_str());
    assert_eq!(
        answer.body["purchase"]["clientSeed"],
        purchase.client_seed.as_str()
    );
}

#[tokio::test]
async fn missing_auth_settings_stop_the_function_with_a_clear_message() {
    testkit::runtime_api::assert_init_needs_auth(BINARY).await;
}

#[tokio::test]
async fn a_dynamodb_outage_is_a_503_with_retry_after() {
    let (env, proxy) = PurchaseEnv::behind_proxy().await;
    let purchase = reserve(&env.store, "buyer", "p", "key-1", 600).await;
    let function = env.spawn(BINARY, &[]).await;
    let buyer = token("buyer", None);
    let event = get_event("p", purchase.id.as_str(), &buyer);
    testkit::purchases::assert_outage_then_recovery(&function, &proxy, &event).await;
}

/// A DynamoDB too slow for the invocation's time (every attempt hangs; the SDK gives up after
/// 4 s, past the 3 s timeout): the function answers its JSON 503 before the deadline, where
/// Lambda would stop it and API Gateway answer its own 500.
#[tokio::test]
async fn a_dynamodb_too_slow_for_the_deadline_gets_the_json_503_in_time() {
    let (env, proxy) = PurchaseEnv::behind_proxy().await;
    let purchase = reserve(&env.store, "buyer", "p", "key-1", 600).await;
    let function = env.spawn(BINARY, &[]).await;
    let event = get_event("p", purchase.id.as_str(), &token("buyer", None));
    assert_eq!(function.call(&event).await.status, 200);
    function.runtime.set_timeout(Duration::from_secs(3));
    proxy.set(testkit::fault_proxy::Fault::Hangup);
    function.call(&event).await.assert_unavailable();
}
