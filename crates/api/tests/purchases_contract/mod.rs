//! The purchase contract, run against both stores: DynamoStore on moto_server (through a proxy
//! that forwards one request at a time, so that each request is atomic as on DynamoDB: moto
//! alone runs concurrent requests without a lock) and the local API's MemoryStore. Rules, idempotency, holds, payment, and the books' invariants under
//! concurrency: for each pack, `remaining` plus its reserved, completed and opened purchases
//! stays what seeding gave it; no buyer holds more than `maxPerUser`; balances never go below
//! zero and the debits add up to the prices of the paid purchases.

use std::collections::HashMap;
use std::sync::Arc;
use testkit::ids;

use domain::cash::{Money, parse_credit};
use domain::ids::PurchaseId;
use domain::packs::{Pack, PackStatus};
use domain::purchases::{
    CompleteRefusal, HoldPolicy, Purchase, PurchaseStatus, StartRefusal, StartRequest, purchase_id,
};
use domain::timestamp::Timestamp;
use store::Store;
use store::purchases::{CompleteError, Completed, Released, StartError, Started};
use testkit::at_once;
use testkit::packs::{active, at, ending, with_status};

mod holds;
mod limits;
use holds::*;
use limits::*;

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
        human_checked: false,
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
        let debits = testkit::purchases::debited(store, user).await;
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
    assert_eq!(testkit::purchases::debit_count(&*store, "fan").await, 1);
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
