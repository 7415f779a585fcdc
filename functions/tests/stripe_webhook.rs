//! The real `stripe-webhook` binary, run through a Lambda Runtime API emulator against
//! moto_server, with events signed by Python's standard library.

use domain::cash::Money;
use domain::timestamp::Timestamp;
use domain::topups::{Checkout, TopUp, TopUpStatus, top_up_id};
use store::cash::GetBalance;
use store::topups::{CreateTopUp, GetTopUp, SetCheckout};
use testkit::purchases::{PurchaseEnv, fixture};
use testkit::runtime_api::assert_init_fails_naming;
use testkit::stripe::{WEBHOOK_SECRET, now, python_signature};

const BINARY: &str = env!("CARGO_BIN_EXE_stripe-webhook");

/// The fixture's event about `session` and `top_up`, signed now (its body as it stands).
fn signed_fixture(session: &str, top_up: &str, secret: &str, base64: bool) -> serde_json::Value {
    let mut event = fixture("stripe-webhook", None);
    let body = event["body"]
        .as_str()
        .unwrap()
        .replace("<SESSION>", session)
        .replace("<TOPUP>", top_up);
    event["headers"]["stripe-signature"] = python_signature(&body, secret, now()).into();
    if base64 {
        use base64::Engine;
        event["body"] = base64::engine::general_purpose::STANDARD
            .encode(&body)
            .into();
        event["isBase64Encoded"] = true.into();
    } else {
        event["body"] = body.into();
    }
    event
}

#[tokio::test]
async fn a_signed_fixture_event_credits_the_top_up_once_over_the_runtime_api() {
    let env = PurchaseEnv::new().await;
    let user = testkit::ids::user("me");
    let pending = TopUp::pending(
        top_up_id(&user, "try-1"),
        user,
        Money {
            amount: 1000,
            currency: "USD".into(),
        },
        Timestamp::now(),
    );
    env.store.create_top_up(&pending).await.unwrap();
    let checkout = Checkout {
        session_id: "cs_test_fixture".into(),
        url: "https://checkout.stripe.com/c/pay/cs_test_fixture".into(),
    };
    env.store
        .set_checkout(&pending.id, &checkout)
        .await
        .unwrap();
    let function = env
        .spawn(BINARY, &[("STRIPE_WEBHOOK_SECRET", WEBHOOK_SECRET)])
        .await;

    let forged = function
        .call_json(signed_fixture(
            "cs_test_fixture",
            pending.id.as_str(),
            "whsec_other",
            false,
        ))
        .await;
    assert_eq!(
        (forged.status, forged.code()),
        (400, Some("invalid_signature"))
    );
    let unsigned = function.call_json(fixture("stripe-webhook", None)).await;
    assert_eq!(unsigned.status, 400);

    for base64 in [false, true, false] {
        let event = signed_fixture(
            "cs_test_fixture",
            pending.id.as_str(),
            WEBHOOK_SECRET,
            base64,
        );
        let answer = function.call_json(event).await;
        assert_eq!(answer.status, 200, "{answer:?}");
        assert_eq!(answer.body, serde_json::json!({"received": true}));
    }
    assert_eq!(
        env.store
            .get_balance(&testkit::ids::user("me"), "USD")
            .await
            .unwrap(),
        1000
    );
    let stored = env.store.get_top_up(&pending.id).await.unwrap().unwrap();
    assert_eq!(stored.status, TopUpStatus::Completed);
}

#[tokio::test]
async fn init_fails_fast_without_the_webhook_secret() {
    assert_init_fails_naming(
        BINARY,
        &[("TABLE_NAME", "fan-api")],
        "STRIPE_WEBHOOK_SECRET",
    )
    .await;
}
