//! The top-up operations end to end on the handlers: `POST /api/me/cash/top-ups` against the
//! Stripe stub (which checks and records what it receives), `GET` of a top-up, and Stripe's
//! webhook with events signed independently (Python's `hmac`): every signature attack, events in
//! every order, mismatched sessions, concurrent deliveries (on DynamoDB through the
//! one-request-at-a-time proxy, and in memory), and the books after all of it.

use crate::top_ups_api;

use std::sync::Arc;

use api::config::{Secret, StripeApi};
use api::http::routes::{
    cash_top_ups_routes, complete_purchase_routes, start_purchase_routes, stripe_webhook_routes,
};
use clients::stripe::StripeClient;
use domain::topups::TopUpStatus;
use serde_json::Value;
use store::MemoryStore;
use store::cash::GetBalance;
use store::topups::TopUpStore;
use testkit::events::{ApiEvent, call};
use testkit::stripe::{SECRET_KEY, WEBHOOK_SECRET, now, python_signature, session_event};
use testkit::tokens::token;
use top_ups_api::*;

#[tokio::test]
async fn a_top_up_opens_one_checkout_session_with_exactly_stripes_fields() {
    let api = api(MemoryStore::default()).await;
    let created = api.create("fan", "key-1", 2500).await;
    assert_eq!(created.status, 201, "{}", created.body);
    let id = created.top_up_id();
    assert_eq!(
        created.header("location"),
        Some(format!("{TOP_UPS}/{id}").as_str())
    );
    assert_eq!(created.header("idempotent-replayed"), None);
    let top_up = &created.body["topUp"];
    assert_eq!(top_up["amount"], 2500);
    assert_eq!(top_up["currency"], "USD");
    assert_eq!(top_up["status"], "pending");
    assert_eq!(
        top_up["checkoutUrl"],
        "https://checkout.stripe.com/c/pay/cs_test_1"
    );
    assert_eq!(top_up["completedAt"], Value::Null);
    assert!(
        top_up["createdAt"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z'))
    );
    assert_eq!(top_up.as_object().unwrap().len(), 7, "{top_up}");

    let received = api.stub.received();
    assert_eq!(received.len(), 1);
    let request = &received[0];
    assert_eq!(
        (request.method.as_str(), request.path.as_str()),
        ("POST", "/v1/checkout/sessions")
    );
    assert_eq!(
        request.header("authorization"),
        Some(format!("Bearer {SECRET_KEY}").as_str())
    );
    assert_eq!(
        request.header("content-type"),
        Some("application/x-www-form-urlencoded")
    );
    assert_eq!(
        request.header("idempotency-key"),
        Some(format!("fan-api-topup-{id}").as_str())
    );
    let created_at = domain::timestamp::Timestamp::parse(top_up["createdAt"].as_str().unwrap());
    let expires_at = (created_at.unwrap().unix_seconds() + 3600).to_string();
    let expected = [
        ("mode", "payment"),
        ("line_items[0][price_data][currency]", "usd"),
        ("line_items[0][price_data][unit_amount]", "2500"),
        (
            "line_items[0][price_data][product_data][name]",
            "Cash top-up",
        ),
        ("line_items[0][quantity]", "1"),
        ("client_reference_id", id.as_str()),
        ("metadata[topUpId]", id.as_str()),
        ("metadata[userId]", "fan"),
        ("success_url", SUCCESS_URL),
        ("cancel_url", CANCEL_URL),
        // An hour after the top-up, in whole seconds: its pending slot frees itself then.
        ("expires_at", &expires_at),
        ("adaptive_pricing[enabled]", "false"),
    ];
    let form: Vec<(&str, &str)> = request
        .form
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(form, expected);

    // The fan reads it; nobody else can.
    let read = api.get("fan", id.as_str()).await;
    assert_eq!((read.status, &read.body["topUp"]), (200, top_up));
    for (user, path_id) in [("intruder", id.as_str()), ("fan", "no-such-top-up")] {
        let other = api.get(user, path_id).await;
        assert_eq!((other.status, other.code()), (404, "top_up_not_found"));
    }
}

#[tokio::test]
async fn a_replayed_key_answers_the_same_top_up_and_a_reused_one_is_422() {
    let mut api = api(MemoryStore::default()).await;
    Arc::get_mut(&mut api.top_ups)
        .unwrap()
        .policy
        .currencies
        .push("EUR".into());
    let first = api.create("fan", "key-1", 1000).await;
    let again = api.create("fan", "key-1", 1000).await;
    assert_eq!(again.status, 201);
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    assert_eq!(again.body, first.body);
    assert_eq!(again.header("location"), first.header("location"));
    assert_eq!(api.stub.received().len(), 1, "no second call to Stripe");
    for body in [
        r#"{"amount": 1001, "currency": "USD"}"#,
        r#"{"amount": 1000, "currency": "EUR"}"#,
    ] {
        let reused = api.call(&create_event("fan", "key-1", body)).await;
        assert_eq!(
            (reused.status, reused.code()),
            (422, "idempotency_key_reused"),
            "{body}"
        );
    }
    // Another user's same key is another top-up.
    let other = api.create("someone", "key-1", 1000).await;
    assert_eq!(other.status, 201);
    assert_ne!(other.top_up_id(), first.top_up_id());
    assert_eq!(api.stub.sessions(), 2);
}

#[tokio::test]
async fn bad_requests_are_refused_before_anything_is_written() {
    let api = api(MemoryStore::default()).await;
    let fan = token("fan", None);
    let cases = [
        (
            ApiEvent::post(TOP_UPS).json(r#"{"amount":500,"currency":"USD"}"#),
            401,
            "missing_token",
        ),
        (
            ApiEvent::post(TOP_UPS)
                .bearer(&fan)
                .json(r#"{"amount":500,"currency":"USD"}"#),
            400,
            "missing_idempotency_key",
        ),
        (
            ApiEvent::post(TOP_UPS)
                .bearer(&fan)
                .header("idempotency-key", "k")
                .body(r#"{"amount":500,"currency":"USD"}"#),
            415,
            "unsupported_media_type",
        ),
        (
            create_event("fan", "k", r#"{"amount":99,"currency":"USD"}"#),
            400,
            "invalid_amount",
        ),
        (
            create_event("fan", "k", r#"{"amount":50001,"currency":"USD"}"#),
            400,
            "invalid_amount",
        ),
        (
            create_event("fan", "k", r#"{"amount":500.5,"currency":"USD"}"#),
            400,
            "invalid_amount",
        ),
        (
            create_event("fan", "k", r#"{"amount":-500,"currency":"USD"}"#),
            400,
            "invalid_amount",
        ),
        (
            create_event("fan", "k", r#"{"amount":500,"currency":"EUR"}"#),
            400,
            "unsupported_currency",
        ),
        (
            create_event("fan", "k", r#"{"amount":500,"currency":"usd"}"#),
            400,
            "unsupported_currency",
        ),
        (
            create_event("fan", "k", r#"{"amount":"500","currency":"USD"}"#),
            400,
            "invalid_body",
        ),
        (
            create_event("fan", "k", r#"{"amount":500}"#),
            400,
            "invalid_body",
        ),
        (
            create_event("fan", "k", r#"{"amount":500,"currency":"USD","x":1}"#),
            400,
            "invalid_body",
        ),
        (
            create_event("fan", "k", r#"{"amount":500,"#),
            400,
            "invalid_json",
        ),
        (
            ApiEvent::new("DELETE", TOP_UPS).bearer(&fan),
            405,
            "method_not_allowed",
        ),
    ];
    for (event, status, code) in cases {
        let answer = api.call(&event).await;
        assert_eq!((answer.status, answer.code()), (status, code), "{event:?}");
    }
    assert!(api.stub.received().is_empty());
}

#[tokio::test]
async fn stripe_busy_or_down_is_a_503_and_the_same_key_later_opens_one_session() {
    let api = api(MemoryStore::default()).await;
    for status in [429, 500, 503] {
        api.stub.fail_next(&[status]);
        let busy = api.create("fan", "key-1", 700).await;
        assert_eq!(
            (busy.status, busy.code()),
            (503, "service_unavailable"),
            "{status}"
        );
        assert_eq!(busy.header("retry-after"), Some("1"));
    }
    // Stripe answers again: the retry completes the top-up, once.
    let done = api.create("fan", "key-1", 700).await;
    assert_eq!(done.status, 201, "{}", done.body);
    assert_eq!(done.header("idempotent-replayed"), Some("true"));
    assert_eq!(
        done.body["topUp"]["checkoutUrl"],
        "https://checkout.stripe.com/c/pay/cs_test_1"
    );
    let keys: Vec<_> = api
        .stub
        .received()
        .iter()
        .map(|r| r.header("idempotency-key").unwrap().to_owned())
        .collect();
    assert_eq!(keys.len(), 4);
    assert!(
        keys.iter().all(|k| *k == keys[0]),
        "one Idempotency-Key for every try: {keys:?}"
    );
    assert_eq!(api.stub.sessions(), 1);
    assert_eq!(api.balance("fan").await, 0, "nothing credited");

    // Unreachable: a closed port.
    let mut unreachable = api.top_ups;
    Arc::get_mut(&mut unreachable).unwrap().stripe = StripeClient::new(&StripeApi {
        base: format!("http://127.0.0.1:{}", testkit::free_port()),
        secret_key: Secret::new(SECRET_KEY),
    });
    let down = Answer::of(
        call(
            cash_top_ups_routes(),
            &unreachable,
            create_event("fan", "key-2", r#"{"amount":700,"currency":"USD"}"#).request(),
        )
        .await,
    );
    assert_eq!((down.status, down.code()), (503, "service_unavailable"));
}

#[tokio::test(flavor = "current_thread")]
async fn stripe_refusing_is_a_502_logged_without_the_secret() {
    let (logs, _guard) = testkit::logs::capture();
    let mut api = api(MemoryStore::default()).await;
    Arc::get_mut(&mut api.top_ups).unwrap().stripe = StripeClient::new(&StripeApi {
        base: api.stub.base(),
        secret_key: Secret::new("sk_test_wrong_key_999"),
    });
    let refused = api.create("fan", "key-1", 700).await;
    assert_eq!(
        (refused.status, refused.code()),
        (502, "payment_provider_error")
    );
    let text = logs.text();
    assert!(
        text.contains("HTTP 401 invalid_request_error/api_key_invalid"),
        "{text}"
    );
    logs.assert_free_of(&["sk_test_wrong_key_999", SECRET_KEY]);
}

#[tokio::test(flavor = "current_thread")]
async fn a_paid_session_credits_once_and_shows_completed() {
    let (logs, _guard) = testkit::logs::capture();
    let api = api(MemoryStore::default()).await;
    let id = pending(&api, "key-1", 1500).await;
    let event = api.event("evt_1", COMPLETED, &id, "paid").await;
    for _ in 0..3 {
        let answer = api.deliver(&event).await;
        assert_eq!(
            (answer.status, &answer.body),
            (200, &serde_json::json!({"received": true}))
        );
    }
    assert_eq!(api.balance("fan").await, 1500);
    let read = api.get("fan", id.as_str()).await;
    assert_eq!(read.body["topUp"]["status"], "completed");
    assert!(read.body["topUp"]["completedAt"].is_string());
    // A replay of the key now answers it completed, and asks Stripe nothing.
    let again = api.create("fan", "key-1", 1500).await;
    assert_eq!(again.body["topUp"]["status"], "completed");
    assert_eq!(api.stub.received().len(), 1);
    assert_eq!(logs.text().matches("top-up credited").count(), 1);
    // The amount as a log would write it (a field's value, a sentence's word), not as digits
    // a timestamp's fraction may hold (`42.891500Z` failed this test once).
    logs.assert_free_of(&[WEBHOOK_SECRET, SECRET_KEY, "=1500", ":1500", " 1500"]);
}

#[tokio::test]
async fn a_body_api_gateway_hands_over_in_base64_is_verified_as_sent() {
    let api = api(MemoryStore::default()).await;
    let id = pending(&api, "key-1", 800).await;
    // Not compact, with a non-ASCII byte: verified byte for byte.
    let body = api
        .event("evt_é", COMPLETED, &id, "paid")
        .await
        .replace(",", ", ");
    let signature = python_signature(&body, WEBHOOK_SECRET, now());
    let event = ApiEvent::post(WEBHOOK)
        .header("stripe-signature", &signature)
        .body(body.clone())
        .base64();
    let answer = Answer::of(call(stripe_webhook_routes(), &api.webhook, event.request()).await);
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(api.balance("fan").await, 800);
}

mod webhooks;
