//! The operations of a pack's waiting room that fans and the public call (the keeper's are in
//! its own module): join, a fan's entry, the line as the public sees it, its entrants.

use std::future::Future;

use crate::StoreError;
use domain::ids::{PackId, UserId};
use domain::purchases::mine::Page;
use domain::queue::admission::Allowance;
use domain::queue::entry::QueueEntry;
use domain::queue::state::{EntrantPage, EntrantsIndex, QueueState};
use domain::queue::terms::QueueTerms;
use domain::timestamp::time_key;

/// A join's answer: the fan's entry, new or the one they already had.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Joined {
    /// This call created it.
    New(QueueEntry),
    /// The fan had joined before: their entry as it is (the new one was not written).
    Replayed(QueueEntry),
}

/// Writes `entry` as its fan's one entry in its pack's line: one conditional Put on the fan's own
/// key ([`conditions::entry_new`]), with its index entry on one of the line's shards. A fan who
/// has an entry gets it back, unchanged, however many joins race.
pub trait JoinQueue: Send + Sync {
    fn join_queue(
        &self,
        entry: &QueueEntry,
    ) -> impl Future<Output = Result<Joined, StoreError>> + Send;
}

/// A fan's entry in a pack's line, or `None` when they did not join.
pub trait GetQueueEntry: Send + Sync {
    fn queue_entry(
        &self,
        pack_id: &PackId,
        user_id: &UserId,
    ) -> impl Future<Output = Result<Option<QueueEntry>, StoreError>> + Send;
}

/// A page of the fan's entries in every line, newest join first: one Query of their `ENTRIES#`
/// partition of the fan's index (`after`: the list key the page before ended on,
/// [`entry_list_key`]).
pub trait ListMyEntries: Send + Sync {
    fn list_my_entries(
        &self,
        user_id: &UserId,
        limit: usize,
        after: Option<&str>,
    ) -> impl Future<Output = Result<Page<QueueEntry>, StoreError>> + Send;
}

/// An entry's key in its fan's list (the fan's index's sort key).
pub fn entry_list_key(entry: &QueueEntry) -> String {
    time_key(entry.joined_at, entry.pack_id.as_str())
}

/// A line as the public sees it: its pack's terms, its state and the pack's supply summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueView {
    pub terms: QueueTerms,
    pub state: QueueState,
    /// What each admitted fan may buy (the pack's `maxPerUser`).
    pub allowance: Allowance,
    pub total_supply: u64,
    /// The pack's `remaining` summary (the sweep refreshes it every minute).
    pub remaining: u64,
    /// Read from the pack's shares once the line is finished (the report's figures; the
    /// summary above lags): `None` before.
    pub settled: Option<Settled>,
}

/// A finished line's units, as its pack's shares hold them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settled {
    /// Units paid for.
    pub sold: u64,
    /// Units neither sold nor held: after the line, for its entrants.
    pub left: u64,
}

/// A pack's line, or `None` when no such pack, or a pack without a queue. One read of the pack
/// item and the state item (never the pack's draw inputs: the queue function may not read them),
/// and of a finished line the pack's shares too.
pub trait GetQueue: Send + Sync {
    fn get_queue(
        &self,
        pack_id: &PackId,
    ) -> impl Future<Output = Result<Option<QueueView>, StoreError>> + Send;
}

/// Page `page` of a line's sorted entrants (written by the close), or `None` past the last.
pub trait GetEntrantPage: Send + Sync {
    fn entrant_page(
        &self,
        pack_id: &PackId,
        page: u32,
    ) -> impl Future<Output = Result<Option<EntrantPage>, StoreError>> + Send;
}

/// A closed line's [`EntrantsIndex`] (`None` before the close): with the fan's own page, all a
/// Merkle proof needs. One item read (about 9.6 KB at 200,000 entrants); it never changes once
/// the line is closed.
pub trait GetEntrantsIndex: Send + Sync {
    fn entrants_index(
        &self,
        pack_id: &PackId,
    ) -> impl Future<Output = Result<Option<EntrantsIndex>, StoreError>> + Send;
}

/// Every operation of the queue function.
pub trait QueueStore:
    JoinQueue
    + GetQueueEntry
    + GetQueue
    + GetEntrantPage
    + GetEntrantsIndex
    + crate::queue_excluded::CountExclusion
    + crate::queue_excluded::ReadExclusions
    + crate::ratelimit::SpendToken
{
}
impl<
    S: JoinQueue
        + GetQueueEntry
        + GetQueue
        + GetEntrantPage
        + GetEntrantsIndex
        + crate::queue_excluded::CountExclusion
        + crate::queue_excluded::ReadExclusions
        + crate::ratelimit::SpendToken,
> QueueStore for S
{
}

/// The conditions of a queue's writes.
pub mod conditions {
    use crate::condition::Condition;

    /// A fan's entry is written only where they have none: one entry per fan by construction,
    /// whatever races.
    pub fn entry_new() -> Condition {
        Condition::new_item()
    }
}
