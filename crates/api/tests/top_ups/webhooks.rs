//! Stripe's webhook: signature attacks, events in any order, mismatched sessions, concurrent
//! deliveries and the books after all of it.

use super::*;

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
        let (answer, recorded) = store::metrics::record(api.deliver(&body)).await;
        assert_eq!(answer.status, 200);
        assert_eq!(
            recorded.value(store::metrics::Metric::TopUpsUnmatched),
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
    S: TopUpStore + store::products::ProductStore + GetBalance + Clone + 'static,
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
    let (proxy, through) = behind_fault_proxy().await;
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
    let purchase_state = Arc::new(api::state::PurchaseState {
        store: store.clone(),
        verifier: testkit::tokens::verifier(),
        hold: std::time::Duration::from_secs(600),
        max_body_bytes: 65536,
        policy: domain::purchases::HoldPolicy::default(),
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
    let debits = testkit::purchases::debited(&store, "fan").await;
    assert_eq!(purchases, 2);
    assert!(debits > 0);
    assert_eq!(api.balance("fan").await, credited - debits);
}
