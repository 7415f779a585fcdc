//! A start on a queued pack (issue 29): the fan's entry read with the start's state, checked
//! ([`check_admitted`]), and updated inside the start's one transaction on the condition that it
//! still admits them ([`conditions::entry_admits`]): one more unit bought, and the admission
//! over (`done`) when that brings the fan to the pack's limit. A cancellation returns the entry
//! as it is then, which says why (lapsed meanwhile, or another start of theirs came first).

use aws_sdk_dynamodb::types::TransactWriteItem;

use crate::packs::Pack;
use crate::purchases::{StartRefusal, StartRequest};
use crate::queue::admission::{Allowance, check_admitted, start_finishes};
use crate::queue::entry::{EntryStatus, QueueEntry};
use crate::store::StoreError;
use crate::store::dynamo::queue::entry_key;
use crate::store::dynamo::records::queue::entry_from_item;
use crate::store::dynamo::transaction::update;
use crate::store::dynamo::{Item, number, s};
use crate::store::purchase_conditions as conditions;
use crate::store::schema::{ENTRY_BOUGHT, ENTRY_STATUS};

/// The entry of an item a cancellation returned.
pub(super) fn entry_of(item: Option<Item>) -> Result<Option<QueueEntry>, StoreError> {
    item.map(entry_from_item).transpose()
}

/// For a start on `pack`: `None` when the pack has no queue; else what the fan had bought, if
/// `entry` admits them now, or the refusal that says which case.
pub(super) fn admission(
    pack: &Pack,
    entry: Option<&QueueEntry>,
    request: &StartRequest,
) -> Result<Option<u32>, StartRefusal> {
    if pack.queue.is_none() {
        return Ok(None);
    }
    check_admitted(entry, request.now).map_err(StartRefusal::NotAdmitted)?;
    Ok(entry.map(|entry| entry.bought))
}

/// The transaction's update of the fan's entry, who had `bought` before this start.
pub(super) fn admission_action(
    table: &str,
    pack: &Pack,
    request: &StartRequest,
    bought: u32,
) -> Result<TransactWriteItem, StoreError> {
    let next = bought + 1;
    let (expression, status) = if start_finishes(Allowance(pack.max_per_user), next) {
        (
            "SET #bought = :next, #status = :done",
            Some(EntryStatus::Done),
        )
    } else {
        ("SET #bought = :next", None)
    };
    let mut values = vec![(":next", number(next))];
    let mut names = vec![("#bought", ENTRY_BOUGHT)];
    if let Some(status) = status {
        values.push((":done", s(status.as_str())));
        names.push(("#status", ENTRY_STATUS));
    }
    update(
        table,
        entry_key(&request.pack_id, &request.user_id),
        expression,
        &conditions::entry_admits(request.now, bought),
        &names,
        values,
    )
}
