//! The real `complete-purchase` binary, run through a Lambda Runtime API emulator against
//! moto_server, with its JWKS fetched from a loopback identity-provider stub and balances
//! credited with the Cash store.

use std::time::Duration;

use serde_json::json;
use store::cash::GetBalance;
use store::packs::GetPack;
use testkit::countdowns::without_countdowns;
use testkit::fault_proxy::{Fault, THROTTLING};
use testkit::packs::active;
use testkit::purchases::{
    PurchaseEnv, complete_event, credit, fixture, reserve, reserve_fixture_purchase,
};
use testkit::tokens::token;

const BINARY: &str = env!("CARGO_BIN_EXE_complete-purchase");

#[tokio::test]
async fn pays_from_the_balance_once_over_the_runtime_api() {
    let env = PurchaseEnv::new().await;
    testkit::packs::save(&env.store, &active("p", 10)).await; // 499 USD
    let purchase = reserve(&env.store, "buyer", "p", "key-1", 600).await;
    let unfunded = reserve(&env.store, "broke", "p", "key-1", 600).await;
    credit(&env.store, "buyer", 1000, "USD", "grant-buyer-1").await;
    let mut function = env.spawn(BINARY, &[]).await;
    let buyer = token("buyer", None);

    // 200: paid, with the balance left.
    let paid = function
        .call(&complete_event("p", purchase.id.as_str(), &buyer))
        .await;
    assert_eq!(paid.status, 200, "{paid:?}");
    assert_eq!(paid.body["purchase"]["id"], purchase.id.as_str());
    assert_eq!(paid.body["purchase"]["status"], "completed");
    assert!(paid.body["purchase"]["completedAt"].is_string(), "{paid:?}");
    assert_eq!(
        paid.body["cash"],
        json!({"balance": {"amount": 501, "currency": "USD"}})
    );
    assert_eq!(paid.header("idempotent-replayed"), None);
    assert_eq!(
        env.store
            .get_balance(&testkit::ids::user("buyer"), "USD")
            .await
            .unwrap(),
        501
    );

    // Again: the same purchase, a replay, no second debit.
    let again = function
        .call(&complete_event("p", purchase.id.as_str(), &buyer))
        .await;
    assert_eq!(again.status, 200, "{again:?}");
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    assert_eq!(
        without_countdowns(again.body),
        without_countdowns(paid.body.clone())
    );
    assert_eq!(
        env.store
            .get_balance(&testkit::ids::user("buyer"), "USD")
            .await
            .unwrap(),
        501
    );

    // A buyer without the balance: 402, the reservation kept.
    let broke = function
        .call(&complete_event(
            "p",
            unfunded.id.as_str(),
            &token("broke", None),
        ))
        .await;
    assert_eq!(
        (broke.status, broke.code()),
        (402, Some("insufficient_funds"))
    );

    // Someone else's purchase; an unsupported method; no token.
    let stranger = function
        .call(&complete_event(
            "p",
            purchase.id.as_str(),
            &token("stranger", None),
        ))
        .await;
    assert_eq!(
        (stranger.status, stranger.code()),
        (404, Some("purchase_not_found"))
    );
    let card =
        testkit::events::ApiEvent::new("PUT", &format!("/api/packs/p/purchases/{}", unfunded.id))
            .bearer(&token("broke", None))
            .json(r#"{"payment":{"method":"card"}}"#);
    let card = function.call(&card).await;
    assert_eq!(
        (card.status, card.code()),
        (400, Some("unsupported_payment_method"))
    );
    let anonymous = function
        .call(
            &testkit::events::ApiEvent::new(
                "PUT",
                &format!("/api/packs/p/purchases/{}", purchase.id),
            )
            .json(r#"{"payment":{"method":"cash"}}"#),
        )
        .await;
    assert_eq!(
        (anonymous.status, anonymous.code()),
        (401, Some("missing_token"))
    );
    assert!(function.is_running());
}

/// A hold that ran out before payment: 410, and its unit is back on sale.
#[tokio::test]
async fn an_expired_hold_is_released_instead_of_paid() {
    let env = PurchaseEnv::new().await;
    testkit::packs::save(&env.store, &active("p", 10)).await;
    let purchase = reserve(&env.store, "buyer", "p", "key-1", 1).await;
    credit(&env.store, "buyer", 1000, "USD", "grant-buyer-1").await;
    let function = env.spawn(BINARY, &[]).await;
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let answer = function
        .call(&complete_event(
            "p",
            purchase.id.as_str(),
            &token("buyer", None),
        ))
        .await;
    assert_eq!(
        (answer.status, answer.code()),
        (410, Some("reservation_expired"))
    );
    let pack = env
        .store
        .get_pack(&testkit::ids::pack("p"))
        .await
        .unwrap()
        .unwrap()
        .pack;
    assert_eq!(
        testkit::packs::remaining(&env.store, "p").await,
        pack.total_supply
    );
    assert_eq!(
        env.store
            .get_balance(&testkit::ids::user("buyer"), "USD")
            .await
            .unwrap(),
        1000
    );
}

/// `infra/events/complete-purchase.json` (with a token for `me`) pays for the purchase the start
/// fixture makes: 402 without Cash, 200 once `me` is credited.
#[tokio::test]
async fn the_event_fixture_pays_for_the_fixture_purchase() {
    let env = PurchaseEnv::new().await;
    let purchase = reserve_fixture_purchase(&env.store).await;
    let function = env.spawn(BINARY, &[]).await;
    let event = fixture("complete-purchase", Some(&token("me", None)));
    let broke = function.call_json(event.clone()).await;
    assert_eq!(
        (broke.status, broke.code()),
        (402, Some("insufficient_funds"))
    );
    credit(&env.store, "me", 1000, "USD", "fixture-grant").await;
    let paid = function.call_json(event).await;
    assert_eq!(paid.status, 200, "{paid:?}");
    assert_eq!(paid.body["purchase"]["id"], purchase.id.as_str());
    assert_eq!(
        paid.body["cash"]["balance"]["amount"],
        1000 - purchase.price.amount
    );
}

#[tokio::test]
async fn missing_auth_settings_stop_the_function_with_a_clear_message() {
    testkit::runtime_api::assert_init_needs_auth(BINARY).await;
}

#[tokio::test]
async fn a_dynamodb_outage_is_a_503_and_the_same_process_serves_again_after_it() {
    let (env, proxy) = PurchaseEnv::behind_proxy().await;
    credit(&env.store, "buyer", 5000, "USD", "grant-buyer-1").await;
    let mut function = env.spawn(BINARY, &[]).await;
    let buyer = token("buyer", None);
    for (n, fault) in [THROTTLING, Fault::Hangup].into_iter().enumerate() {
        let purchase = reserve(&env.store, "buyer", "p", &format!("key-{n}"), 600).await;
        proxy.set(fault.clone());
        let answer = function
            .call(&complete_event("p", purchase.id.as_str(), &buyer))
            .await;
        answer.assert_unavailable();
        assert!(answer.header("retry-after").is_some(), "{answer:?}");
        proxy.set(Fault::None);
        let answer = function
            .call(&complete_event("p", purchase.id.as_str(), &buyer))
            .await;
        assert_eq!(answer.status, 200, "after {fault:?}: {answer:?}");
        assert_eq!(answer.header("idempotent-replayed"), None, "paid once");
    }
    assert_eq!(
        env.store
            .get_balance(&testkit::ids::user("buyer"), "USD")
            .await
            .unwrap(),
        5000 - 2 * 499
    );
    assert!(
        function.is_running(),
        "the function process is still running"
    );
}
