//! The events of purchases and Cash on both stores (DynamoStore on moto through the
//! one-request-at-a-time proxy, and MemoryStore): each operation writes exactly its events in
//! its own write, a repeat or a refusal writes none, racing changes of one fan number theirs
//! with no gap (`of_fan` checks), and a write DynamoDB fails leaves neither change nor event.

use std::sync::Arc;

use domain::cash::parse_credit;
use domain::ids::QuestId;
use domain::packs::Pack;
use domain::purchases::{Purchase, StartRefusal};
use domain::quests::{Claim, Quest, Reward, grant};
use domain::timestamp::Timestamp;
use domain::topups::{Checkout, TopUp, TopUpStatus, top_up_id};
use serde_json::Value;
use store::Store;
use store::purchases::{CompleteError, StartError, Started};
use store::topups::CompletedTopUp;
use testkit::at_once;
use testkit::event_log::{of_fan, of_pack, types};
use testkit::ids::{pack, user};
use testkit::packs::active;
use testkit::purchases::start_request;
use testkit::quests::quest;

testkit::store_contract!(
    arc:
    a_purchase_writes_reserved_completed_debited_opened_and_a_repeat_nothing,
    a_released_hold_writes_purchase_expired_once,
    a_refused_start_or_payment_writes_no_event,
    eight_starts_of_one_fan_write_eight_events_without_gap,
    eight_completions_of_one_purchase_write_one_payment,
    a_credit_writes_cash_credited_once_per_reference,
    a_payment_webhook_delivered_twice_writes_its_events_once,
    a_top_up_closed_unpaid_writes_topup_failed_once,
    quest_claims_write_their_reward_and_a_repeat_nothing,
    a_pack_that_sells_out_writes_pack_sold_out_once,
);

const FAN: &str = "fan";

async fn pack_of(store: &impl Store, id: &str, units: u64) -> Pack {
    let mut pack = active(id, 60);
    (pack.total_supply, pack.remaining, pack.supply_shards) = (units, units, Some(1));
    testkit::packs::save(store, &pack).await;
    pack
}

async fn credit(store: &impl Store, user_id: &str, amount: u64, reference: &str) {
    testkit::purchases::credit(store, user_id, amount, "USD", reference).await;
}

async fn reserve(store: &impl Store, pack_id: &str, key: &str, hold_seconds: i64) -> Purchase {
    let request = start_request(FAN, pack_id, key, Timestamp::now(), hold_seconds);
    match store.start_purchase(&request).await {
        Ok(Started::Created(purchase)) => purchase,
        other => panic!("a start of {pack_id}: {other:?}"),
    }
}

async fn complete(store: &impl Store, purchase: &Purchase) -> Result<(), CompleteError> {
    let Purchase {
        user_id,
        pack_id,
        id,
        ..
    } = purchase;
    let paying = store.complete_purchase(user_id, pack_id, id, Timestamp::now());
    paying.await.map(drop)
}

async fn fan_events(store: &impl Store) -> Vec<Value> {
    of_fan(store, &user(FAN)).await
}

async fn a_purchase_writes_reserved_completed_debited_opened_and_a_repeat_nothing(
    store: Arc<impl Store>,
) {
    let store = &*store;
    pack_of(store, "p", 5).await;
    credit(store, FAN, 1000, "gift-1").await;
    let purchase = reserve(store, "p", "k1", 600).await;
    // The same key again: the same purchase, no second event.
    let request = start_request(FAN, "p", "k1", Timestamp::now(), 600);
    assert!(matches!(
        store.start_purchase(&request).await,
        Ok(Started::Repeated(_))
    ));
    complete(store, &purchase).await.unwrap();
    complete(store, &purchase).await.unwrap();
    let (fan, pack_id, id) = (user(FAN), pack("p"), purchase.id.clone());
    for _ in 0..2 {
        let opened = store.open_purchase(&fan, &pack_id, &id, Timestamp::now());
        opened.await.unwrap();
    }
    let events = fan_events(store).await;
    assert_eq!(
        types(&events),
        [
            "cash.credited",
            "purchase.reserved",
            "purchase.completed",
            "cash.debited",
            "pack.opened"
        ]
    );
    let (reserved, completed, debited, opened) = (
        &events[1]["data"],
        &events[2]["data"],
        &events[3]["data"],
        &events[4]["data"],
    );
    assert_eq!(reserved["purchaseId"], id.as_str());
    assert_eq!(reserved["packId"], "p");
    assert_eq!(reserved["price"]["amount"], 499);
    assert_eq!(
        reserved["expiresAt"],
        serde_json::to_value(purchase.expires_at).unwrap()
    );
    assert_eq!(completed["purchaseId"], id.as_str());
    assert_eq!(completed["price"]["amount"], 499);
    assert_eq!(debited["amount"]["amount"], 499);
    assert_eq!(debited["purchaseId"], id.as_str());
    assert_eq!(opened["purchaseId"], id.as_str());
    assert_eq!(opened["items"], 5);
    // The payment's two events are one write: one instant.
    assert_eq!(events[2]["occurredAt"], events[3]["occurredAt"]);
}

async fn a_released_hold_writes_purchase_expired_once(store: Arc<impl Store + 'static>) {
    pack_of(&*store, "p", 5).await;
    let purchase = reserve(&*store, "p", "k1", 0).await;
    // Payments too late and sweeps race to release it: one release, one event.
    let released = at_once(8, |n| {
        let (store, purchase) = (store.clone(), purchase.clone());
        async move {
            if n < 2 {
                let swept = store.release_holds(None, Timestamp::now(), 10).await;
                swept.unwrap().released
            } else {
                assert!(complete(&*store, &purchase).await.is_err());
                0
            }
        }
    })
    .await;
    assert!(released.iter().sum::<u64>() <= 1, "{released:?}");
    let store = &*store;
    assert!(
        store
            .release_holds(None, Timestamp::now(), 10)
            .await
            .unwrap()
            .released
            == 0
    );
    let events = fan_events(store).await;
    assert_eq!(types(&events), ["purchase.reserved", "purchase.expired"]);
    assert_eq!(events[1]["data"]["purchaseId"], purchase.id.as_str());
    assert_eq!(events[1]["data"]["packId"], "p");
}

async fn a_refused_start_or_payment_writes_no_event(store: Arc<impl Store>) {
    let store = &*store;
    pack_of(store, "p", 1).await;
    let purchase = reserve(store, "p", "k1", 600).await;
    // No balance: the payment is refused.
    assert!(complete(store, &purchase).await.is_err());
    // Sold out: another fan's start is refused.
    let other = start_request("other", "p", "k1", Timestamp::now(), 600);
    assert_eq!(
        store.start_purchase(&other).await.unwrap_err(),
        StartError::Refused(StartRefusal::SoldOut)
    );
    assert_eq!(types(&fan_events(store).await), ["purchase.reserved"]);
    assert!(of_fan(store, &user("other")).await.is_empty());
}

async fn eight_starts_of_one_fan_write_eight_events_without_gap(store: Arc<impl Store + 'static>) {
    pack_of(&*store, "p", 20).await;
    let started = at_once(8, |n| {
        let store = store.clone();
        async move {
            let request = start_request(FAN, "p", &format!("k{n}"), Timestamp::now(), 600);
            store.start_purchase(&request).await
        }
    })
    .await;
    assert!(started.iter().all(|s| matches!(s, Ok(Started::Created(_)))));
    // `of_fan` checks 1..=8, no gap and no twin.
    let events = fan_events(&*store).await;
    let mut purchases: Vec<&str> = events
        .iter()
        .map(|event| event["data"]["purchaseId"].as_str().unwrap())
        .collect();
    purchases.sort_unstable();
    purchases.dedup();
    assert_eq!(purchases.len(), 8, "one purchase.reserved per start");
}

async fn eight_completions_of_one_purchase_write_one_payment(store: Arc<impl Store + 'static>) {
    pack_of(&*store, "p", 5).await;
    credit(&*store, FAN, 1000, "gift-1").await;
    let purchase = reserve(&*store, "p", "k1", 600).await;
    let paid = at_once(8, |_| {
        let (store, purchase) = (store.clone(), purchase.clone());
        async move { complete(&*store, &purchase).await }
    })
    .await;
    assert!(paid.iter().all(Result::is_ok), "{paid:?}");
    assert_eq!(
        types(&fan_events(&*store).await),
        [
            "cash.credited",
            "purchase.reserved",
            "purchase.completed",
            "cash.debited"
        ]
    );
}

async fn a_credit_writes_cash_credited_once_per_reference(store: Arc<impl Store>) {
    let store = &*store;
    credit(store, FAN, 700, "r1").await;
    credit(store, FAN, 700, "r1").await;
    // The reference reused for another amount: refused, no event.
    let reused = parse_credit(FAN, "1", "USD", "r1").unwrap();
    assert!(store.credit_cash(&reused, Timestamp::now()).await.is_err());
    let events = fan_events(store).await;
    assert_eq!(types(&events), ["cash.credited"]);
    assert_eq!(events[0]["data"]["amount"]["amount"], 700);
    assert_eq!(events[0]["data"]["amount"]["currency"], "USD");
    assert_eq!(events[0]["data"]["reference"], "r1");
}

/// A pending top-up of the fan's with a Checkout Session stored.
async fn top_up(store: &impl Store, key: &str, session: &str) -> TopUp {
    let fan = user(FAN);
    let amount = domain::cash::Money {
        amount: 500,
        currency: "USD".into(),
    };
    let top_up = TopUp::pending(top_up_id(&fan, key), fan, amount, Timestamp::now());
    store.create_top_up(&top_up).await.unwrap();
    let checkout = Checkout {
        session_id: session.into(),
        url: format!("https://checkout.stripe.com/c/pay/{session}"),
    };
    store.set_checkout(&top_up.id, &checkout).await.unwrap()
}

async fn a_payment_webhook_delivered_twice_writes_its_events_once(
    store: Arc<impl Store + 'static>,
) {
    let paid = top_up(&*store, "k1", "cs_1").await;
    let completed = at_once(2, |_| {
        let (store, paid) = (store.clone(), paid.clone());
        async move { store.complete_top_up(&paid, Timestamp::now()).await }
    })
    .await;
    let credited = completed
        .iter()
        .filter(|c| matches!(c, Ok(CompletedTopUp::Credited { .. })))
        .count();
    assert_eq!(credited, 1, "{completed:?}");
    // A late failure of the same session changes nothing.
    let late = store.close_top_up(&paid, "cs_1", TopUpStatus::Failed, Timestamp::now());
    assert!(!late.await.unwrap());
    let events = fan_events(&*store).await;
    assert_eq!(types(&events), ["topup.completed", "cash.credited"]);
    assert_eq!(events[0]["data"]["topUpId"], paid.id.as_str());
    assert_eq!(events[0]["data"]["amount"]["amount"], 500);
    assert_eq!(
        events[1]["data"]["reference"],
        domain::topups::credit_reference(&paid.id)
    );
}

async fn a_top_up_closed_unpaid_writes_topup_failed_once(store: Arc<impl Store>) {
    let store = &*store;
    let failed = top_up(store, "k1", "cs_1").await;
    for _ in 0..2 {
        store
            .close_top_up(&failed, "cs_1", TopUpStatus::Failed, Timestamp::now())
            .await
            .unwrap();
    }
    // Another session's event: refused, no event.
    let other = store.close_top_up(&failed, "cs_2", TopUpStatus::Expired, Timestamp::now());
    assert!(!other.await.unwrap());
    let events = fan_events(store).await;
    assert_eq!(types(&events), ["topup.failed"]);
    assert_eq!(events[0]["data"]["topUpId"], failed.id.as_str());
    assert_eq!(events[0]["data"]["status"], "failed");
    assert_eq!(events[0]["data"]["amount"]["amount"], 500);
}

async fn claim(store: &impl Store, quest: &Quest, key: &str) {
    let grant = grant(quest, &user(FAN));
    let claim = Claim::new(quest, &user(FAN), key, &grant, Timestamp::now());
    store.claim_quest(&claim, &grant).await.unwrap();
}

async fn quest_claims_write_their_reward_and_a_repeat_nothing(store: Arc<impl Store>) {
    let store = &*store;
    pack_of(store, "p", 3).await;
    let cash = quest(
        "cash",
        Reward::Cash {
            amount: 250,
            currency: "USD".into(),
        },
    );
    let pack_reward = quest("pack", Reward::Pack { pack_id: pack("p") });
    for key in ["k1", "k1", "k2"] {
        claim(store, &cash, key).await;
    }
    claim(store, &pack_reward, "k3").await;
    claim(store, &pack_reward, "k3").await;
    let events = fan_events(store).await;
    assert_eq!(
        types(&events),
        [
            "quest.reward_claimed",
            "cash.credited",
            "quest.reward_claimed"
        ]
    );
    assert_eq!(events[0]["data"]["questId"], "cash");
    assert_eq!(events[0]["data"]["reward"]["type"], "cash");
    assert_eq!(events[0]["data"]["reward"]["amount"], 250);
    assert!(events[0]["data"].get("purchaseId").is_none());
    assert_eq!(events[1]["data"]["amount"]["amount"], 250);
    let purchase_id =
        domain::quests::reward_purchase_id(&QuestId::parse("pack").unwrap(), &user(FAN));
    assert_eq!(events[2]["data"]["reward"]["type"], "pack");
    assert_eq!(events[2]["data"]["reward"]["packId"], "p");
    assert_eq!(events[2]["data"]["purchaseId"], purchase_id.as_str());
}

async fn a_pack_that_sells_out_writes_pack_sold_out_once(store: Arc<impl Store>) {
    let store = &*store;
    pack_of(store, "p", 2).await;
    reserve(store, "p", "k1", 600).await;
    assert!(
        of_pack(store, &pack("p")).await.is_empty(),
        "a unit is left"
    );
    reserve(store, "p", "k2", 600).await;
    // A start refused sold out writes it where the store has not already (docs/events.md);
    // another refusal and the sweep's refresh find it written.
    for n in 0..2 {
        let request = start_request(&format!("late-{n}"), "p", "k", Timestamp::now(), 600);
        assert!(store.start_purchase(&request).await.is_err());
    }
    store.refresh_remaining().await.unwrap();
    let events = of_pack(store, &pack("p")).await;
    assert_eq!(types(&events), ["pack.sold_out"]);
    assert_eq!(events[0]["data"]["packId"], "p");
    assert_eq!(events[0]["subject"]["kind"], "pack");
}

/// DynamoDB failing the change's transaction (an internal error, every retry): the operation
/// fails, and neither the change nor its event is written.
#[tokio::test]
async fn a_failed_write_leaves_neither_change_nor_event() {
    use store::purchases::{GetPurchase, StartPurchase};
    use testkit::fault_proxy::Fault;
    let (proxy, store) = testkit::moto::atomic_table().await;
    pack_of(&store, "p", 5).await;
    credit(&store, FAN, 1000, "gift-1").await;
    let purchase = reserve(&store, "p", "k1", 600).await;
    let failing = Fault::Error(500, "InternalServerError");
    proxy.set_for_operation(failing.clone(), "TransactWriteItems", 100);
    let request = start_request(FAN, "p", "k2", Timestamp::now(), 600);
    assert!(store.start_purchase(&request).await.is_err());
    assert!(complete(&store, &purchase).await.is_err());
    proxy.set(Fault::None);
    let fan = user(FAN);
    let unchanged = store.get_purchase(&fan, &purchase.id).await.unwrap();
    assert_eq!(unchanged.unwrap().status, purchase.status);
    let never = store
        .get_purchase(&fan, &request.purchase_id)
        .await
        .unwrap();
    assert_eq!(never, None);
    assert_eq!(testkit::packs::remaining(&store, "p").await, 4);
    assert_eq!(
        types(&fan_events(&store).await),
        ["cash.credited", "purchase.reserved"]
    );
}
