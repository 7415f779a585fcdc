//! The real `cash-top-ups` binary, run through a Lambda Runtime API emulator against moto_server,
//! the JWKS stub and the Stripe stub.

use testkit::events::ApiEvent;
use testkit::purchases::{PurchaseEnv, fixture};
use testkit::runtime_api::assert_init_fails_naming;
use testkit::stripe::StripeStub;
use testkit::tokens::token;

const BINARY: &str = env!("CARGO_BIN_EXE_cash-top-ups");

#[tokio::test]
async fn the_fixture_opens_one_session_and_the_fan_reads_it_over_the_runtime_api() {
    let env = PurchaseEnv::new().await;
    let stub = StripeStub::start().await;
    let vars = stub.function_vars();
    let extra: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let function = env.spawn(BINARY, &extra).await;
    let me = token("me", None);

    // Stripe busy: 503, nothing opened; the same key later opens one session.
    stub.fail_next(&[429]);
    function
        .call_json(fixture("cash-top-ups", Some(&me)))
        .await
        .assert_unavailable();
    let created = function.call_json(fixture("cash-top-ups", Some(&me))).await;
    assert_eq!(created.status, 201, "{created:?}");
    let id = created.body["topUp"]["id"].as_str().unwrap().to_owned();
    assert_eq!(created.body["topUp"]["status"], "pending");
    assert_eq!(created.body["topUp"]["amount"], 1000);
    let location = format!("/api/me/cash/top-ups/{id}");
    assert_eq!(created.header("location"), Some(location.as_str()));
    let again = function.call_json(fixture("cash-top-ups", Some(&me))).await;
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    assert_eq!(again.body, created.body);
    assert_eq!(stub.sessions(), 1);
    let received = stub.received();
    assert_eq!(received.len(), 2, "the busy try and the one that opened it");
    assert_eq!(received[1].field("client_reference_id"), Some(id.as_str()));
    assert_eq!(
        received[1].field("line_items[0][price_data][currency]"),
        Some("usd")
    );

    let read = function.call(&ApiEvent::get(&location).bearer(&me)).await;
    assert_eq!((read.status, &read.body), (200, &created.body));
    let other = function
        .call(&ApiEvent::get(&location).bearer(&token("someone", None)))
        .await;
    assert_eq!(
        (other.status, other.code()),
        (404, Some("top_up_not_found"))
    );
}

#[tokio::test]
async fn init_fails_fast_without_stripe_settings() {
    let stub = StripeStub::start().await;
    let vars = stub.function_vars();
    let base = [
        ("TABLE_NAME", "fan-api"),
        ("AUTH_ISSUER", "https://issuer.example"),
        ("AUTH_JWKS_URL", "https://issuer.example/jwks"),
    ];
    for missing in ["STRIPE_SECRET_KEY", "TOPUP_SUCCESS_URL"] {
        let env: Vec<(&str, &str)> = base
            .iter()
            .copied()
            .chain(vars.iter().map(|(k, v)| (*k, v.as_str())))
            .filter(|(name, _)| *name != missing)
            .collect();
        assert_init_fails_naming(BINARY, &env, missing).await;
    }
}
