//! The purchase contract, run against both stores: DynamoStore on moto_server (through a proxy
//! that forwards one request at a time, so that each request is atomic as on DynamoDB: moto
//! alone runs concurrent requests without a lock) and the local API's MemoryStore. Rules, idempotency, holds, payment, and the books' invariants under
//! concurrency: for each pack, `remaining` plus its reserved, completed and opened purchases
//! stays what seeding gave it; no buyer holds more than `maxPerUser`; balances never go below
//! zero and the debits add up to the prices of the paid purchases.

use std::collections::HashMap;
use std::sync::Arc;
use testkit::ids;

use shared::cash::{Money, parse_credit};
use shared::ids::PurchaseId;
use shared::packs::{Pack, PackStatus};
use shared::purchases::{
    CompleteRefusal, HoldPolicy, Purchase, PurchaseStatus, StartRefusal, StartRequest, purchase_id,
};
use shared::store::Store;
use shared::store::purchases::{CompleteError, Completed, Released, StartError, Started};
use shared::timestamp::Timestamp;
use testkit::at_once;
use testkit::packs::{active, at, ending, with_status};

testkit::store_contract!(
    arc:
    a_start_holds_a_unit_and_numbers_the_buyers_purchases,
    a_repeated_key_changes_nothing_and_a_reused_key_is_refused,
    starts_are_refused_in_the_order_clients_see,
    a_sold_out_pack_first_takes_back_its_dead_holds,
    a_completion_pays_once_from_an_exact_balance,
    free_packs_are_paid_from_a_balance_of_zero,
    an_expired_hold_cannot_be_paid_and_its_unit_comes_back_once,
    the_sweep_releases_expired_holds_and_frees_the_buyers_slots,
    two_hundred_buyers_on_fifty_units_get_exactly_fifty,
    one_buyer_with_a_limit_of_two_gets_exactly_two_of_twenty,
    twenty_starts_with_one_key_make_one_purchase,
    ten_completions_of_one_purchase_debit_once,
    a_completion_racing_the_sweep_at_expiry_wins_or_loses_whole,
    thirty_units_over_ten_shares_all_sell_one_buyer_after_another,
    expired_units_go_back_to_their_shares_and_sell_again,
    a_hold_that_ran_out_does_not_count_toward_the_limit,
    a_fan_holds_at_most_their_unpaid_holds_across_packs,
    a_start_needs_funds_for_every_live_hold_when_asked,
    twenty_racing_starts_of_one_fan_take_exactly_their_unpaid_holds,
    a_hold_that_ran_out_does_not_count_toward_the_limit_while_units_are_left,
    a_hold_that_ran_out_beside_a_live_one_frees_its_slot,
);

const HOLD_SECONDS: i64 = 600;

async fn seeded(store: &impl Store, pack: Pack) -> Pack {
    testkit::packs::save(store, &pack).await;
    pack
}

/// A start of `pack_id` by `user` with `key`, at `now`.
fn start_at(
    user: &str,
    pack_id: &str,
    key: &str,
    seed: Option<&str>,
    now: Timestamp,
) -> StartRequest {
    StartRequest {
        user_id: ids::user(user),
        pack_id: ids::pack(pack_id),
        purchase_id: purchase_id(&ids::user(user), key),
        requested_seed: seed.map(str::to_owned),
        client_seed: seed.unwrap_or("server-picked").into(),
        now,
        expires_at: now.plus_seconds(HOLD_SECONDS).unwrap(),
        policy: testkit::purchases::ROOMY,
    }
}

fn start(user: &str, pack_id: &str, key: &str) -> StartRequest {
    start_at(user, pack_id, key, None, Timestamp::now())
}

fn created(result: Result<Started, StartError>) -> Purchase {
    match result {
        Ok(Started::Created(purchase)) => purchase,
        other => panic!("expected a new purchase, got {other:?}"),
    }
}

async fn remaining(store: &impl Store, pack_id: &str) -> u64 {
    testkit::packs::remaining(store, pack_id).await
}

async fn credit(store: &impl Store, user: &str, amount: u64, currency: &str) {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let reference = format!(
        "test-{}",
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    let credit = parse_credit(user, &amount.to_string(), currency, &reference).unwrap();
    store.credit_cash(&credit, Timestamp::now()).await.unwrap();
}

/// The books of `pack` (seeded with `initial` units) over the purchases made: `remaining` plus
/// the live purchases is `initial`; each buyer's count matches and keeps to the limit; each
/// buyer's debits are the prices of their paid purchases and their balance is what was
/// credited less that.
async fn assert_books_balance(
    store: &impl Store,
    pack: &Pack,
    initial: u64,
    purchases: &[(String, PurchaseId)],
    credited: &HashMap<String, u64>,
) {
    let mut live = 0;
    let mut held: HashMap<&str, u64> = HashMap::new();
    let mut paid: HashMap<&str, u64> = HashMap::new();
    for (user, id) in purchases {
        let purchase = store
            .get_purchase(&ids::user(user), id)
            .await
            .unwrap()
            .expect("stored");
        if matches!(
            purchase.status,
            PurchaseStatus::Reserved | PurchaseStatus::Completed | PurchaseStatus::Opened
        ) {
            live += 1;
            *held.entry(user).or_default() += 1;
        }
        if matches!(
            purchase.status,
            PurchaseStatus::Completed | PurchaseStatus::Opened
        ) {
            *paid.entry(user).or_default() += purchase.price.amount;
        }
    }
    assert_eq!(
        remaining(store, &pack.id).await + live,
        initial,
        "remaining plus live purchases"
    );
    // The store's own books, counted apart: the shares' units, the holds index, the sold counts.
    let supply = store
        .read_supply(&testkit::ids::pack(&pack.id))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        supply.accounted(),
        initial,
        "remaining + held + sold: {supply:?}"
    );
    if let Some(max) = pack.max_per_user {
        assert!(held.values().all(|&n| n <= u64::from(max)), "{held:?}");
    }
    for (user, credit) in credited {
        let debits: u64 = store
            .list_debits(&testkit::ids::user(user))
            .await
            .unwrap()
            .iter()
            .map(|d| d.amount.amount)
            .sum();
        let paid = paid.get(user.as_str()).copied().unwrap_or(0);
        assert_eq!(debits, paid, "{user}: debits are the paid prices");
        let balance = store
            .get_balance(&testkit::ids::user(user), &pack.price.currency)
            .await
            .unwrap();
        assert_eq!(balance, credit - paid, "{user}: balance");
        // The fan's ledger (credits and debits, as the fan's view lists it) adds up to it.
        assert_eq!(
            testkit::mine::ledger_sum(store, user, &pack.price.currency).await,
            i128::from(balance),
            "{user}: the ledger's credits less its debits"
        );
    }
}

async fn a_start_holds_a_unit_and_numbers_the_buyers_purchases(store: Arc<impl Store>) {
    let pack = seeded(&*store, active("p", 60)).await;
    let first = created(store.start_purchase(&start("u1", "p", "k1")).await);
    assert_eq!(
        (
            first.status,
            first.nonce,
            &first.price,
            first.pack_id.as_str()
        ),
        (PurchaseStatus::Reserved, 1, &pack.price, "p")
    );
    let second = created(
        store
            .start_purchase(&start_at(
                "u1",
                "p",
                "k2",
                Some("my seed"),
                Timestamp::now(),
            ))
            .await,
    );
    assert_eq!((second.nonce, second.client_seed.as_str()), (2, "my seed"));
    let other_buyer = created(store.start_purchase(&start("u2", "p", "k1")).await);
    assert_eq!(other_buyer.nonce, 1, "nonces count per buyer");
    assert_ne!(other_buyer.id, first.id, "keys are scoped to the buyer");
    assert_eq!(remaining(&*store, "p").await, pack.remaining - 3);
    assert_eq!(
        store
            .get_purchase(&ids::user("u1"), &first.id)
            .await
            .unwrap(),
        Some(first.clone())
    );
    assert_eq!(
        store
            .get_purchase(&ids::user("u2"), &first.id)
            .await
            .unwrap(),
        None
    );
}

async fn a_repeated_key_changes_nothing_and_a_reused_key_is_refused(store: Arc<impl Store>) {
    let pack = seeded(&*store, active("p", 60)).await;
    seeded(&*store, active("q", 60)).await;
    let now = Timestamp::now();
    let request = start_at("u", "p", "k", Some("seed"), now);
    let first = created(store.start_purchase(&request).await);
    let later = start_at("u", "p", "k", Some("seed"), at(5));
    assert_eq!(
        store.start_purchase(&later).await,
        Ok(Started::Repeated(first.clone()))
    );
    assert_eq!(remaining(&*store, "p").await, pack.remaining - 1);
    for reused in [
        start_at("u", "q", "k", Some("seed"), now),
        start_at("u", "p", "k", Some("other"), now),
        start_at("u", "p", "k", None, now),
    ] {
        assert_eq!(
            store.start_purchase(&reused).await,
            Err(StartError::KeyReused)
        );
    }
    assert_eq!(remaining(&*store, "p").await, pack.remaining - 1);
    assert_eq!(remaining(&*store, "q").await, pack.remaining);
}

async fn starts_are_refused_in_the_order_clients_see(store: Arc<impl Store>) {
    let mut sold_out = active("sold-out", 60);
    sold_out.remaining = 0;
    let mut limited = active("limited", 60);
    limited.max_per_user = Some(1);
    for pack in [
        with_status(active("draft", 60), PackStatus::Draft),
        with_status(active("archived", 60), PackStatus::Archived),
        active("future", -3600),
        ending(active("ended", 7200), -1),
        sold_out,
        limited,
    ] {
        seeded(&*store, pack).await;
    }
    created(store.start_purchase(&start("u", "limited", "first")).await);
    for (pack_id, refusal) in [
        ("nope", StartRefusal::PackNotFound),
        ("draft", StartRefusal::PackNotFound),
        ("archived", StartRefusal::NotOnSale),
        ("future", StartRefusal::NotOnSale),
        ("ended", StartRefusal::NotOnSale),
        ("sold-out", StartRefusal::SoldOut),
        ("limited", StartRefusal::LimitReached),
    ] {
        assert_eq!(
            store.start_purchase(&start("u", pack_id, pack_id)).await,
            Err(StartError::Refused(refusal)),
            "{pack_id}"
        );
    }
    assert_eq!(remaining(&*store, "limited").await, 99);
}

async fn a_sold_out_pack_first_takes_back_its_dead_holds(store: Arc<impl Store>) {
    let mut pack = active("p", 7200);
    pack.remaining = 1;
    seeded(&*store, pack).await;
    // A hold taken 20 minutes ago, dead for 10.
    let dead = created(
        store
            .start_purchase(&start_at("early", "p", "k", None, at(-1200)))
            .await,
    );
    let taken = created(store.start_purchase(&start("late", "p", "k")).await);
    assert_eq!(remaining(&*store, "p").await, 0);
    assert_eq!(
        store
            .get_purchase(&ids::user("early"), &dead.id)
            .await
            .unwrap()
            .unwrap()
            .status,
        PurchaseStatus::Expired
    );
    assert_eq!(taken.status, PurchaseStatus::Reserved);
    assert_eq!(
        store.start_purchase(&start("third", "p", "k")).await,
        Err(StartError::Refused(StartRefusal::SoldOut))
    );
}

async fn a_completion_pays_once_from_an_exact_balance(store: Arc<impl Store>) {
    let pack = seeded(&*store, active("p", 60)).await;
    let purchase = created(store.start_purchase(&start("u", "p", "k")).await);
    let now = Timestamp::now();
    assert_eq!(
        store
            .complete_purchase(&ids::user("u"), &ids::pack("p"), &purchase.id, now)
            .await,
        Err(CompleteError::Refused(CompleteRefusal::InsufficientFunds)),
        "no balance at all"
    );
    credit(&*store, "u", 498, "USD").await;
    assert_eq!(
        store
            .complete_purchase(&ids::user("u"), &ids::pack("p"), &purchase.id, now)
            .await,
        Err(CompleteError::Refused(CompleteRefusal::InsufficientFunds)),
        "one short"
    );
    credit(&*store, "u", 1000, "EUR").await;
    credit(&*store, "u", 2, "USD").await;
    let Ok(Completed::Paid {
        purchase: paid,
        balance,
    }) = store
        .complete_purchase(&ids::user("u"), &ids::pack("p"), &purchase.id, now)
        .await
    else {
        panic!("paid")
    };
    assert_eq!(
        (paid.status, paid.completed_at, balance),
        (PurchaseStatus::Completed, Some(now), 1)
    );
    assert_eq!(
        store
            .get_balance(&testkit::ids::user("u"), "EUR")
            .await
            .unwrap(),
        1000,
        "other currencies untouched"
    );
    assert_eq!(
        store
            .complete_purchase(&ids::user("u"), &ids::pack("p"), &purchase.id, at(1))
            .await,
        Ok(Completed::Repeated {
            purchase: paid.clone(),
            balance: 1
        })
    );
    for (user, pack_id) in [("other", "p"), ("u", "q")] {
        assert_eq!(
            store
                .complete_purchase(&ids::user(user), &ids::pack(pack_id), &purchase.id, now)
                .await,
            Err(CompleteError::Refused(CompleteRefusal::NotFound))
        );
    }
    let debits = store.list_debits(&testkit::ids::user("u")).await.unwrap();
    assert_eq!(debits.len(), 1);
    assert_eq!(
        (debits[0].purchase_id.as_str(), &debits[0].amount),
        (
            purchase.id.as_str(),
            &Money {
                amount: 499,
                currency: "USD".into()
            }
        )
    );
    let credited = HashMap::from([("u".to_owned(), 500)]);
    assert_books_balance(&*store, &pack, 100, &[("u".into(), purchase.id)], &credited).await;
}

/// A price of 0 is a price: a buyer who spent their whole balance (now a stored 0), or who never
/// had one, takes free packs, as many as the limit allows, and no debit goes below zero.
async fn free_packs_are_paid_from_a_balance_of_zero(store: Arc<impl Store>) {
    let mut free = active("free", 60);
    free.price.amount = 0;
    seeded(&*store, free).await;
    seeded(&*store, active("p", 60)).await;
    credit(&*store, "fan", 499, "USD").await;
    let bought = created(store.start_purchase(&start("fan", "p", "k")).await);
    let paid = store
        .complete_purchase(
            &ids::user("fan"),
            &ids::pack("p"),
            &bought.id,
            Timestamp::now(),
        )
        .await;
    assert!(
        matches!(paid, Ok(Completed::Paid { balance: 0, .. })),
        "{paid:?}"
    );
    for (user, key) in [("fan", "f1"), ("fan", "f2"), ("newcomer", "f1")] {
        let gift = created(store.start_purchase(&start(user, "free", key)).await);
        let paid = store
            .complete_purchase(
                &ids::user(user),
                &ids::pack("free"),
                &gift.id,
                Timestamp::now(),
            )
            .await;
        assert!(
            matches!(paid, Ok(Completed::Paid { balance: 0, .. })),
            "{user} {key}: {paid:?}"
        );
    }
    assert_eq!(
        store
            .get_balance(&testkit::ids::user("fan"), "USD")
            .await
            .unwrap(),
        0
    );
}

async fn an_expired_hold_cannot_be_paid_and_its_unit_comes_back_once(store: Arc<impl Store>) {
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

async fn the_sweep_releases_expired_holds_and_frees_the_buyers_slots(store: Arc<impl Store>) {
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

async fn two_hundred_buyers_on_fifty_units_get_exactly_fifty(store: Arc<impl Store + 'static>) {
    let mut pack = active("drop", 60);
    pack.remaining = 50;
    pack.total_supply = 50;
    let pack = seeded(&*store, pack).await;
    let results = at_once(200, |i| {
        let store = store.clone();
        async move {
            let user = format!("buyer-{i}");
            let result = store.start_purchase(&start(&user, "drop", "k")).await;
            (user, result)
        }
    })
    .await;
    let mut purchases = Vec::new();
    let mut sold_out = 0;
    for (user, result) in results {
        match result {
            Ok(Started::Created(purchase)) => purchases.push((user, purchase.id)),
            Err(StartError::Refused(StartRefusal::SoldOut)) => sold_out += 1,
            other => panic!("{user}: {other:?}"),
        }
    }
    assert_eq!((purchases.len(), sold_out), (50, 150));
    assert_eq!(remaining(&*store, "drop").await, 0);
    assert_books_balance(&*store, &pack, 50, &purchases, &HashMap::new()).await;
}

async fn one_buyer_with_a_limit_of_two_gets_exactly_two_of_twenty(
    store: Arc<impl Store + 'static>,
) {
    let mut pack = active("limited", 60);
    pack.max_per_user = Some(2);
    let pack = seeded(&*store, pack).await;
    let results = at_once(20, |i| {
        let store = store.clone();
        async move {
            store
                .start_purchase(&start("fan", "limited", &format!("key-{i}")))
                .await
        }
    })
    .await;
    let mut purchases = Vec::new();
    for result in results {
        match result {
            Ok(Started::Created(purchase)) => purchases.push(("fan".to_owned(), purchase.id)),
            Err(StartError::Refused(StartRefusal::LimitReached)) => {}
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(purchases.len(), 2);
    let mut nonces = Vec::new();
    for (user, id) in &purchases {
        nonces.push(
            store
                .get_purchase(&ids::user(user), id)
                .await
                .unwrap()
                .unwrap()
                .nonce,
        );
    }
    nonces.sort_unstable();
    assert_eq!(nonces, [1, 2], "each nonce once");
    assert_books_balance(&*store, &pack, 100, &purchases, &HashMap::new()).await;
}

async fn twenty_starts_with_one_key_make_one_purchase(store: Arc<impl Store + 'static>) {
    let pack = seeded(&*store, active("p", 60)).await;
    let request = start("fan", "p", "double-click");
    let results = at_once(20, |_| {
        let (store, request) = (store.clone(), request.clone());
        async move { store.start_purchase(&request).await }
    })
    .await;
    let mut ids = std::collections::HashSet::new();
    let mut created = 0;
    for result in results {
        match result {
            Ok(Started::Created(purchase)) => {
                created += 1;
                ids.insert(purchase.id);
            }
            Ok(Started::Repeated(purchase)) => {
                ids.insert(purchase.id);
            }
            other => panic!("{other:?}"),
        }
    }
    assert_eq!((created, ids.len()), (1, 1));
    assert_eq!(remaining(&*store, "p").await, pack.remaining - 1);
}

async fn ten_completions_of_one_purchase_debit_once(store: Arc<impl Store + 'static>) {
    let pack = seeded(&*store, active("p", 60)).await;
    let purchase = created(store.start_purchase(&start("fan", "p", "k")).await);
    credit(&*store, "fan", 5000, "USD").await;
    let results = at_once(10, |_| {
        let (store, id) = (store.clone(), purchase.id.clone());
        async move {
            store
                .complete_purchase(&ids::user("fan"), &ids::pack("p"), &id, Timestamp::now())
                .await
        }
    })
    .await;
    let paid = results
        .iter()
        .filter(|r| matches!(r, Ok(Completed::Paid { .. })))
        .count();
    assert_eq!(paid, 1, "{results:?}");
    assert!(results.iter().all(|r| matches!(
        r,
        Ok(Completed::Paid { balance: 4501, .. } | Completed::Repeated { balance: 4501, .. })
    )));
    assert_eq!(
        store
            .list_debits(&testkit::ids::user("fan"))
            .await
            .unwrap()
            .len(),
        1
    );
    let credited = HashMap::from([("fan".to_owned(), 5000)]);
    assert_books_balance(
        &*store,
        &pack,
        100,
        &[("fan".into(), purchase.id)],
        &credited,
    )
    .await;
}

async fn a_completion_racing_the_sweep_at_expiry_wins_or_loses_whole(
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
async fn a_release_lost_to_a_payment_answers_the_payment() {
    use shared::store::cash::GetBalance;
    use shared::store::purchases::{CompletePurchase, GetPurchase, StartPurchase};
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
async fn a_hold_that_cannot_be_released_never_stops_the_others() {
    use aws_sdk_dynamodb::types::AttributeValue;
    use shared::store::purchases::{ReleaseHolds, StartPurchase};
    use shared::store::schema::{PK, SK, purchase_sk, user_pk};
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
async fn unreleasable_holds_never_keep_the_sweep_from_the_ones_behind_them() {
    use aws_sdk_dynamodb::types::AttributeValue;
    use shared::store::purchases::{ReleaseHolds, StartPurchase};
    use shared::store::schema::{PK, SK, purchase_sk, user_pk};
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
async fn thirty_units_over_ten_shares_all_sell_one_buyer_after_another(store: Arc<impl Store>) {
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
async fn expired_units_go_back_to_their_shares_and_sell_again(store: Arc<impl Store>) {
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

/// A hold that ran out counts toward neither the supply nor its buyer's limit, released or not:
/// a pack of one unit with a limit of one; the buyer's hold runs out; their next start takes the
/// unit (it answered `purchase_limit_reached`, the count read before the start released that very
/// hold, while `remaining` went back to 1).
async fn a_hold_that_ran_out_does_not_count_toward_the_limit(store: Arc<impl Store>) {
    a_hold_runs_out_and_its_buyer_starts_again(&*store, 1).await;
}

/// A pack of `units` units with a limit of one: the buyer's hold runs out unreleased; their next
/// start takes a unit, and the one after is at the limit (the live hold counts); the books balance.
async fn a_hold_runs_out_and_its_buyer_starts_again(store: &impl Store, units: u64) {
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
async fn a_fan_holds_at_most_their_unpaid_holds_across_packs(store: Arc<impl Store>) {
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
async fn a_start_needs_funds_for_every_live_hold_when_asked(store: Arc<impl Store>) {
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
async fn twenty_racing_starts_of_one_fan_take_exactly_their_unpaid_holds(
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
async fn a_sold_out_start_reads_only_its_own_packs_holds() {
    use shared::store::purchases::StartPurchase;
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
async fn a_hold_whose_count_is_gone_is_released_all_the_same() {
    use aws_sdk_dynamodb::types::AttributeValue;
    use shared::store::schema::{PK, SK, buys_sk, user_pk};
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
async fn a_hold_that_ran_out_does_not_count_toward_the_limit_while_units_are_left(
    store: Arc<impl Store>,
) {
    a_hold_runs_out_and_its_buyer_starts_again(&*store, 2).await;
}

/// DynamoDB only (the bound is on its requests; memory takes back all at once under its lock):
/// a start that finds its pack sold out takes back a bounded number of that pack's dead holds
/// (25, `RELEASE_BEFORE_SOLD_OUT`), however many there are, and leaves the rest to the sweep, so
/// one request's work does not grow with the pack's backlog.
#[tokio::test]
async fn a_sold_out_start_takes_back_a_bounded_number_of_dead_holds() {
    use shared::store::purchases::StartPurchase;
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
async fn a_hold_whose_share_has_no_remaining_is_released_all_the_same() {
    use aws_sdk_dynamodb::types::AttributeValue;
    use shared::store::schema::{PACK_REMAINING, PK, SK, SUPPLY_SK, supply_pk};
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
async fn one_dead_hold(store: &shared::store::DynamoStore) -> Purchase {
    use shared::store::purchases::StartPurchase;
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
async fn released_all_the_same(store: &shared::store::DynamoStore, dead: &Purchase) {
    use shared::store::purchases::{GetPurchase, ReleaseHolds};
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
async fn a_hold_that_ran_out_beside_a_live_one_frees_its_slot(store: Arc<impl Store>) {
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
