//! The queue keeper's storage (issue 29): finding the lines with work, the close (the entrant
//! set committed), the draw (positions written, the seed revealed) and admission, each a step
//! the keeper's pass (`handlers::queue_keeper`) takes in order. Every step that could race
//! another keeper is one conditional write: a close and a draw on the state's status, a claim
//! of positions on `admittedThrough` as read, an admission on the entry being `queued`, the end
//! of a window on it being `admitted` and run out.

pub mod decide;

use std::future::Future;

use crate::StoreError;
use domain::ids::PackId;
use domain::packs::Pack;
use domain::queue::admission::{Allowance, WindowEnd};
use domain::queue::entry::QueueEntry;
use domain::queue::events::Admit;
use domain::queue::state::{Beacon, OrderedEntry, QueueState};
use domain::queue::terms::DEFAULT_PASS_SECONDS;
use domain::timestamp::Timestamp;

/// What a close committed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Closed {
    pub entrants: u64,
    pub root: [u8; 32],
    /// The beacon round the draw will use (the terms' one, unless the close came too late).
    pub round: u64,
}

/// What a draw wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Drawn {
    pub entrants: u64,
}

/// What the entries a mark moves past ended with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Ended {
    /// Entries whose window passed unused.
    pub lapsed: u64,
    /// Units the entries' fans started.
    pub bought: u64,
}

/// What an admission pass decides on, read in this order: the state, the admitted entries not
/// yet known to be over (positions `over_through + 1..=admitted_through`), then the pack's
/// shares. The
/// entries come before the shares so that a purchase between the two reads is seen in both or
/// only in the shares (fewer units for as much demand: never too many fans let in).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdmissionView {
    pub state: QueueState,
    /// What one fan may buy (the pack's `maxPerUser`).
    pub allowance: Allowance,
    /// An admitted fan's window.
    pub pass_seconds: u32,
    /// Every position up to this one is over (lapsed, done or sold out).
    pub over_through: u64,
    /// The entries at positions `over_through + 1..=admitted_through`, in position order.
    pub admitted: Vec<QueueEntry>,
    /// Units neither sold nor held (the shares' `remaining`).
    pub left: u64,
    /// Whether every unit is paid for: nothing can come back, the sale is over.
    pub all_sold: bool,
}

impl AdmissionView {
    /// The view of `pack`'s line at `state`, with the entries read after `over_through`, the
    /// units `left` in its shares and how many were `sold` (paid).
    pub fn of(
        pack: &Pack,
        state: QueueState,
        (over_through, admitted): (u64, Vec<QueueEntry>),
        (left, sold): (u64, u64),
    ) -> Self {
        Self {
            allowance: Allowance::of(pack.max_per_user),
            pass_seconds: pack
                .queue
                .map_or(DEFAULT_PASS_SECONDS, |terms| terms.pass_seconds),
            over_through,
            admitted,
            left,
            all_sold: sold >= pack.total_supply,
            state,
        }
    }
}

/// The queues not yet finished, by close (a Query of the pending index: no Scan).
pub trait PendingQueues: Send + Sync {
    fn pending_queues(&self) -> impl Future<Output = Result<Vec<QueueState>, StoreError>> + Send;
}

/// Commits the entrant set of a line past its close at `now`: every entry read back from the
/// entry index, the sorted ids written in pages, `entrants`, `entrantsRoot` and `committedAt` on
/// the state ([`domain::queue::commit::Commitment::close`]: the round re-fixed when `now` is too
/// late for the terms' one), whose status goes `open` -> `closed` (conditioned: `None` when it
/// was not open, another keeper closed it).
pub trait CloseQueue: Send + Sync {
    fn close_queue(
        &self,
        pack_id: &PackId,
        now: Timestamp,
    ) -> impl Future<Output = Result<Option<Closed>, StoreError>> + Send;
}

/// Draws a closed line with `beacon`: positions by [`domain::queue::fairness::draw_order`] with
/// the queue's seed (checked against its published hash), the beacon checked against the line
/// ([`QueueState::drawable_with`]: its round, committed in time), written on every entry (status
/// `queued`) and in order pages; the seed and the beacon on the state, status `closed` ->
/// `drawn` (conditioned: `None` when it was not closed).
pub trait DrawQueue: Send + Sync {
    fn draw_queue(
        &self,
        pack_id: &PackId,
        beacon: &Beacon,
        now: Timestamp,
    ) -> impl Future<Output = Result<Option<Drawn>, StoreError>> + Send;
}

/// Admission's reads and writes.
pub trait AdmitQueue: Send + Sync {
    /// What a pass decides on (`None`: no such drawn line).
    fn admission_view(
        &self,
        pack_id: &PackId,
    ) -> impl Future<Output = Result<Option<AdmissionView>, StoreError>> + Send;

    /// The entries at positions `from..from + count` (from 1), in order.
    fn ordered(
        &self,
        pack_id: &PackId,
        from: u64,
        count: u64,
    ) -> impl Future<Output = Result<Vec<OrderedEntry>, StoreError>> + Send;

    /// Moves `admittedThrough` from `through` (as read) to `to`, and `lastWaveAt` to `now`:
    /// `false` when another keeper moved it first (this one then admits nobody).
    fn claim_positions(
        &self,
        pack_id: &PackId,
        through: u64,
        to: u64,
        now: Timestamp,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// Admits `admit`'s fan until `admit.until`, if their entry is `queued` (at most once:
    /// `false` otherwise), with its `queue.admitted` event. One write on the fan's own entry
    /// (and their own events): a wave's admissions share no item.
    fn admit_entry(
        &self,
        pack_id: &PackId,
        admit: &Admit,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// Ends `entry`'s window, if it is admitted, its window ran out at `now` and it bought what
    /// was read: `done` if they bought, else `lapsed` (`None`: nothing to end).
    fn end_window(
        &self,
        entry: &QueueEntry,
        now: Timestamp,
    ) -> impl Future<Output = Result<Option<WindowEnd>, StoreError>> + Send;

    /// Moves `overThrough` from `through` (as read) to `to`, adding what the entries passed
    /// over ended with to the report's counters: each entry is counted once, by the write that
    /// moves the mark past it.
    fn advance_over_through(
        &self,
        pack_id: &PackId,
        through: u64,
        to: u64,
        ended: Ended,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// Ends the line at `admitted_through` (conditioned:
    /// [`crate::queue_conditions::finishing`]): the state
    /// `finished`, every entry after `admitted_through` still `queued` `sold_out`, then the line
    /// off the pending index, so that a keeper stopped in between finishes it on its next pass.
    /// How many entries this call marked.
    fn finish_queue(
        &self,
        pack_id: &PackId,
        admitted_through: u64,
    ) -> impl Future<Output = Result<u64, StoreError>> + Send;
}

/// Everything the keeper does.
pub trait QueueKeeper: PendingQueues + CloseQueue + DrawQueue + AdmitQueue {}

impl<S: PendingQueues + CloseQueue + DrawQueue + AdmitQueue> QueueKeeper for S {}

/// Refuses a beacon that may not draw `state` (another round, or a set committed too late for
/// it): the order would not be one fixed before the randomness existed.
pub(crate) fn check_beacon(state: &QueueState, beacon: &Beacon) -> Result<(), StoreError> {
    state.drawable_with(beacon).map_err(|refused| {
        StoreError::internal(format!("the draw of {} refused: {refused}", state.pack_id))
    })
}

/// Refuses to draw with a seed other than the one whose SHA-256 the line published before it
/// opened: the order would be one nobody can check.
pub(crate) fn check_seed(state: &QueueState, seed: &[u8; 32]) -> Result<(), StoreError> {
    let hash = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, seed);
    if hash.as_ref() == state.seed_hash {
        Ok(())
    } else {
        Err(StoreError::internal(format!(
            "the queue seed of {} does not match its published hash",
            state.pack_id
        )))
    }
}
