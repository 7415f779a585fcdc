//! A start on a queued pack (issue 29): the fan's entry read with the start's state, checked
//! ([`start_admission`]), and updated inside the start's one transaction on the condition that it
//! still admits them ([`crate::purchase_conditions::entry_admits`]): one more unit bought, and the admission
//! over (`done`) when that brings the fan to the pack's limit. A cancellation returns the entry
//! as it is then, which says why (lapsed meanwhile, or another start of theirs came first).
//! After the line has finished, an entrant's start passes without touching the entry (issue 42):
//! whether it has is read from the line's state, kept by the instance ([`super::super::line_cache`]).

use aws_sdk_dynamodb::types::TransactWriteItem;

use crate::StoreError;
use crate::dynamo::queue::{entry_key, state_key};
use crate::dynamo::records::queue::{entry_from_item, state_from_item};
use crate::dynamo::transaction::update;
use crate::dynamo::{DynamoStore, Item, number, s};
use crate::purchases::StartError;
use crate::purchases::decide::EntryWrite;
use crate::schema::{ENTRY_BOUGHT, ENTRY_STATUS};
use domain::ids::PackId;
use domain::packs::Pack;
use domain::purchases::{StartRefusal, StartRequest};
use domain::queue::admission::{needs_line_state, start_admission};
use domain::queue::entry::QueueEntry;
use domain::queue::state::StoredStatus;

/// The entry of an item a cancellation returned.
pub(super) fn entry_of(item: Option<Item>) -> Result<Option<QueueEntry>, StoreError> {
    item.map(entry_from_item).transpose()
}

impl DynamoStore {
    /// For a start on `pack` by the fan of `entry`: `None` when it asks nothing of the line (no
    /// queue, or after the line); else what the fan had bought, if `entry` admits them now; or
    /// the refusal that says which case.
    pub(super) async fn admission(
        &self,
        pack: &Pack,
        entry: Option<&QueueEntry>,
        request: &StartRequest,
    ) -> Result<Option<u32>, StartError> {
        let queued = pack.queue.is_some();
        let finished = queued
            && needs_line_state(entry, request.now)
            && self.line_finished(&request.pack_id).await?;
        start_admission(queued, entry, finished, request.now)
            .map_err(|refusal| StartRefusal::NotAdmitted(refusal).into())
    }

    /// Whether `pack_id`'s line has finished: as the instance knows it, else read (eventually
    /// consistent: a line just finished is seen a moment later, which only delays the sale).
    async fn line_finished(&self, pack_id: &PackId) -> Result<bool, StoreError> {
        if let Some(known) = self.lines.finished(pack_id) {
            return Ok(known);
        }
        let finished = match self.get_item(state_key(pack_id), false).await? {
            Some(item) => state_from_item(item)?.status == StoredStatus::Finished,
            None => false,
        };
        self.lines.learn(pack_id, finished);
        Ok(finished)
    }
}

/// The transaction's update of the fan's entry, as the start decided it.
pub(super) fn admission_action(
    table: &str,
    request: &StartRequest,
    entry: &EntryWrite,
) -> Result<TransactWriteItem, StoreError> {
    let (expression, status) = match entry.done {
        Some(status) => ("SET #bought = :next, #status = :done", Some(status)),
        None => ("SET #bought = :next", None),
    };
    let mut values = vec![(":next", number(entry.bought))];
    let mut names = vec![("#bought", ENTRY_BOUGHT)];
    if let Some(status) = status {
        values.push((":done", s(status.as_str())));
        names.push(("#status", ENTRY_STATUS));
    }
    update(
        table,
        entry_key(&request.pack_id, &request.user_id),
        expression,
        &entry.condition,
        &names,
        values,
    )
}
