//! The fan's own view, run against both stores (DynamoStore on moto_server, MemoryStore): every
//! page of every filter, paged through to the end, holds each of the fan's entries exactly once,
//! in the list's order, and nothing of anybody else's; the ledger's credits less its debits are
//! the balance.
//!
//! Hundreds of purchases are seeded with `SeedPurchases` (a batch write, not a transaction per
//! start: moto copies the whole table for each transaction's action).

use std::collections::BTreeSet;
use std::sync::Arc;

use domain::cash::ledger::EntryKind;
use domain::cash::{Money, parse_credit};
use domain::purchases::mine::{
    ItemsPosition, MyItemsQuery, MyPurchasesQuery, Page, StatusFilter, opened_list_key,
    purchase_list_key,
};
use domain::purchases::{Purchase, StartRequest, purchase_id};
use domain::timestamp::Timestamp;
use store::Store;
use store::purchases::{SeedPurchases, Started};
use testkit::ids;
use testkit::mine::{PACKS, RARITIES, all_pages, ledger, ledger_sum, purchases};

testkit::store_contract!(
    arc:
    paging_through_250_purchases_finds_each_once_with_every_filter,
    paging_through_1000_items_finds_each_once_with_every_filter,
    the_ledger_lists_every_credit_and_debit_and_adds_up_to_the_balance,
    balances_are_every_currency_held_sorted_and_none_for_a_stranger,
);

async fn paging_through_250_purchases_finds_each_once_with_every_filter(
    store: Arc<impl Store + SeedPurchases>,
) {
    let now = Timestamp::now();
    let mine = purchases("fan-1", 250, 0, false, now);
    // Another fan's, at instants between the first's.
    store.seed_purchases(&mine).await.unwrap();
    store
        .seed_purchases(&purchases("fan-2", 120, 30, false, now))
        .await
        .unwrap();
    let mut statuses: Vec<Option<StatusFilter>> = vec![None];
    statuses.extend(
        ["reserved", "completed", "opened", "expired"]
            .into_iter()
            .map(StatusFilter::parse),
    );
    let mut packs: Vec<Option<&str>> = vec![None];
    packs.extend(PACKS.iter().copied().map(Some));
    for status in &statuses {
        for pack in &packs {
            let query = |limit, after| MyPurchasesQuery {
                user_id: ids::user("fan-1"),
                status: *status,
                pack_id: pack.map(ids::pack),
                limit,
                after,
                now,
            };
            let mut expected: Vec<&Purchase> =
                mine.iter().filter(|p| query(1, None).matches(p)).collect();
            expected.sort_by_key(|p| std::cmp::Reverse(purchase_list_key(p)));
            let expected: Vec<String> = expected.iter().map(|p| p.id.to_string()).collect();
            assert!(!expected.is_empty());
            for limit in [7, 100] {
                let listed = all_pages(limit, |after| {
                    let store = store.clone();
                    let query = query(limit, after);
                    async move { store.list_my_purchases(&query).await.unwrap() }
                })
                .await;
                assert!(listed.iter().all(|p| p.user_id.as_str() == "fan-1"));
                let ids: Vec<String> = listed.iter().map(|p| p.id.to_string()).collect();
                assert_eq!(
                    ids, expected,
                    "status {status:?}, pack {pack:?}, limit {limit}"
                );
            }
        }
    }
    // `completed` is paid and not opened; `expired` takes the holds past their end that the
    // sweep has not released.
    let shown = |filter: &str| {
        let filter = StatusFilter::parse(filter);
        mine.iter()
            .filter(|p| filter.is_none_or(|f| p.status_at(now) == f.status()))
            .count()
    };
    assert_eq!(shown("completed"), 50);
    assert_eq!(shown("expired"), 100);
}

async fn paging_through_1000_items_finds_each_once_with_every_filter(
    store: Arc<impl Store + SeedPurchases>,
) {
    let now = Timestamp::now();
    let mine = purchases("fan-1", 200, 0, true, now);
    store.seed_purchases(&mine).await.unwrap();
    store
        .seed_purchases(&purchases("fan-2", 40, 17, true, now))
        .await
        .unwrap();
    let mut packs: Vec<Option<&str>> = vec![None];
    packs.extend(PACKS.iter().copied().map(Some));
    let mut rarities: Vec<Option<&str>> = vec![None];
    rarities.extend(RARITIES.iter().copied().map(Some));
    for pack in &packs {
        for rarity in &rarities {
            let mut expected: Vec<(String, String, u32)> =
                mine.iter()
                    .filter(|p| pack.is_none_or(|id| p.pack_id.as_str() == id))
                    .flat_map(|p| {
                        p.items.iter().flatten().map(move |item| {
                            (opened_list_key(p).unwrap(), p.id.to_string(), item.slot)
                        })
                    })
                    .filter(|(_, id, slot)| {
                        rarity.is_none_or(|r| {
                            mine.iter()
                                .find(|p| p.id.as_str() == id)
                                .unwrap()
                                .items
                                .as_ref()
                                .unwrap()[*slot as usize]
                                .rarity
                                == r
                        })
                    })
                    .collect();
            // Newest opening first, then purchase id (the key, backwards), then slot.
            expected.sort_by(|a, b| b.0.cmp(&a.0).then(a.2.cmp(&b.2)));
            let expected: Vec<(String, u32)> = expected
                .into_iter()
                .map(|(_, id, slot)| (id, slot))
                .collect();
            if pack.is_none() && rarity.is_none() {
                assert_eq!(expected.len(), 1000);
            }
            // Small pages (many end inside a purchase) without filters; pages of the default
            // size and the largest with each filter (moto is slow to query 1,000 items often).
            let limits: &[usize] = match (pack, rarity) {
                (None, None) => &[7, 100],
                _ => &[50],
            };
            for &limit in limits {
                let listed = all_pages(limit, |after| {
                    let store = store.clone();
                    let query = MyItemsQuery {
                        user_id: ids::user("fan-1"),
                        pack_id: pack.map(ids::pack),
                        rarity: rarity.map(str::to_owned),
                        limit,
                        after: after.map(|a| ItemsPosition::parse(&a).expect("a position")),
                    };
                    async move { store.list_my_items(&query).await.unwrap() }
                })
                .await;
                let got: Vec<(String, u32)> = listed
                    .iter()
                    .map(|item| (item.purchase_id.to_string(), item.item.slot))
                    .collect();
                assert_eq!(
                    got, expected,
                    "pack {pack:?}, rarity {rarity:?}, limit {limit}"
                );
                let unique: BTreeSet<&(String, u32)> = got.iter().collect();
                assert_eq!(unique.len(), got.len(), "each item once");
            }
        }
    }
}

fn start(user: &str, pack_id: &str, key: &str, now: Timestamp) -> StartRequest {
    StartRequest {
        user_id: ids::user(user),
        pack_id: ids::pack(pack_id),
        purchase_id: purchase_id(&ids::user(user), key),
        requested_seed: None,
        client_seed: "c".into(),
        now,
        expires_at: now.plus_seconds(600).unwrap(),
        policy: testkit::purchases::ROOMY,
        human_checked: false,
    }
}

async fn the_ledger_lists_every_credit_and_debit_and_adds_up_to_the_balance(
    store: Arc<impl Store + SeedPurchases>,
) {
    let pack = testkit::packs::active("ledger-pack", 60);
    testkit::packs::save(store.as_ref(), &pack).await;
    for (user, amount, currency, reference) in [
        ("fan-1", 5_000, "USD", "grant-1"),
        ("fan-2", 7_000, "USD", "grant-2"),
        ("fan-1", 300, "EUR", "a-reference:with/any~visible@chars"),
        ("fan-1", 1_000, "USD", "grant-3"),
    ] {
        let credit = parse_credit(user, &amount.to_string(), currency, reference).unwrap();
        store.credit_cash(&credit, Timestamp::now()).await.unwrap();
    }
    let mut paid = Vec::new();
    for key in ["k1", "k2", "k3"] {
        let Started::Created(purchase) = store
            .start_purchase(&start("fan-1", &pack.id, key, Timestamp::now()))
            .await
            .unwrap()
        else {
            panic!("a new purchase")
        };
        store
            .complete_purchase(
                &purchase.user_id,
                &purchase.pack_id,
                &purchase.id,
                Timestamp::now(),
            )
            .await
            .unwrap();
        paid.push(purchase);
    }
    // The store's own writes list them: the start's put (my purchases), the open's update (my
    // items), each at once.
    let opened = store
        .open_purchase(
            &paid[0].user_id,
            &paid[0].pack_id,
            &paid[0].id,
            Timestamp::now(),
        )
        .await
        .unwrap()
        .purchase;
    let listed = |status: &str| MyPurchasesQuery {
        user_id: ids::user("fan-1"),
        status: StatusFilter::parse(status),
        pack_id: None,
        limit: 10,
        after: None,
        now: Timestamp::now(),
    };
    let ids_of = |page: Page<Purchase>| -> Vec<String> {
        page.entries.iter().map(|p| p.id.to_string()).collect()
    };
    let opened_list = store.list_my_purchases(&listed("opened")).await.unwrap();
    assert_eq!(ids_of(opened_list), vec![opened.id.to_string()]);
    // Newest start first.
    let paid_ids: Vec<String> = paid[1..].iter().rev().map(|p| p.id.to_string()).collect();
    let completed = store.list_my_purchases(&listed("completed")).await.unwrap();
    assert_eq!(ids_of(completed), paid_ids, "paid, not opened");
    let items = store
        .list_my_items(&MyItemsQuery {
            user_id: ids::user("fan-1"),
            pack_id: None,
            rarity: None,
            limit: 100,
            after: None,
        })
        .await
        .unwrap();
    let drawn: Vec<_> = items.entries.iter().map(|item| item.item.clone()).collect();
    assert_eq!(Some(drawn), opened.items, "the opened pack's items");
    let entries = ledger(store.as_ref(), "fan-1", None, 2).await;
    assert_eq!(entries.len(), 6, "three credits, three debits: {entries:?}");
    let debits: Vec<_> = entries
        .iter()
        .filter(|e| e.kind == EntryKind::Debit)
        .collect();
    assert_eq!(debits.len(), 3);
    for purchase in &paid {
        assert!(
            debits
                .iter()
                .any(|d| d.purchase_id.as_ref() == Some(&purchase.id)
                    && d.amount == purchase.price)
        );
    }
    assert!(
        entries
            .iter()
            .filter(|e| e.kind == EntryKind::Credit)
            .all(|e| e.purchase_id.is_none())
    );
    // No entry shows a credit's reference.
    assert!(entries.iter().all(|e| !e.id.contains("grant")));
    let usd = ledger(store.as_ref(), "fan-1", Some("USD"), 1).await;
    assert_eq!(usd.len(), 5);
    assert!(usd.iter().all(|e| e.amount.currency == "USD"));
    for (user, currency) in [("fan-1", "USD"), ("fan-1", "EUR"), ("fan-2", "USD")] {
        assert_eq!(
            ledger_sum(store.as_ref(), user, currency).await,
            i128::from(
                store
                    .get_balance(&testkit::ids::user(user), currency)
                    .await
                    .unwrap()
            ),
            "{user} {currency}"
        );
    }
    assert_eq!(ledger(store.as_ref(), "fan-2", None, 5).await.len(), 1);
    assert!(ledger(store.as_ref(), "fan-3", None, 5).await.is_empty());
}

async fn balances_are_every_currency_held_sorted_and_none_for_a_stranger(
    store: Arc<impl Store + SeedPurchases>,
) {
    assert_eq!(
        store
            .get_balances(&testkit::ids::user("fan-1"))
            .await
            .unwrap(),
        Vec::new()
    );
    for (amount, currency, reference) in [(5, "USD", "r1"), (7, "EUR", "r2"), (9, "CAD", "r3")] {
        let credit = parse_credit("fan-1", &amount.to_string(), currency, reference).unwrap();
        store.credit_cash(&credit, Timestamp::now()).await.unwrap();
    }
    let money = |amount, currency: &str| Money {
        amount,
        currency: currency.into(),
    };
    assert_eq!(
        store
            .get_balances(&testkit::ids::user("fan-1"))
            .await
            .unwrap(),
        vec![money(9, "CAD"), money(7, "EUR"), money(5, "USD")]
    );
    assert_eq!(
        store
            .get_balances(&testkit::ids::user("fan-2"))
            .await
            .unwrap(),
        Vec::new()
    );
}
