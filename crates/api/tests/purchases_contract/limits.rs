//! What a fan may hold: holds that ran out count toward no limit; the cap on a fan's unpaid holds
//! and the funds a start may need for them.

use super::*;

/// A hold that ran out counts toward neither the supply nor its buyer's limit, released or not:
/// a pack of one unit with a limit of one; the buyer's hold runs out; their next start takes the
/// unit (it answered `purchase_limit_reached`, the count read before the start released that very
/// hold, while `remaining` went back to 1).
pub(crate) async fn a_hold_that_ran_out_does_not_count_toward_the_limit(store: Arc<impl Store>) {
    a_hold_runs_out_and_its_buyer_starts_again(&*store, 1).await;
}

/// A pack of `units` units with a limit of one: the buyer's hold runs out unreleased; their next
/// start takes a unit, and the one after is at the limit (the live hold counts); the books balance.
pub(crate) async fn a_hold_runs_out_and_its_buyer_starts_again(store: &impl Store, units: u64) {
    let mut pack = active("p", 7200);
    (pack.total_supply, pack.remaining, pack.max_per_user) = (units, units, Some(1));
    let pack = seeded(store, pack).await;
    let dead = created(
        store
            .start_purchase(&start_at("fan", "p", "k1", None, at(-1200)))
            .await,
    );
    let again = created(store.start_purchase(&start("fan", "p", "k2")).await);
    assert_eq!(again.nonce, 2);
    assert_eq!(
        store.start_purchase(&start("fan", "p", "k3")).await,
        Err(StartError::Refused(StartRefusal::LimitReached)),
        "the live hold counts"
    );
    assert_books_balance(
        store,
        &pack,
        units,
        &[("fan".into(), dead.id), ("fan".into(), again.id)],
        &HashMap::new(),
    )
    .await;
}

/// `request` under `policy`.
fn under(policy: HoldPolicy, mut request: StartRequest) -> StartRequest {
    request.policy = policy;
    request
}

const TWO: HoldPolicy = HoldPolicy {
    max_unpaid: 2,
    requires_funds: false,
};

/// Hoarding: a fan's live unpaid holds, across packs, are capped; a start past the cap takes
/// nothing; a hold that ran out (released or not) and a paid one no longer count.
pub(crate) async fn a_fan_holds_at_most_their_unpaid_holds_across_packs(store: Arc<impl Store>) {
    for id in ["a", "b", "c"] {
        seeded(&*store, active(id, 7200)).await;
    }
    let dead = created(
        store
            .start_purchase(&under(TWO, start_at("fan", "a", "k0", None, at(-1200))))
            .await,
    );
    let first = created(
        store
            .start_purchase(&under(TWO, start("fan", "a", "k1")))
            .await,
    );
    created(
        store
            .start_purchase(&under(TWO, start("fan", "b", "k2")))
            .await,
    );
    assert_eq!(
        store
            .start_purchase(&under(TWO, start("fan", "c", "k3")))
            .await,
        Err(StartError::Refused(StartRefusal::UnpaidHoldsLimit)),
        "two live holds; the one that ran out does not count"
    );
    assert_eq!(
        remaining(&*store, "c").await,
        100,
        "the refused start took nothing"
    );
    credit(&*store, "fan", 499, "USD").await;
    store
        .complete_purchase(
            &ids::user("fan"),
            &ids::pack("a"),
            &first.id,
            Timestamp::now(),
        )
        .await
        .unwrap();
    created(
        store
            .start_purchase(&under(TWO, start("fan", "c", "k4")))
            .await,
    );
    assert_eq!(
        store
            .start_purchase(&under(TWO, start("fan", "c", "k5")))
            .await,
        Err(StartError::Refused(StartRefusal::UnpaidHoldsLimit))
    );
    assert_eq!(
        store
            .get_purchase(&ids::user("fan"), &dead.id)
            .await
            .unwrap()
            .unwrap()
            .status_at(Timestamp::now()),
        PurchaseStatus::Expired
    );
}

/// `START_REQUIRES_FUNDS`: a start needs a balance that covers its price and the fan's other
/// live unpaid holds in that currency; a refused start takes nothing.
pub(crate) async fn a_start_needs_funds_for_every_live_hold_when_asked(store: Arc<impl Store>) {
    let funded = HoldPolicy {
        max_unpaid: 5,
        requires_funds: true,
    };
    let pack = seeded(&*store, active("p", 7200)).await;
    assert_eq!(
        store
            .start_purchase(&under(funded, start("fan", "p", "k1")))
            .await,
        Err(StartError::Refused(StartRefusal::InsufficientFunds))
    );
    credit(&*store, "fan", 998, "USD").await;
    created(
        store
            .start_purchase(&under(funded, start("fan", "p", "k1")))
            .await,
    );
    created(
        store
            .start_purchase(&under(funded, start("fan", "p", "k2")))
            .await,
    );
    assert_eq!(
        store
            .start_purchase(&under(funded, start("fan", "p", "k3")))
            .await,
        Err(StartError::Refused(StartRefusal::InsufficientFunds)),
        "998 covers two holds of 499, not three"
    );
    assert_eq!(remaining(&*store, "p").await, pack.remaining - 2);
}

/// Twenty starts of one fan at once, each on a pack of its own (so that nothing but the fan's
/// unpaid holds is shared), under a cap of two: exactly two holds, the rest refused, whatever
/// the order (the cap is inside the write).
pub(crate) async fn twenty_racing_starts_of_one_fan_take_exactly_their_unpaid_holds(
    store: Arc<impl Store + 'static>,
) {
    for n in 0..20 {
        let mut pack = active(&format!("p{n}"), 60);
        (pack.total_supply, pack.remaining) = (2, 2);
        seeded(&*store, pack).await;
    }
    let results = at_once(20, |n| {
        let store = store.clone();
        async move {
            let request = start("fan", &format!("p{n}"), &format!("k{n}"));
            store.start_purchase(&under(TWO, request)).await
        }
    })
    .await;
    let mut created = 0;
    for result in &results {
        match result {
            Ok(Started::Created(_)) => created += 1,
            Err(StartError::Refused(StartRefusal::UnpaidHoldsLimit)) => {}
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(created, 2, "{results:?}");
    let mut held = 0;
    for n in 0..20 {
        let supply = store
            .read_supply(&testkit::ids::pack(&format!("p{n}")))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(supply.accounted(), 2, "p{n}: the books balance");
        held += supply.held;
    }
    assert_eq!(held, 2);
}

/// DynamoDB only (the bound is on its requests): a start that finds its pack sold out looks for
/// that pack's dead holds only, share by share, whatever the backlog of other packs; it used to
/// page through the expired holds of every pack (the index's `Limit` applied before the pack
/// filter), so one request's work grew with the platform's backlog.
#[tokio::test]
pub(crate) async fn a_sold_out_start_reads_only_its_own_packs_holds() {
    use store::purchases::StartPurchase;
    let (serial, store) = testkit::moto::atomic_table().await;
    let mut sold_out = active("sold-out", 7200);
    (sold_out.total_supply, sold_out.remaining) = (1, 0);
    seeded(&store, sold_out).await;
    seeded(&store, active("busy", 7200)).await;
    for n in 0..60 {
        created(
            store
                .start_purchase(&start_at(&format!("fan-{n}"), "busy", "k", None, at(-1200)))
                .await,
        );
    }
    let before = serial.operation_count("Query");
    assert_eq!(
        store.start_purchase(&start("late", "sold-out", "k")).await,
        Err(StartError::Refused(StartRefusal::SoldOut))
    );
    assert_eq!(
        serial.operation_count("Query") - before,
        1,
        "one Query: the holds of the sold-out pack's one share"
    );
}

/// DynamoDB only: a hold whose buyer's count is gone (or below one) is released all the same,
/// as in memory, where the DynamoDB release used to refuse it and skip it on every sweep; the
/// purchase's state alone decides.
#[tokio::test]
pub(crate) async fn a_hold_whose_count_is_gone_is_released_all_the_same() {
    use aws_sdk_dynamodb::types::AttributeValue;
    use store::schema::{PK, SK, buys_sk, user_pk};
    let (_serial, store) = testkit::moto::atomic_table().await;
    let dead = one_dead_hold(&store).await;
    store
        .client()
        .delete_item()
        .table_name(store.table())
        .key(PK, AttributeValue::S(user_pk(&testkit::ids::user("fan"))))
        .key(SK, AttributeValue::S(buys_sk(&testkit::ids::pack("p"))))
        .send()
        .await
        .unwrap();
    released_all_the_same(&store, &dead).await;
}

/// As [`a_hold_that_ran_out_does_not_count_toward_the_limit`], on a pack that is not sold out:
/// the start finds a unit, so no sold-out release frees the buyer's count on the way; only the
/// release of the buyer's own dead holds does (in memory, the one-unit case passes without it).
pub(crate) async fn a_hold_that_ran_out_does_not_count_toward_the_limit_while_units_are_left(
    store: Arc<impl Store>,
) {
    a_hold_runs_out_and_its_buyer_starts_again(&*store, 2).await;
}

/// DynamoDB only (the bound is counted in its requests; memory applies the same decision under its
/// lock, where a request count means nothing):
/// a start that finds its pack sold out takes back a bounded number of that pack's dead holds
/// (25, `RELEASE_BEFORE_SOLD_OUT`), however many there are, and leaves the rest to the sweep, so
/// one request's work does not grow with the pack's backlog.
#[tokio::test]
pub(crate) async fn a_sold_out_start_takes_back_a_bounded_number_of_dead_holds() {
    use store::purchases::StartPurchase;
    let (_serial, store) = testkit::moto::atomic_table().await;
    let mut pack = active("p", 7200);
    (pack.total_supply, pack.remaining, pack.supply_shards) = (40, 40, Some(1));
    seeded(&store, pack).await;
    for n in 0..40 {
        created(
            store
                .start_purchase(&start_at(&format!("fan-{n}"), "p", "k", None, at(-1200)))
                .await,
        );
    }
    created(store.start_purchase(&start("late", "p", "k")).await);
    assert_eq!(
        remaining(&store, "p").await,
        24,
        "25 of the 40 dead holds taken back, one of their units sold"
    );
}

/// DynamoDB only: a hold whose share has no `remaining` (a share item not written yet, as for a
/// hold taken on a pack stored before the shares) is released all the same, its unit counted
/// into the share, where the release conditioned on `remaining` refused it on every sweep.
#[tokio::test]
pub(crate) async fn a_hold_whose_share_has_no_remaining_is_released_all_the_same() {
    use aws_sdk_dynamodb::types::AttributeValue;
    use store::schema::{PACK_REMAINING, PK, SK, SUPPLY_SK, supply_pk};
    let (_serial, store) = testkit::moto::atomic_table().await;
    let dead = one_dead_hold(&store).await;
    store
        .client()
        .update_item()
        .table_name(store.table())
        .key(
            PK,
            AttributeValue::S(supply_pk(&testkit::ids::pack("p"), 0)),
        )
        .key(SK, AttributeValue::S(SUPPLY_SK.into()))
        .update_expression("REMOVE #remaining")
        .expression_attribute_names("#remaining", PACK_REMAINING)
        .send()
        .await
        .unwrap();
    released_all_the_same(&store, &dead).await;
}

/// Pack "p", one unit in one share, held by "fan" with a hold that ran out unreleased.
pub(crate) async fn one_dead_hold(store: &store::DynamoStore) -> Purchase {
    use store::purchases::StartPurchase;
    let mut pack = active("p", 7200);
    (pack.total_supply, pack.remaining, pack.supply_shards) = (1, 1, Some(1));
    seeded(store, pack).await;
    created(
        store
            .start_purchase(&start_at("fan", "p", "k", None, at(-1200)))
            .await,
    )
}

/// The sweep releases `dead` (nothing skipped): expired, its unit back in its share.
pub(crate) async fn released_all_the_same(store: &store::DynamoStore, dead: &Purchase) {
    use store::purchases::{GetPurchase, ReleaseHolds};
    let swept = store
        .release_holds(None, Timestamp::now(), 10)
        .await
        .unwrap();
    assert_eq!((swept.released, swept.skipped), (1, 0));
    assert_eq!(
        remaining(store, "p").await,
        1,
        "the unit is back in its share"
    );
    let released = store
        .get_purchase(&ids::user("fan"), &dead.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(released.status, PurchaseStatus::Expired);
}

/// Hoarding: a hold that ran out is not live even while a later hold still runs in the slot after
/// it (`[ran out, live]` under a cap of two): a third start takes the freed slot, where counting
/// the slots taken answered `unpaid_holds_limit`.
pub(crate) async fn a_hold_that_ran_out_beside_a_live_one_frees_its_slot(store: Arc<impl Store>) {
    for id in ["a", "b", "c"] {
        seeded(&*store, active(id, 7200)).await;
    }
    let mut first = under(TWO, start_at("fan", "a", "k0", None, at(-1000)));
    first.expires_at = at(-400);
    assert_eq!(
        created(store.start_purchase(&first).await).hold_slot,
        Some(0)
    );
    let mut second = under(TWO, start_at("fan", "b", "k1", None, at(-900)));
    second.expires_at = at(600);
    assert_eq!(
        created(store.start_purchase(&second).await).hold_slot,
        Some(1)
    );
    let third = created(
        store
            .start_purchase(&under(TWO, start("fan", "c", "k2")))
            .await,
    );
    assert_eq!(
        third.hold_slot,
        Some(0),
        "the slot of the hold that ran out"
    );
}
