//! The keeper's decisions, written once for both stores: what a close commits, what a draw
//! writes, how a window ends and which entries a finish marks. Each store reads the facts, runs
//! the step's condition (`store::queue_conditions`) and writes what these return.

use std::collections::HashMap;

use super::{Closed, Drawn, check_beacon, check_seed};
use crate::StoreError;
use domain::ids::EntryId;
use domain::queue::admission::{WindowEnd, window_end};
use domain::queue::commit::{Commitment, commit, order, order_pages};
use domain::queue::entry::{EntryStatus, QueueEntry};
use domain::queue::state::{Beacon, OrderPage, OrderedEntry, QueueState, StoredStatus};
use domain::timestamp::Timestamp;

/// The close of an open line at `now` over its entries' `ids`: the commitment whose pages and
/// index are written, and what it committed; `state` moved on to `closed` ([`Commitment::close`]).
pub fn close(state: &mut QueueState, ids: Vec<EntryId>, now: Timestamp) -> (Commitment, Closed) {
    let commitment = commit(ids);
    commitment.close(state, now);
    let closed = Closed {
        entrants: commitment.entrants,
        root: commitment.root,
        round: state.beacon_round,
    };
    (commitment, closed)
}

/// What a draw writes: the order and its pages, and each entry's position.
pub struct Draw {
    pub order: Vec<OrderedEntry>,
    pub pages: Vec<OrderPage>,
    positions: HashMap<EntryId, u64>,
}

impl Draw {
    /// What the draw reports.
    pub fn drawn(&self) -> Drawn {
        Drawn {
            entrants: self.order.len() as u64,
        }
    }

    /// `entry` as the draw writes it: its position, `queued`.
    pub fn place(&self, entry: &mut QueueEntry) {
        entry.position = self.positions.get(&entry.entry_id).copied();
        entry.status = EntryStatus::Queued;
    }
}

/// The draw of a closed line with `seed` and `beacon` over its `entries` (id, fan): refused
/// when the beacon may not draw it or the seed is not the published one; `state` moved on to
/// `drawn`, with the seed and the beacon.
pub fn draw(
    state: &mut QueueState,
    seed: [u8; 32],
    beacon: &Beacon,
    entries: Vec<(EntryId, domain::ids::UserId)>,
) -> Result<Draw, StoreError> {
    check_beacon(state, beacon)?;
    check_seed(state, &seed)?;
    let order = order(&seed, &beacon.randomness, entries);
    let positions = order
        .iter()
        .zip(1u64..)
        .map(|(entry, position)| (entry.entry_id.clone(), position))
        .collect();
    state.status = StoredStatus::Drawn;
    state.seed = Some(seed);
    state.beacon = Some(beacon.clone());
    Ok(Draw {
        pages: order_pages(&order),
        order,
        positions,
    })
}

/// How the window of a fan who bought `bought` ends, and the status it leaves their entry in.
pub fn end_of_window(bought: u32) -> (WindowEnd, EntryStatus) {
    let end = window_end(bought);
    let status = match end {
        WindowEnd::Lapsed => EntryStatus::Lapsed,
        WindowEnd::Done => EntryStatus::Done,
    };
    (end, status)
}

/// Whether a finish at `admitted_through` marks `entry` sold out: still queued, behind the last
/// position admitted.
pub fn sold_out_at_finish(entry: &QueueEntry, admitted_through: u64) -> bool {
    entry.status == EntryStatus::Queued && entry.position.is_some_and(|at| at > admitted_through)
}
