//! The top-up operations end to end on the handlers: `POST /api/me/cash/top-ups` against the
//! Stripe stub (which checks and records what it receives), `GET` of a top-up, and Stripe's
//! webhook with events signed independently (Python's `hmac`): every signature attack, events in
//! every order, mismatched sessions, concurrent deliveries (on DynamoDB through the
//! one-request-at-a-time proxy, and in memory), and the books after all of it.

mod top_ups_api;

use std::sync::Arc;

use serde_json::Value;
use shared::config::{Secret, StripeApi};
use shared::http::routes::{
    cash_top_ups_routes, complete_purchase_routes, start_purchase_routes, stripe_webhook_routes,
};
use shared::store::MemoryStore;
use shared::store::cash::GetBalance;
use shared::store::topups::TopUpStore;
use shared::topups::TopUpStatus;
use shared::topups::stripe::StripeClient;
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
    let created_at = shared::timestamp::Timestamp::parse(top_up["createdAt"].as_str().unwrap());
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
    logs.assert_free_of(&[WEBHOOK_SECRET, SECRET_KEY, "1500"]);
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

#[tokio::test]
async fn every_signature_attack_is_a_400_and_changes_nothing() {
    let api = api(MemoryStore::default()).await;
    let id = pending(&api, "key-1", 900).await;
    let body = api.event("evt_1", COMPLETED, &id, "paid").await;
    let t = now();
    let good = python_signature(&body, WEBHOOK_SECRET, t);
    let v1 = good.split_once(",v1=").unwrap().1.to_owned();
    let tampered = body.replace("\"amount_total\":900", "\"amount_total\":901");
    assert_ne!(tampered, body);
    let attacks: Vec<(&str, String, Option<String>)> = vec![
        (
            "wrong secret",
            body.clone(),
            Some(python_signature(&body, "whsec_other", t)),
        ),
        ("tampered body", tampered.clone(), Some(good.clone())),
        ("one byte more", format!("{body} "), Some(good.clone())),
        (
            "old t",
            body.clone(),
            Some(python_signature(&body, WEBHOOK_SECRET, t - 400)),
        ),
        (
            "future t",
            body.clone(),
            Some(python_signature(&body, WEBHOOK_SECRET, t + 400)),
        ),
        (
            "t changed",
            body.clone(),
            Some(format!("t={},v1={v1}", t - 1)),
        ),
        ("missing v1", body.clone(), Some(format!("t={t}"))),
        ("only v0", body.clone(), Some(format!("t={t},v0={v1}"))),
        ("no t", body.clone(), Some(format!("v1={v1}"))),
        ("no header", body.clone(), None),
        ("empty header", body.clone(), Some(String::new())),
        (
            "upper-case scheme",
            body.clone(),
            Some(format!("T={t},V1={v1}")),
        ),
    ];
    for (attack, body, signature) in attacks {
        let answer = api.deliver_signed(&body, signature.as_deref()).await;
        assert_eq!(
            (answer.status, answer.code()),
            (400, "invalid_signature"),
            "{attack}"
        );
    }
    assert_eq!(api.status(&id).await, TopUpStatus::Pending);
    assert_eq!(api.balance("fan").await, 0);
    // Rotation: any matching v1 passes, beside another secret's and a v0.
    let rotated = format!(
        "t={t},v1={},v0=abc,{}",
        python_signature(&body, "whsec_old", t)
            .split_once(",v1=")
            .unwrap()
            .1,
        good.split_once(',').unwrap().1
    );
    assert_eq!(api.deliver_signed(&body, Some(&rotated)).await.status, 200);
    assert_eq!(api.balance("fan").await, 900);
}

#[tokio::test]
async fn events_in_any_order_never_undo_a_completion_and_never_credit_twice() {
    let api = api(MemoryStore::default()).await;
    // expired, then the payment: the payment wins (the money was taken).
    let a = pending(&api, "a", 100).await;
    api.deliver(&api.event("e1", EXPIRED, &a, "unpaid").await)
        .await;
    assert_eq!(api.status(&a).await, TopUpStatus::Expired);
    api.deliver(&api.event("e2", COMPLETED, &a, "paid").await)
        .await;
    assert_eq!(api.status(&a).await, TopUpStatus::Completed);
    // completed, then expired and failed late: it stays completed.
    let b = pending(&api, "b", 200).await;
    api.deliver(&api.event("e3", COMPLETED, &b, "paid").await)
        .await;
    api.deliver(&api.event("e4", EXPIRED, &b, "unpaid").await)
        .await;
    api.deliver(&api.event("e5", FAILED, &b, "unpaid").await)
        .await;
    assert_eq!(api.status(&b).await, TopUpStatus::Completed);
    // an async payment: completed unpaid waits; then it fails.
    let c = pending(&api, "c", 400).await;
    api.deliver(&api.event("e6", COMPLETED, &c, "unpaid").await)
        .await;
    assert_eq!(api.status(&c).await, TopUpStatus::Pending);
    api.deliver(&api.event("e7", FAILED, &c, "unpaid").await)
        .await;
    assert_eq!(api.status(&c).await, TopUpStatus::Failed);
    // an async payment that succeeds, delivered twice, and its `completed unpaid` after it.
    let d = pending(&api, "d", 800).await;
    for kind in [SUCCEEDED, SUCCEEDED] {
        api.deliver(&api.event("e8", kind, &d, "paid").await).await;
    }
    api.deliver(&api.event("e9", COMPLETED, &d, "unpaid").await)
        .await;
    assert_eq!(api.status(&d).await, TopUpStatus::Completed);
    // Never paid: expired.
    let e = pending(&api, "e", 1600).await;
    api.deliver(&api.event("e10", EXPIRED, &e, "unpaid").await)
        .await;
    assert_eq!(api.status(&e).await, TopUpStatus::Expired);
    assert_eq!(api.balance("fan").await, 100 + 200 + 800);
}

#[tokio::test(flavor = "current_thread")]
async fn a_session_that_does_not_match_its_top_up_credits_nothing_and_is_logged_and_counted() {
    let (logs, _guard) = testkit::logs::capture();
    let api = api(MemoryStore::default()).await;
    let id = pending(&api, "key-1", 500).await;
    let session = api.session(&id).await;
    for (event_id, session_id, amount, currency) in [
        ("evt_amount", session.as_str(), 499, "usd"),
        ("evt_currency", session.as_str(), 500, "eur"),
        ("evt_session", "cs_test_other", 500, "usd"),
    ] {
        let body = session_event(
            event_id,
            COMPLETED,
            session_id,
            id.as_str(),
            amount,
            currency,
            "paid",
        );
        // Counted, for the alarm: a fan paid and was not credited.
        let (answer, recorded) = shared::metrics::record(api.deliver(&body)).await;
        assert_eq!(answer.status, 200);
        assert_eq!(
            recorded.value(shared::metrics::Metric::TopUpsUnmatched),
            Some(1.0),
            "{event_id}"
        );
        assert!(
            logs.text()
                .lines()
                .any(|l| l.contains("\"level\":\"ERROR\"") && l.contains(event_id)),
            "{event_id}: {}",
            logs.text()
        );
    }
    assert_eq!(api.status(&id).await, TopUpStatus::Pending);
    assert_eq!(api.balance("fan").await, 0);
    // Unknown top-ups, other types and other objects: 200, ignored.
    for body in [
        session_event(
            "evt_u",
            COMPLETED,
            "cs_x",
            "unknown-top-up",
            500,
            "usd",
            "paid",
        ),
        session_event("evt_v", COMPLETED, "cs_x", "not an id!", 500, "usd", "paid"),
        r#"{"id":"evt_w","type":"payment_intent.succeeded","data":{"object":{"id":"pi_1"}}}"#
            .to_owned(),
        r#"{"id":"evt_x","type":"checkout.session.completed","data":{"object":{"no":"id"}}}"#
            .to_owned(),
    ] {
        assert_eq!(api.deliver(&body).await.status, 200, "{body}");
    }
    assert_eq!(api.balance("fan").await, 0);
}

/// Eight deliveries of one paid event at once credit once.
async fn eight_concurrent_deliveries_credit_once<S>(store: S)
where
    S: TopUpStore + GetBalance + Clone + 'static,
{
    let api = Arc::new(api(store).await);
    let id = pending(&api, "key-1", 4321).await;
    let body = api.event("evt_1", COMPLETED, &id, "paid").await;
    let signature = python_signature(&body, WEBHOOK_SECRET, now());
    let deliveries: Vec<_> = (0..8)
        .map(|_| {
            let (api, body, signature) = (api.clone(), body.clone(), signature.clone());
            tokio::spawn(async move { api.deliver_signed(&body, Some(&signature)).await.status })
        })
        .collect();
    for delivery in deliveries {
        assert_eq!(delivery.await.unwrap(), 200);
    }
    assert_eq!(api.balance("fan").await, 4321);
    assert_eq!(api.status(&id).await, TopUpStatus::Completed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_concurrent_deliveries_credit_once_in_memory() {
    eight_concurrent_deliveries_credit_once(MemoryStore::default()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_concurrent_deliveries_credit_once_on_dynamodb() {
    let (_one_at_a_time, store) = testkit::moto::atomic_table().await;
    eight_concurrent_deliveries_credit_once(store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dynamodb_failure_is_a_503_so_that_stripe_retries() {
    let store = testkit::moto::shared_table().await;
    let proxy = testkit::fault_proxy::FaultProxy::start(testkit::moto::shared_endpoint()).await;
    let through = shared::store::DynamoStore::new(
        testkit::moto::client_for(&proxy.endpoint()).await,
        store.table(),
    );
    let api = api(through).await;
    let id = pending(&api, "key-1", 600).await;
    let body = api.event("evt_1", COMPLETED, &id, "paid").await;
    proxy.set(testkit::fault_proxy::Fault::Error(
        500,
        "InternalServerError",
    ));
    let failed = api.deliver(&body).await;
    assert_eq!((failed.status, failed.code()), (503, "service_unavailable"));
    proxy.set(testkit::fault_proxy::Fault::None);
    assert_eq!(api.balance("fan").await, 0);
    // Stripe's retry credits it.
    assert_eq!(api.deliver(&body).await.status, 200);
    assert_eq!(api.balance("fan").await, 600);
}

/// After top-ups, purchases paid from them and every kind of event: the completed top-ups
/// minus the debits are the balance.
#[tokio::test]
async fn the_ledger_adds_up_to_the_balance_after_all_of_it() {
    use shared::store::cash::ListDebits;
    let packs = [testkit::packs::active("p", 10)];
    let store = MemoryStore::with_packs(&packs);
    let api = api(store.clone()).await;
    let mut credited = 0;
    for (key, amount, kind, paid) in [
        ("a", 1000, COMPLETED, "paid"),
        ("b", 2000, EXPIRED, "unpaid"),
        ("c", 300, SUCCEEDED, "paid"),
        ("d", 400, FAILED, "unpaid"),
    ] {
        let id = pending(&api, key, amount).await;
        let event = api.event(&format!("evt_{key}"), kind, &id, paid).await;
        for _ in 0..2 {
            api.deliver(&event).await;
        }
        if paid == "paid" {
            credited += amount;
        }
    }
    // Spend some of it on packs, through the purchase handlers.
    let purchase_state = Arc::new(shared::handlers::purchase_json::PurchaseState {
        store: store.clone(),
        verifier: testkit::tokens::verifier(),
        hold: std::time::Duration::from_secs(600),
        max_body_bytes: 65536,
        policy: shared::purchases::HoldPolicy::default(),
        human: None,
    });
    let fan = token("fan", None);
    let mut purchases = 0;
    for key in ["buy-1", "buy-2"] {
        let start = testkit::purchases::start_event("p", Some(&fan), Some(key), None);
        let started =
            Answer::of(call(start_purchase_routes(), &purchase_state, start.request()).await);
        let purchase = started.body["purchase"]["id"].as_str().unwrap().to_owned();
        let pay = testkit::purchases::complete_event("p", &purchase, &fan);
        let paid =
            Answer::of(call(complete_purchase_routes(), &purchase_state, pay.request()).await);
        assert_eq!(paid.status, 200, "{}", paid.body);
        purchases += 1;
    }
    let debits: u64 = store
        .list_debits(&testkit::ids::user("fan"))
        .await
        .unwrap()
        .iter()
        .map(|d| d.amount.amount)
        .sum();
    assert_eq!(purchases, 2);
    assert!(debits > 0);
    assert_eq!(api.balance("fan").await, credited - debits);
}
