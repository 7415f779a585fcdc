//! The guards around card top-ups, on the handlers against the Stripe stub: a fan's pending
//! top-ups are capped (409, nothing sent to Stripe) and a settled one frees its place; a paid
//! session that cannot be credited (it does not match its top-up, or the ledger refuses the
//! credit) is answered 200, credits nothing, and is counted for the alarm; and every call to
//! Stripe pins its API version and turns Adaptive Pricing off (the stub refuses it otherwise).

use crate::top_ups_api;

use domain::cash::parse_credit;
use domain::timestamp::Timestamp;
use domain::topups::pending::MAX_PENDING_TOP_UPS;
use domain::topups::{TopUpStatus, credit_reference};
use store::MemoryStore;
use store::cash::{CreditCash, GetBalance};
use store::metrics::{self, Metric, Recorded};
use store::topups::{GetTopUp, TopUpStore};
use testkit::stripe::session_event;
use top_ups_api::*;

const COMPLETED: &str = "checkout.session.completed";
const EXPIRED: &str = "checkout.session.expired";
const FAILED: &str = "checkout.session.async_payment_failed";

/// A fan at the cap is refused with 409 before Stripe is called; a repeat of one of their keys
/// is still its top-up; a payment, a failure and an expiry each free a place.
async fn a_fan_holds_at_most_the_cap_of_pending_top_ups<S>(store: S)
where
    S: TopUpStore + store::products::ProductStore + GetBalance + Clone + 'static,
{
    let api = api(store).await;
    let mut ids = Vec::new();
    for k in 0..MAX_PENDING_TOP_UPS {
        ids.push(pending(&api, &format!("key-{k}"), 500).await);
    }
    let sent = api.stub.received().len();
    assert_eq!(sent, MAX_PENDING_TOP_UPS as usize);
    let refused = api.create("fan", "one-more", 500).await;
    assert_eq!(
        (refused.status, refused.code()),
        (409, "too_many_pending_top_ups"),
        "{}",
        refused.body
    );
    assert_eq!(api.stub.received().len(), sent, "nothing sent to Stripe");
    let replay = api.create("fan", "key-0", 500).await;
    assert_eq!(replay.status, 201, "{}", replay.body);
    assert_eq!(replay.header("idempotent-replayed"), Some("true"));
    assert_eq!(
        api.create("someone-else", "one-more", 500).await.status,
        201
    );

    // Each way a top-up stops being pending frees a place, for one more create each.
    for (event, (kind, paid)) in [(COMPLETED, "paid"), (FAILED, "unpaid"), (EXPIRED, "unpaid")]
        .into_iter()
        .enumerate()
    {
        let id = &ids[event];
        let body = api.event(&format!("evt_{event}"), kind, id, paid).await;
        assert_eq!(api.deliver(&body).await.status, 200);
        assert_ne!(api.status(id).await, TopUpStatus::Pending);
        let freed = api.create("fan", &format!("after-{kind}"), 500).await;
        assert_eq!(freed.status, 201, "after {kind}: {}", freed.body);
        let full = api.create("fan", &format!("again-after-{kind}"), 500).await;
        assert_eq!(
            (full.status, full.code()),
            (409, "too_many_pending_top_ups")
        );
    }
}

#[tokio::test]
async fn a_fan_holds_at_most_the_cap_of_pending_top_ups_in_memory() {
    a_fan_holds_at_most_the_cap_of_pending_top_ups(MemoryStore::default()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fan_holds_at_most_the_cap_of_pending_top_ups_on_dynamodb() {
    let (_one_at_a_time, store) = testkit::moto::atomic_table().await;
    a_fan_holds_at_most_the_cap_of_pending_top_ups(store).await;
}

/// Delivers `body` in a metrics scope: its answer's status and what it counted.
async fn deliver_counted<S: TopUpStore + store::products::ProductStore + GetBalance + 'static>(
    api: &Api<S>,
    body: &str,
) -> (u16, Recorded) {
    let (answer, recorded) = metrics::record(api.deliver(body)).await;
    (answer.status, recorded)
}

/// (A paid session that does not match is counted: top_ups.rs's
/// `a_session_that_does_not_match_its_top_up_credits_nothing_and_is_logged_and_counted`.)
#[tokio::test(flavor = "current_thread")]
async fn an_unpaid_event_of_another_session_is_not_counted_and_the_right_one_credits() {
    let api = api(MemoryStore::default()).await;
    let id = pending(&api, "key-1", 500).await;
    let body = session_event(
        "evt_exp",
        EXPIRED,
        "cs_test_other",
        id.as_str(),
        500,
        "usd",
        "unpaid",
    );
    let (status, recorded) = deliver_counted(&api, &body).await;
    assert_eq!(
        (status, recorded.value(Metric::TopUpsUnmatched)),
        (200, None)
    );
    assert_eq!(api.status(&id).await, TopUpStatus::Pending);
    assert_eq!(api.balance("fan").await, 0);
    let paid = api.event("evt_ok", COMPLETED, &id, "paid").await;
    let (status, recorded) = deliver_counted(&api, &paid).await;
    assert_eq!(
        (status, recorded.value(Metric::TopUpsCredited)),
        (200, Some(1.0))
    );
    assert_eq!(api.balance("fan").await, 500);
}

#[tokio::test(flavor = "current_thread")]
async fn a_paid_top_up_the_ledger_refuses_is_200_counted_and_credits_nothing() {
    let store = MemoryStore::default();
    let api = api(store.clone()).await;
    // Its reference taken by another credit (as an earlier release's cash-credit could).
    let id = pending(&api, "key-1", 500).await;
    let taken = domain::cash::Credit {
        reference: credit_reference(&id),
        ..parse_credit("fan", "1", "USD", "any").unwrap()
    };
    store.credit_cash(&taken, Timestamp::now()).await.unwrap();
    let body = api.event("evt_reused", COMPLETED, &id, "paid").await;
    let (status, recorded) = deliver_counted(&api, &body).await;
    assert_eq!(status, 200);
    assert_eq!(recorded.value(Metric::TopUpsUncredited), Some(1.0));
    assert_eq!(api.status(&id).await, TopUpStatus::Pending);
    // A balance at its largest (`u64::MAX`).
    let full = pending(&api, "key-2", 500).await;
    let top = domain::cash::Credit {
        amount: domain::cash::Money {
            amount: u64::MAX - api.balance("fan").await,
            currency: "USD".into(),
        },
        ..parse_credit("fan", "1", "USD", "grant-max").unwrap()
    };
    store.credit_cash(&top, Timestamp::now()).await.unwrap();
    let before = api.balance("fan").await;
    let body = api.event("evt_full", COMPLETED, &full, "paid").await;
    let (status, recorded) = deliver_counted(&api, &body).await;
    assert_eq!(
        (status, recorded.value(Metric::TopUpsUncredited)),
        (200, Some(1.0))
    );
    assert_eq!(api.balance("fan").await, before);
    assert_eq!(api.status(&full).await, TopUpStatus::Pending);
}

#[tokio::test]
async fn every_stripe_call_pins_the_api_version_and_turns_adaptive_pricing_off() {
    let api = api(MemoryStore::default()).await;
    let created = api.create("fan", "key-1", 2500).await;
    assert_eq!(created.status, 201, "{}", created.body);
    let request = &api.stub.received()[0];
    assert_eq!(
        request.header("stripe-version"),
        Some(clients::stripe::API_VERSION)
    );
    assert_eq!(clients::stripe::API_VERSION, testkit::stripe::API_VERSION);
    assert_eq!(request.field("adaptive_pricing[enabled]"), Some("false"));
    let top_up = api
        .top_ups
        .store
        .get_top_up(&created.top_up_id())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        request.field("expires_at"),
        Some(top_up.expires_at().unix_seconds().to_string().as_str())
    );
}
