//! The conditions the queue keeper puts on its writes (issue 29), declared once: DynamoDB gets
//! each inside the write it guards, the in-memory store checks the same declaration against the
//! item it is about to change. Each names the guarantee it keeps.

use super::condition::{Compare, Condition};
use super::schema::{
    ENTRY_BOUGHT, ENTRY_PASS_EXPIRES_AT, ENTRY_STATUS, QUEUE_ADMITTED_THROUGH, QUEUE_DRAW_LEASE,
    QUEUE_OVER_THROUGH, QUEUE_STATUS,
};
use domain::queue::entry::EntryStatus;
use domain::queue::state::StoredStatus;
use domain::timestamp::Timestamp;

/// The line's stored status is `status`: a close applies to an open line, a draw to a closed
/// one, admission to a drawn one (two keepers never close or draw the same line twice).
pub fn state_is(status: StoredStatus) -> Condition {
    let text: &'static str = status.into();
    Condition::eq(QUEUE_STATUS, text)
}

/// A closed line no keeper is drawing at `now`: one draws at a time (its lease, held for longer
/// than a run lasts, ran out or was never taken).
pub fn draw_free(now: Timestamp) -> Condition {
    state_is(StoredStatus::Closed).and(Condition::absent(QUEUE_DRAW_LEASE).or(Condition::is(
        QUEUE_DRAW_LEASE,
        Compare::Le,
        now.unix_nanos(),
    )))
}

/// A number on the state is `value` as read (0: absent or a stored 0).
fn counter_as_read(name: &'static str, value: u64) -> Condition {
    match value {
        0 => Condition::absent(name).or(Condition::eq(name, 0u64)),
        _ => Condition::eq(name, value),
    }
}

/// `admittedThrough` is what a pass decided on: one keeper at a time claims the next positions,
/// so two racing keepers never both let in fans for the same units.
pub fn admitted_through_as_read(through: u64) -> Condition {
    state_is(StoredStatus::Drawn).and(counter_as_read(QUEUE_ADMITTED_THROUGH, through))
}

/// The line ends at `admittedThrough` as read: drawn (the finish's first write: no claim follows
/// it, a claim needs `drawn`), or already finished there by a keeper that stopped before it
/// marked the fans still queued (its rerun completes the finish).
pub fn finishing(through: u64) -> Condition {
    state_is(StoredStatus::Drawn)
        .or(state_is(StoredStatus::Finished))
        .and(counter_as_read(QUEUE_ADMITTED_THROUGH, through))
}

/// `overThrough` is as read (it only moves forward).
pub fn over_through_as_read(through: u64) -> Condition {
    counter_as_read(QUEUE_OVER_THROUGH, through)
}

fn entry_is(status: EntryStatus) -> Condition {
    Condition::eq(ENTRY_STATUS, status.as_str())
}

/// An entry is admitted only from `queued`: every fan at most once.
pub fn entry_queued() -> Condition {
    entry_is(EntryStatus::Queued)
}

/// A hold its fan started while admitted is released unpaid inside their window: the unit of
/// allowance comes back (issue 42: a fan who bought nothing is not done). Only inside the
/// window, where the keeper's mark has not passed the entry (a done fan is live until their
/// window closes: [`domain::queue::admission::entry_over`]), so the report never counts it twice.
pub fn allowance_back(now: Timestamp) -> Condition {
    entry_is(EntryStatus::Admitted)
        .or(entry_is(EntryStatus::Done))
        .and(Condition::is(
            ENTRY_PASS_EXPIRES_AT,
            Compare::Gt,
            now.unix_nanos(),
        ))
        .and(Condition::is(ENTRY_BOUGHT, Compare::Ge, 1u32))
}

/// An admitted entry's window ran out at `now` with `bought` as read: only then is it ended (a
/// live fan keeps theirs), as `done` or `lapsed` by what they bought.
pub fn window_ran_out(now: Timestamp, bought: u32) -> Condition {
    entry_is(EntryStatus::Admitted)
        .and(Condition::is(
            ENTRY_PASS_EXPIRES_AT,
            Compare::Le,
            now.unix_nanos(),
        ))
        .and(Condition::eq(ENTRY_BOUGHT, bought))
}
