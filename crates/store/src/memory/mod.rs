//! [`MemoryStore`]: the storage traits in process, for the local API (no server needed). Same
//! semantics as [`DynamoStore`](super::DynamoStore), and the same atomicity: every operation
//! runs under one lock, as a DynamoDB conditional write or transaction is applied at once. The
//! shared contract tests run on both.

mod account;
mod cash;
mod catalog;
mod events;
mod fan_view;
mod items;
mod leaderboards;
mod links;
mod locker_room;
mod packs;
mod products;
mod profile;
mod purchases;
mod quests;
mod queue;
mod queue_excluded;
mod queue_keeper;
mod ratelimit;
mod topups;
mod wallets;
mod webhooks;

use std::any::{Any, TypeId};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::packs::StoredPack;
use domain::cash::{Credit, Debit};
use domain::ids::{PackId, PurchaseId, UserId};
use domain::links::Web3Link;
use domain::packs::Pack;
use domain::packs::document::PackDocument;
use domain::packs::listing::ListingKey;
use domain::profile::name::NameKey;
use domain::purchases::{Buys, Purchase};

#[derive(Default)]
pub(crate) struct Tables {
    packs: BTreeMap<String, StoredPack>,
    /// The packs that can be listed, in list order, with their documents: the in-memory
    /// listing index.
    listed: BTreeMap<ListingKey, (Pack, PackDocument)>,
    /// By (user id, provider).
    links: HashMap<(String, String), Web3Link>,
    /// Each fan's wallets by id (the count of wallets is the map's length).
    wallets: HashMap<domain::ids::UserId, BTreeMap<domain::ids::WalletId, domain::wallets::Wallet>>,
    /// Balances by (user id, currency).
    balances: HashMap<(UserId, String), u64>,
    /// Credit ledger entries by reference.
    credits: HashMap<String, Credit>,
    /// Debit ledger entries by (user id, purchase id).
    debits: BTreeMap<(UserId, PurchaseId), Debit>,
    /// Every fan's ledger (credits and debits) by (user id, list key): the fan's index.
    ledger: BTreeMap<(String, String), domain::cash::ledger::LedgerEntry>,
    /// Purchases by (user id, purchase id).
    purchases: HashMap<(UserId, PurchaseId), Purchase>,
    /// A buyer's purchases of a pack, by (user id, pack id).
    buys: HashMap<(UserId, PackId), Buys>,
    /// Each pack's supply, by pack id: the units left in each share.
    supply: HashMap<String, Vec<u64>>,
    /// Each pack's units sold (paid), by pack id.
    sold: HashMap<String, u64>,
    /// Each fan's unpaid holds, by user id.
    unpaid: HashMap<String, domain::purchases::UnpaidHolds>,
    /// The packs whose revealed seed the sweep published.
    revealed: std::collections::HashSet<String>,
    /// Cash top-ups by id.
    top_ups: HashMap<String, domain::topups::TopUp>,
    /// Each fan's pending top-up slots, by user id.
    pending_top_ups: HashMap<UserId, domain::topups::pending::PendingTopUps>,
    /// Fans' profiles (with their revisions), by user id.
    profiles: HashMap<UserId, profile::StoredProfile>,
    /// Who holds each display name, by its key.
    names: HashMap<NameKey, UserId>,
    /// Each fan's locker room as put, by user id.
    shown: HashMap<UserId, locker_room::Shown>,
    /// Each fan's stats, added to by each of their openings, by user id.
    stats: HashMap<UserId, domain::locker_room::stats::LockerStats>,
    /// The catalogue, by id.
    leagues: HashMap<domain::ids::LeagueId, domain::catalog::League>,
    teams: HashMap<domain::ids::TeamId, domain::catalog::Team>,
    /// Each fan's score on each board they scored on, by (board, user id).
    scores: HashMap<(domain::leaderboards::Board, UserId), domain::leaderboards::Score>,
    /// The quests, by id.
    quests: BTreeMap<domain::ids::QuestId, domain::quests::Quest>,
    /// Each fan's claims, by (user id, quest id).
    claims: HashMap<(UserId, domain::ids::QuestId), domain::quests::Claim>,
    /// The quest each claim key claimed, by (user id, claim id).
    claim_keys: HashMap<(UserId, String), domain::ids::QuestId>,
    /// Each queued pack's line (state, secret seed, entrant and order pages), by pack id.
    queues: HashMap<PackId, queue::Line>,
    /// Fans' queue entries, by (pack id, user id).
    queue_entries: BTreeMap<(PackId, UserId), domain::queue::entry::QueueEntry>,
    /// The keeper's mark on each drawn line (`overThrough`), by pack id.
    queue_marks: HashMap<PackId, u64>,
    /// Spent human-check tokens by hash, each until it expires.
    spent: HashMap<String, i64>,
    /// A line's exclusions, by (pack id, reason).
    exclusions: HashMap<(PackId, domain::queue::excluded::Exclusion), u64>,
    /// The tables of the aggregates that keep their in-memory side beside their DynamoDB side
    /// (`store/src/<aggregate>/memory.rs`), each by its type: a new one adds nothing here.
    more: HashMap<TypeId, Box<dyn Any + Send + Sync>>,
}

impl Tables {
    /// Aggregate table `T`, when anything was written to it.
    pub(crate) fn table<T: Any + Send + Sync>(&self) -> Option<&T> {
        self.more.get(&TypeId::of::<T>())?.downcast_ref()
    }

    /// Aggregate table `T`, made empty at its first use.
    pub(crate) fn table_mut<T: Any + Default + Send + Sync>(&mut self) -> &mut T {
        self.more
            .entry(TypeId::of::<T>())
            .or_insert_with(|| Box::<T>::default())
            .downcast_mut()
            .expect("a table is stored under its own type")
    }
}

/// In-process store; clones share the same data.
#[derive(Clone, Default)]
pub struct MemoryStore {
    tables: Arc<RwLock<Tables>>,
    /// Rate-limit counters: the count of each window and when it expires. Under a lock of their
    /// own: every limited request writes one, and under the tables' lock each would stop every
    /// other request's reads (no write of the tables involves a counter).
    counters: Arc<Mutex<ratelimit::Counters>>,
    /// What each rarity adds to a collector score.
    weights: Arc<domain::leaderboards::ScoreWeights>,
}

/// A page of `limit` of a fan's `entries` (each with its key in the fan's index), newest first,
/// below `after`: one partition of the fan's index as DynamoDB reads it.
fn newest_page<'a, T: Clone + 'a>(
    entries: impl IntoIterator<Item = (String, &'a T)>,
    limit: usize,
    after: Option<&str>,
) -> domain::purchases::mine::Page<T> {
    let mut entries: Vec<(String, &T)> = entries
        .into_iter()
        .filter(|(key, _)| after.is_none_or(|after| key.as_str() < after))
        .collect();
    entries.sort_by(|a, b| b.0.cmp(&a.0));
    let more = entries.len() > limit;
    entries.truncate(limit);
    domain::purchases::mine::Page {
        next: more
            .then(|| entries.last().map(|(key, _)| key.clone()))
            .flatten(),
        entries: entries
            .into_iter()
            .map(|(_, entry)| entry.clone())
            .collect(),
    }
}

impl MemoryStore {
    /// The store, its openings scoring with `weights`.
    pub fn with_score_weights(mut self, weights: domain::leaderboards::ScoreWeights) -> Self {
        self.weights = Arc::new(weights);
        self
    }

    pub(crate) fn read(&self) -> RwLockReadGuard<'_, Tables> {
        self.tables.read().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn write(&self) -> RwLockWriteGuard<'_, Tables> {
        self.tables.write().unwrap_or_else(PoisonError::into_inner)
    }

    fn counters(&self) -> MutexGuard<'_, ratelimit::Counters> {
        self.counters.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
