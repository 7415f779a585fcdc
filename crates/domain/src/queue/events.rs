//! The waiting room's events (docs/events.md), decided here once for both stores: a join's
//! `queue.joined`, a draw's `queue.drawn` (the pack's, once per line) and an admission's
//! `queue.admitted`, each written in the one write that makes its change.

use crate::events::{NewEvent, QueueAdmitted, QueueDrawn, QueueJoined};
use crate::ids::{PackId, UserId};
use crate::queue::entry::QueueEntry;
use crate::timestamp::Timestamp;

/// The events of `entry`'s join, written with the entry (a fan's repeat writes neither).
pub fn joined(entry: &QueueEntry) -> Vec<NewEvent> {
    vec![NewEvent::fan(
        &entry.user_id,
        QueueJoined {
            pack_id: entry.pack_id.clone(),
            entry_id: entry.entry_id.clone(),
        },
    )]
}

/// The events of the draw of `pack_id`'s line of `entrants`, written with the state's move to
/// `drawn` (which happens once per line).
pub fn drawn(pack_id: &PackId, entrants: u64) -> Vec<NewEvent> {
    vec![NewEvent::pack(
        pack_id,
        QueueDrawn {
            pack_id: pack_id.clone(),
            entrants,
        },
    )]
}

/// The keeper's admission of one fan: their place in the drawn order, and their window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Admit {
    pub user_id: UserId,
    /// Their position in the drawn order, from 1.
    pub position: u64,
    /// When the keeper admits them.
    pub at: Timestamp,
    /// When their window to start a purchase ends.
    pub until: Timestamp,
}

impl Admit {
    /// The events of the admission in `pack_id`'s line, written with the entry's move from
    /// `queued` to `admitted` (at most once per entry).
    pub fn events(&self, pack_id: &PackId) -> Vec<NewEvent> {
        vec![NewEvent::fan(
            &self.user_id,
            QueueAdmitted {
                pack_id: pack_id.clone(),
                position: self.position,
                until: self.until,
            },
        )]
    }
}
