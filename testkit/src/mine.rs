//! Purchases made up for the fan's-view tests: many of them, of every status, of two packs,
//! at instants that interleave between users and sometimes tie (so ids decide).

use domain::cash::Money;
use domain::cash::ledger::{EntryKind, LedgerEntry, LedgerQuery};
use domain::purchases::mine::Page;
use domain::purchases::{OpenedFairness, OpenedItem, Purchase, PurchaseStatus};
use domain::timestamp::Timestamp;
use store::cash::ListLedger;

use crate::ids;

pub const RARITIES: [&str; 3] = ["common", "rare", "epic"];
pub const PACKS: [&str; 2] = ["pack-a", "pack-b"];
pub const ITEMS_PER_PACK: u32 = 5;

/// The status of the `n`th made-up purchase: reserved (live), reserved but past its hold (shown
/// `expired`), expired, completed, opened, in turn.
fn status_of(n: u32) -> PurchaseStatus {
    match n % 5 {
        0 | 1 => PurchaseStatus::Reserved,
        2 => PurchaseStatus::Expired,
        3 => PurchaseStatus::Completed,
        _ => PurchaseStatus::Opened,
    }
}

fn seconds(now: Timestamp, delta: i64) -> Timestamp {
    now.plus_seconds(delta).expect("in range")
}

/// `user`'s `n`th purchase, as at `now`; `opened` forces it opened. Two consecutive `n` share
/// their `reservedAt` (`offset` shifts one user's instants against another's); openings are in
/// another order than starts.
pub fn purchase(user: &str, n: u32, offset: i64, opened: bool, now: Timestamp) -> Purchase {
    let status = if opened {
        PurchaseStatus::Opened
    } else {
        status_of(n)
    };
    let reserved_at = seconds(now, -86_400 - 60 * i64::from(n / 2) - offset);
    let expires_at = match (status, n % 5) {
        (PurchaseStatus::Reserved, 0) => seconds(now, 600),
        _ => seconds(reserved_at, 600),
    };
    let paid = matches!(status, PurchaseStatus::Completed | PurchaseStatus::Opened);
    let opened_at = (status == PurchaseStatus::Opened)
        .then(|| seconds(now, -i64::from((n * 7919) % 50_000) - offset));
    let pack = PACKS[(n as usize / 3) % PACKS.len()];
    Purchase {
        id: ids::purchase(&format!("{user}-{n:04}")),
        pack_id: ids::pack(pack),
        user_id: ids::user(user),
        status,
        price: Money {
            amount: 100,
            currency: "USD".into(),
        },
        client_seed: "seed".into(),
        requested_seed: None,
        nonce: u64::from(n) + 1,
        reserved_at,
        expires_at,
        completed_at: paid.then(|| seconds(reserved_at, 30)),
        opened_at,
        items: opened_at.map(|_| {
            (0..ITEMS_PER_PACK)
                .map(|slot| OpenedItem {
                    slot,
                    item_id: format!("{pack}-item-{slot}"),
                    name: format!("Item {slot}"),
                    rarity: RARITIES[((n + slot) as usize) % RARITIES.len()].into(),
                    image_url: None,
                })
                .collect()
        }),
        fairness: opened_at.map(|_| OpenedFairness {
            server_seed_hash: "ab".repeat(32),
            server_seed: None,
        }),
        supply_shard: 0,
        hold_slot: None,
        admitted: false,
    }
}

/// `count` purchases of `user` (see [`purchase`]).
pub fn purchases(
    user: &str,
    count: u32,
    offset: i64,
    opened: bool,
    now: Timestamp,
) -> Vec<Purchase> {
    (0..count)
        .map(|n| purchase(user, n, offset, opened, now))
        .collect()
}

/// Every page of a list from the start: what `read` answers for each position, until it says
/// there is no next page. Each page keeps to `limit`.
pub async fn all_pages<T, F, Fut>(limit: usize, mut read: F) -> Vec<T>
where
    F: FnMut(Option<String>) -> Fut,
    Fut: std::future::Future<Output = Page<T>>,
{
    let mut all = Vec::new();
    let mut after = None;
    for _ in 0..2_000 {
        let page = read(after.take()).await;
        assert!(page.entries.len() <= limit, "a page over its limit");
        all.extend(page.entries);
        match page.next {
            Some(next) => after = Some(next),
            None => return all,
        }
    }
    panic!("the pages never ended");
}

/// Every entry of `user`'s ledger (in `currency`), a page of `limit` at a time; checks that they
/// come newest first, each once.
pub async fn ledger<S: ListLedger>(
    store: &S,
    user: &str,
    currency: Option<&str>,
    limit: usize,
) -> Vec<LedgerEntry> {
    let entries = all_pages(limit, |after| {
        let query = LedgerQuery {
            user_id: ids::user(user),
            currency: currency.map(str::to_owned),
            limit,
            after,
        };
        async move { store.list_ledger(&query).await.unwrap() }
    })
    .await;
    let keys: Vec<String> = entries.iter().map(LedgerEntry::list_key).collect();
    let mut sorted = keys.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    sorted.dedup();
    assert_eq!(keys, sorted, "newest first, each once");
    entries
}

/// Credits less debits of `user` in `currency`, from their ledger: what their balance must be.
pub async fn ledger_sum<S: ListLedger>(store: &S, user: &str, currency: &str) -> i128 {
    ledger(store, user, Some(currency), 3)
        .await
        .iter()
        .map(|entry| match entry.kind {
            EntryKind::Credit => i128::from(entry.amount.amount),
            EntryKind::Debit => -i128::from(entry.amount.amount),
        })
        .sum()
}

/// Every entry of the array `list` over the pages a client gets from `query` on, following
/// `nextCursor`; `get` answers a query string with a status (200 expected) and a JSON body.
pub async fn every_page<F, Fut>(query: &str, list: &str, get: F) -> Vec<serde_json::Value>
where
    F: FnMut(String) -> Fut,
    Fut: std::future::Future<Output = (u16, serde_json::Value)>,
{
    pages(query, get)
        .await
        .iter()
        .flat_map(|page| page[list].as_array().expect("a list").iter().cloned())
        .collect()
}

/// Every page a client gets from `query` on, following `nextCursor`, as `get` answers them.
pub async fn pages<F, Fut>(query: &str, mut get: F) -> Vec<serde_json::Value>
where
    F: FnMut(String) -> Fut,
    Fut: std::future::Future<Output = (u16, serde_json::Value)>,
{
    let mut all = Vec::new();
    let mut next = query.to_owned();
    loop {
        let (status, body) = get(next).await;
        assert_eq!(status, 200, "{body}");
        let cursor = body["nextCursor"].as_str().map(str::to_owned);
        all.push(body);
        match cursor {
            Some(cursor) if query.is_empty() => next = format!("cursor={cursor}"),
            Some(cursor) => next = format!("{query}&cursor={cursor}"),
            None => return all,
        }
    }
}

/// The items of `section` over the pages of an export (`GET /api/me/export`).
pub fn export_items<'a>(
    pages: &'a [serde_json::Value],
    section: &str,
) -> Vec<&'a serde_json::Value> {
    pages
        .iter()
        .filter(|page| page["section"] == section)
        .flat_map(|page| page["items"].as_array().expect("items"))
        .collect()
}

/// `binary` (a fan's-view function) stops at init with a message naming `CURSOR_SECRET` when
/// everything else is set but that.
pub async fn assert_init_needs_cursor_secret(binary: &str) {
    let env = crate::purchases::PurchaseEnv::new().await;
    let vars = env.vars(&[]);
    let vars: Vec<(&str, &str)> = vars
        .iter()
        .map(|(name, value)| (name.as_str(), value.as_str()))
        .collect();
    crate::runtime_api::assert_init_fails_naming(binary, &vars, "CURSOR_SECRET").await;
}
