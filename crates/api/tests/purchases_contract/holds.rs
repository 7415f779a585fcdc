//! Holds that run out: payment refused after expiry, the sweep, releases racing payments, units
//! going back to their shares.

use super::*;

pub(crate) async fn an_expired_hold_cannot_be_paid_and_its_unit_comes_back_once(
    store: Arc<impl Store>,
) {
    let pack = seeded(&*store, active("p", 7200)).await;
    let purchase = created(
        store
            .start_purchase(&start_at("u", "p", "k", None, at(-1200)))
            .await,
    );
    credit(&*store, "u", 10_000, "USD").await;
    assert_eq!(remaining(&*store, "p").await, 99);
    for _ in 0..2 {
        assert_eq!(
            store
                .complete_purchase(
                    &ids::user("u"),
                    &ids::pack("p"),
                    &purchase.id,
                    Timestamp::now()
                )
                .await,
            Err(CompleteError::Refused(CompleteRefusal::Expired))
        );
        assert_eq!(remaining(&*store, "p").await, 100, "back exactly once");
    }
    let credited = HashMap::from([("u".to_owned(), 10_000)]);
    assert_books_balance(&*store, &pack, 100, &[("u".into(), purchase.id)], &credited).await;
}

pub(crate) async fn the_sweep_releases_expired_holds_and_frees_the_buyers_slots(
    store: Arc<impl Store>,
) {
    let mut limited = active("limited", 7200);
    limited.max_per_user = Some(1);
    seeded(&*store, limited).await;
    let other = seeded(&*store, active("other", 7200)).await;
    let dead = created(
        store
            .start_purchase(&start_at("u", "limited", "a", None, at(-1200)))
            .await,
    );
    created(
        store
            .start_purchase(&start_at("v", "other", "a", None, at(-1200)))
            .await,
    );
    let live = created(store.start_purchase(&start("w", "other", "b")).await);
    let first = store
        .release_holds(None, Timestamp::now(), 1)
        .await
        .unwrap();
    assert_eq!((first.released, first.more), (1, true));
    let second = store
        .release_holds(None, Timestamp::now(), 10)
        .await
        .unwrap();
    assert_eq!(
        second,
        Released {
            released: 1,
            lost_races: 0,
            skipped: 0,
            more: false
        }
    );
    assert_eq!(
        store
            .release_holds(None, Timestamp::now(), 10)
            .await
            .unwrap(),
        Released::default(),
        "safe to run again"
    );
    assert_eq!(remaining(&*store, "limited").await, 100);
    assert_eq!(remaining(&*store, "other").await, other.remaining - 1);
    assert_eq!(
        store
            .get_purchase(&ids::user("w"), &live.id)
            .await
            .unwrap()
            .unwrap()
            .status,
        PurchaseStatus::Reserved
    );
    // The limit's slot is free again, and the nonce moves on.
    let again = created(store.start_purchase(&start("u", "limited", "b")).await);
    assert_eq!(again.nonce, 2);
    assert_eq!(
        store
            .get_purchase(&ids::user("u"), &dead.id)
            .await
            .unwrap()
            .unwrap()
            .status,
        PurchaseStatus::Expired
    );
}

pub(crate) async fn a_completion_racing_the_sweep_at_expiry_wins_or_loses_whole(
    store: Arc<impl Store + 'static>,
) {
    let pack = seeded(&*store, active("p", 7200)).await;
    credit(&*store, "fan", 100_000, "USD").await;
    let mut purchases = Vec::new();
    let (mut paid, mut released) = (0, 0);
    for round in 0..10 {
        // A hold that ends exactly at `expiry`: the completion comes a nanosecond before it,
        // the sweep at it; both conditions hold at their own time, only one may take effect.
        let started = at(-HOLD_SECONDS);
        let mut request = start_at("fan", "p", &format!("race-{round}"), None, started);
        let expiry = at(0);
        request.expires_at = expiry;
        let purchase = created(store.start_purchase(&request).await);
        let just_before =
            Timestamp::from_datetime(expiry.datetime() - time::Duration::nanoseconds(1)).unwrap();
        let (complete, sweep) = tokio::join!(
            {
                let (store, id) = (store.clone(), purchase.id.clone());
                async move {
                    store
                        .complete_purchase(&ids::user("fan"), &ids::pack("p"), &id, just_before)
                        .await
                }
            },
            {
                let store = store.clone();
                async move {
                    store
                        .release_holds(Some(&testkit::ids::pack("p")), expiry, 10)
                        .await
                }
            }
        );
        let sweep = sweep.unwrap();
        match complete {
            Ok(Completed::Paid { .. }) => {
                paid += 1;
                assert_eq!(sweep.released, 0);
            }
            Err(CompleteError::Refused(CompleteRefusal::Expired)) => {
                released += 1;
                assert_eq!(sweep.released + sweep.lost_races, 1);
            }
            other => panic!("{other:?}"),
        }
        purchases.push(("fan".to_owned(), purchase.id));
    }
    assert_eq!(paid + released, 10);
    let credited = HashMap::from([("fan".to_owned(), 100_000)]);
    assert_books_balance(&*store, &pack, 100, &purchases, &credited).await;
}

/// DynamoDB only (the in-memory store decides under one lock): two completions of one purchase
/// around its expiry. B comes just after it, reads the purchase still reserved and sends its
/// release; A came just before it and pays meanwhile. B's release then fails its condition: B
/// decides again on the purchase as it is, paid, and answers it as paid, never as expired.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
pub(crate) async fn a_release_lost_to_a_payment_answers_the_payment() {
    use store::cash::GetBalance;
    use store::purchases::{CompletePurchase, GetPurchase, StartPurchase};
    let (serial, store) = testkit::moto::atomic_table().await;
    let store = Arc::new(store);
    seeded(&*store, active("p", 7200)).await;
    credit(&*store, "fan", 1000, "USD").await;
    let mut request = start_at("fan", "p", "k", None, at(-30));
    request.expires_at = at(30);
    let purchase = created(store.start_purchase(&request).await);
    let expiry = purchase.expires_at.datetime();
    let just_after = Timestamp::from_datetime(expiry + time::Duration::milliseconds(1)).unwrap();
    let just_before = Timestamp::from_datetime(expiry - time::Duration::milliseconds(5)).unwrap();

    // B's release waits 1.5 s before it reaches the table; A pays in the meantime.
    let before = serial.operation_count("TransactWriteItems");
    serial.set_for_operation(
        testkit::fault_proxy::Fault::Delay(std::time::Duration::from_millis(1500)),
        "TransactWriteItems",
        1,
    );
    let b = tokio::spawn({
        let (store, id) = (store.clone(), purchase.id.clone());
        async move {
            store
                .complete_purchase(&ids::user("fan"), &ids::pack("p"), &id, just_after)
                .await
        }
    });
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let a = store
        .complete_purchase(
            &ids::user("fan"),
            &ids::pack("p"),
            &purchase.id,
            just_before,
        )
        .await;
    let b = b.await.unwrap();
    assert!(
        matches!(a, Ok(Completed::Paid { balance: 501, .. })),
        "{a:?}"
    );
    assert!(
        matches!(b, Ok(Completed::Repeated { balance: 501, .. })),
        "{b:?}"
    );
    assert_eq!(
        serial.operation_count("TransactWriteItems") - before,
        2,
        "B's release and A's payment"
    );
    let stored = store
        .get_purchase(&ids::user("fan"), &purchase.id)
        .await
        .unwrap();
    assert_eq!(stored.unwrap().status, PurchaseStatus::Completed);
    assert_eq!(
        store
            .get_balance(&testkit::ids::user("fan"), "USD")
            .await
            .unwrap(),
        501
    );
}

/// DynamoDB only (the in-memory store cannot hold a bad record): a hold whose purchase cannot be
/// read is logged and skipped. The sweep and a start on the sold-out pack still release the
/// other expired holds, where one bad record used to fail them all (the start with a 500).
#[tokio::test]
pub(crate) async fn a_hold_that_cannot_be_released_never_stops_the_others() {
    use aws_sdk_dynamodb::types::AttributeValue;
    use store::purchases::{ReleaseHolds, StartPurchase};
    use store::schema::{PK, SK, purchase_sk, user_pk};
    let (_serial, store) = testkit::moto::atomic_table().await;
    let mut pack = active("p", 7200);
    (pack.total_supply, pack.remaining) = (2, 2);
    seeded(&store, pack).await;
    let mut holds = Vec::new();
    for user in ["bad", "good"] {
        let mut request = start_at(user, "p", "k", None, at(-1000));
        request.expires_at = at(-10);
        holds.push(created(store.start_purchase(&request).await));
    }
    store
        .client()
        .update_item()
        .table_name(store.table())
        .key(PK, AttributeValue::S(user_pk(&testkit::ids::user("bad"))))
        .key(SK, AttributeValue::S(purchase_sk(&holds[0].id)))
        .update_expression("SET price = :garbage")
        .expression_attribute_values(":garbage", AttributeValue::S("not money".into()))
        .send()
        .await
        .unwrap();

    let late = created(store.start_purchase(&start("late", "p", "k")).await);
    assert_eq!(late.nonce, 1, "the good hold's unit went to the late buyer");
    // The sold-out start took the bad hold out of the holds index: no sweep meets it again.
    let swept = store
        .release_holds(None, Timestamp::now(), 10)
        .await
        .unwrap();
    assert_eq!(swept, Released::default());
    assert_eq!(remaining(&store, "p").await, 0);
    let bad = store
        .client()
        .get_item()
        .table_name(store.table())
        .key(PK, AttributeValue::S(user_pk(&testkit::ids::user("bad"))))
        .key(SK, AttributeValue::S(purchase_sk(&holds[0].id)))
        .send()
        .await
        .unwrap()
        .item
        .unwrap();
    assert!(bad.contains_key("unreleasable") && !bad.contains_key("GSI2PK"));
}

/// Thirty holds that cannot be released, ahead of two that can in the same share: each sweep
/// takes the ones it meets out of the holds index, so the two behind them are released within two
/// sweeps of 25 (they were never reached: every sweep read the same bad ones first).
#[tokio::test]
pub(crate) async fn unreleasable_holds_never_keep_the_sweep_from_the_ones_behind_them() {
    use aws_sdk_dynamodb::types::AttributeValue;
    use store::purchases::{ReleaseHolds, StartPurchase};
    use store::schema::{PK, SK, purchase_sk, user_pk};
    let (_serial, store) = testkit::moto::atomic_table().await;
    let mut pack = active("p", 7200);
    (pack.total_supply, pack.remaining, pack.supply_shards) = (32, 32, Some(1));
    seeded(&store, pack).await;
    for n in 0..32 {
        let user = format!("fan-{n}");
        let mut request = start_at(&user, "p", "k", None, at(-1000));
        // The bad ones expire first, so every read of the share's holds meets them first.
        request.expires_at = at(if n < 30 { -20 } else { -10 });
        let hold = created(store.start_purchase(&request).await);
        if n < 30 {
            store
                .client()
                .update_item()
                .table_name(store.table())
                .key(PK, AttributeValue::S(user_pk(&testkit::ids::user(&user))))
                .key(SK, AttributeValue::S(purchase_sk(&hold.id)))
                .update_expression("SET price = :garbage")
                .expression_attribute_values(":garbage", AttributeValue::S("not money".into()))
                .send()
                .await
                .unwrap();
        }
    }
    let mut total = Released::default();
    for _ in 0..2 {
        let swept = store
            .release_holds(Some(&testkit::ids::pack("p")), Timestamp::now(), 25)
            .await
            .unwrap();
        total.released += swept.released;
        total.skipped += swept.skipped;
    }
    assert_eq!((total.released, total.skipped), (2, 30));
    assert_eq!(remaining(&store, "p").await, 2);
}

/// A pack of 30 units over 10 shares, bought by 30 buyers one after another: all 30 are served
/// (a start that meets an emptied share goes on to another before it answers sold out), the 31st
/// is sold out, and every share is empty.
pub(crate) async fn thirty_units_over_ten_shares_all_sell_one_buyer_after_another(
    store: Arc<impl Store>,
) {
    let mut pack = active("p", 60);
    (pack.total_supply, pack.remaining, pack.supply_shards) = (30, 30, Some(10));
    let pack = seeded(&*store, pack).await;
    let mut purchases = Vec::new();
    for n in 0..30 {
        let user = format!("fan-{n}");
        let purchase = created(store.start_purchase(&start(&user, "p", "k")).await);
        purchases.push((user, purchase.id));
    }
    assert_eq!(
        store.start_purchase(&start("fan-30", "p", "k")).await,
        Err(StartError::Refused(StartRefusal::SoldOut))
    );
    assert_eq!(
        store
            .read_supply(&testkit::ids::pack("p"))
            .await
            .unwrap()
            .unwrap()
            .shares,
        [0; 10]
    );
    assert_books_balance(&*store, &pack, 30, &purchases, &HashMap::new()).await;
}

/// Expired holds give their units back to the shares they came from, and those units sell
/// again; then the pack is sold out once more.
pub(crate) async fn expired_units_go_back_to_their_shares_and_sell_again(store: Arc<impl Store>) {
    let mut pack = active("p", 7200);
    (pack.total_supply, pack.remaining, pack.supply_shards) = (6, 6, Some(3));
    let pack = seeded(&*store, pack).await;
    let mut from_share = [0u64; 3];
    for n in 0..6 {
        let dead = created(
            store
                .start_purchase(&start_at(&format!("early-{n}"), "p", "k", None, at(-1200)))
                .await,
        );
        from_share[dead.supply_shard as usize] += 1;
    }
    assert_eq!(from_share, [2, 2, 2], "each share gave its units");
    let released = store
        .release_holds(None, Timestamp::now(), 100)
        .await
        .unwrap();
    assert_eq!(released.released, 6);
    assert_eq!(
        store
            .read_supply(&testkit::ids::pack("p"))
            .await
            .unwrap()
            .unwrap()
            .shares,
        [2, 2, 2],
        "each unit back in its own share"
    );
    let mut purchases = Vec::new();
    for n in 0..6 {
        let user = format!("late-{n}");
        let purchase = created(store.start_purchase(&start(&user, "p", "k")).await);
        purchases.push((user, purchase.id));
    }
    assert_eq!(
        store.start_purchase(&start("later", "p", "k")).await,
        Err(StartError::Refused(StartRefusal::SoldOut))
    );
    assert_books_balance(&*store, &pack, 6, &purchases, &HashMap::new()).await;
}
