//! Admission on DynamoDB. A pass reads, strongly consistent, the state and the pack item (one
//! BatchGetItem), the order pages of the positions not yet over and those positions' entries
//! (BatchGetItems of 100), then the pack's shares; it writes one conditional UpdateItem per
//! claim, window end and mark, and one transaction per admission (the entry's conditional update
//! and its `queue.admitted` event, all on the fan's own keys, so a wave's go out at once: see
//! `handlers::queue_keeper`).

use super::queue::{entry_key, state_key};
use super::records::queue::{entry_from_item, order_page_from_item, state_from_item};
use super::records::{pack_from_item, share_key, share_units, whole_number};

use super::transaction::update;
use super::{DynamoStore, Item, key, number, s};
use crate::StoreError;
use crate::condition::Condition;
use crate::queue_conditions as conditions;
use crate::queue_keeper::{AdmissionView, AdmitQueue, Ended, decide};
use crate::schema::{
    ENTRY_PASS_EXPIRES_AT, ENTRY_STATUS, GSI1_PK, GSI1_SK, PACK_LINE_FINISHED, PACK_SK, PK,
    QUEUE_ADMITTED_THROUGH, QUEUE_BOUGHT, QUEUE_LAPSED, QUEUE_LAST_WAVE_AT, QUEUE_OVER_THROUGH,
    QUEUE_STATUS, SHARE_SOLD, order_sk, pack_pk, queue_pk,
};
use aws_sdk_dynamodb::types::AttributeValue;
use domain::ids::PackId;
use domain::packs::Pack;
use domain::queue::admission::WindowEnd;
use domain::queue::commit::order_page_of;
use domain::queue::entry::{EntryStatus, QueueEntry};
use domain::queue::events::Admit;
use domain::queue::state::{OrderedEntry, StoredStatus};
use domain::timestamp::Timestamp;

impl DynamoStore {
    /// The drawn order from position `from` (from 1) to `to` (included).
    async fn order_between(
        &self,
        pack_id: &PackId,
        from: u64,
        to: u64,
    ) -> Result<Vec<OrderedEntry>, StoreError> {
        if to < from {
            return Ok(Vec::new());
        }
        let (first, skip) = order_page_of(from);
        let (last, _) = order_page_of(to);
        let keys = (first..=last)
            .map(|page| key(queue_pk(pack_id), &order_sk(page)))
            .collect();
        let mut order = Vec::new();
        for item in self.batch_get_all(keys, true).await?.into_iter().flatten() {
            order.extend(order_page_from_item(item)?.entries);
        }
        let count = usize::try_from(to - from + 1).unwrap_or(usize::MAX);
        Ok(order.into_iter().skip(skip).take(count).collect())
    }
}

impl DynamoStore {
    /// The units left in `pack`'s shares and the units paid for, read strongly consistent.
    pub(super) async fn share_counts(
        &self,
        pack_id: &PackId,
        pack: &Pack,
    ) -> Result<(u64, u64), StoreError> {
        let shares = (0..pack.shard_count())
            .map(|k| share_key(pack_id, k))
            .collect();
        let shares = self.batch_get_all(shares, true).await?;
        let left = shares.iter().map(|item| share_units(item.as_ref())).sum();
        let sold = shares
            .iter()
            .flatten()
            .filter_map(|item| whole_number(item, SHARE_SOLD))
            .sum();
        Ok((left, sold))
    }
}

impl AdmitQueue for DynamoStore {
    async fn admission_view(&self, pack_id: &PackId) -> Result<Option<AdmissionView>, StoreError> {
        let [state_item, pack_item] = self
            .batch_get([state_key(pack_id), key(pack_pk(pack_id), PACK_SK)], true)
            .await?;
        let (Some(state_item), Some(pack_item)) = (state_item, pack_item) else {
            return Ok(None);
        };
        let over_through = whole_number(&state_item, QUEUE_OVER_THROUGH).unwrap_or(0);
        let state = state_from_item(state_item)?;
        if state.status != StoredStatus::Drawn {
            return Ok(None);
        }
        let pack = pack_from_item(pack_item)?;
        // The entries before the shares (see AdmissionView).
        let order = self
            .order_between(pack_id, over_through + 1, state.admitted_through)
            .await?;
        let keys = order
            .iter()
            .map(|entry| entry_key(pack_id, &entry.user_id))
            .collect();
        let admitted = self
            .batch_get_all(keys, true)
            .await?
            .into_iter()
            .flatten()
            .map(entry_from_item)
            .collect::<Result<Vec<QueueEntry>, StoreError>>()?;
        let (left, sold) = self.share_counts(pack_id, &pack).await?;
        Ok(Some(AdmissionView::of(
            &pack,
            state,
            (over_through, admitted),
            (left, sold),
        )))
    }

    async fn ordered(
        &self,
        pack_id: &PackId,
        from: u64,
        count: u64,
    ) -> Result<Vec<OrderedEntry>, StoreError> {
        if count == 0 {
            return Ok(Vec::new());
        }
        self.order_between(pack_id, from, from + count - 1).await
    }

    async fn claim_positions(
        &self,
        pack_id: &PackId,
        through: u64,
        to: u64,
        now: Timestamp,
    ) -> Result<bool, StoreError> {
        self.update_if(
            state_key(pack_id),
            "SET #through = :to, #wave = :now",
            &conditions::admitted_through_as_read(through),
            &[
                ("#through", QUEUE_ADMITTED_THROUGH),
                ("#wave", QUEUE_LAST_WAVE_AT),
            ],
            vec![(":to", number(to)), (":now", s(now.to_string()))],
        )
        .await
    }

    async fn admit_entry(&self, pack_id: &PackId, admit: &Admit) -> Result<bool, StoreError> {
        // One transaction on the fan's own keys (their entry, their events' counter and event):
        // a wave's admissions go out at once, with no item in common (the report's `admitted`
        // is `admittedThrough`).
        let admission = update(
            &self.table,
            entry_key(pack_id, &admit.user_id),
            "SET #status = :admitted, #expires = :expires",
            &conditions::entry_queued(),
            &[
                ("#status", ENTRY_STATUS),
                ("#expires", ENTRY_PASS_EXPIRES_AT),
            ],
            vec![
                (":admitted", s(EntryStatus::Admitted.as_str())),
                (":expires", number(admit.until.unix_nanos())),
            ],
        )?;
        self.write_emitting("admit", admission, admit.events(pack_id), admit.at)
            .await
    }

    async fn end_window(
        &self,
        read: &QueueEntry,
        now: Timestamp,
    ) -> Result<Option<WindowEnd>, StoreError> {
        let (end, status) = decide::end_of_window(read.bought);
        let ended = self
            .update_if(
                entry_key(&read.pack_id, &read.user_id),
                "SET #status = :status",
                &conditions::window_ran_out(now, read.bought),
                &[("#status", ENTRY_STATUS)],
                vec![(":status", s(status.as_str()))],
            )
            .await?;
        Ok(ended.then_some(end))
    }

    async fn advance_over_through(
        &self,
        pack_id: &PackId,
        through: u64,
        to: u64,
        ended: Ended,
    ) -> Result<bool, StoreError> {
        self.update_if(
            state_key(pack_id),
            "SET #over = :to ADD #lapsed :lapsed, #bought :bought",
            &conditions::over_through_as_read(through),
            &[
                ("#over", QUEUE_OVER_THROUGH),
                ("#lapsed", QUEUE_LAPSED),
                ("#bought", QUEUE_BOUGHT),
            ],
            vec![
                (":to", number(to)),
                (":lapsed", number(ended.lapsed)),
                (":bought", number(ended.bought)),
            ],
        )
        .await
    }

    async fn finish_queue(
        &self,
        pack_id: &PackId,
        admitted_through: u64,
    ) -> Result<u64, StoreError> {
        // The state first: no claim follows it (a claim needs `drawn`), so nothing but a finish
        // writes the entries still queued after `admitted_through`. The line leaves the pending
        // index last, once they are marked: a keeper that stops in between finds it again on its
        // next pass and marks them then.
        let finished = self
            .update_if(
                state_key(pack_id),
                "SET #status = :finished",
                &conditions::finishing(admitted_through),
                &[("#status", QUEUE_STATUS)],
                vec![(":finished", s(status_text(StoredStatus::Finished)))],
            )
            .await?;
        if !finished {
            return Ok(0);
        }
        // The pack's listing says so (`lineFinished`): its units left sell to the entrants.
        self.update_if(
            key(pack_pk(pack_id), PACK_SK),
            "SET #finished = :finished",
            &Condition::exists(PK),
            &[("#finished", PACK_LINE_FINISHED)],
            vec![(":finished", AttributeValue::Bool(true))],
        )
        .await?;
        let waiting: Vec<Item> = self
            .all_entries(pack_id)
            .await?
            .into_iter()
            .filter(|entry| decide::sold_out_at_finish(entry, admitted_through))
            .map(|mut entry| {
                entry.status = EntryStatus::SoldOut;
                super::queue::whole_entry_item(&entry)
            })
            .collect();
        let marked = waiting.len() as u64;
        self.put_all(waiting).await?;
        self.update_if(
            state_key(pack_id),
            "REMOVE #gsi1pk, #gsi1sk",
            &conditions::state_is(StoredStatus::Finished),
            &[("#gsi1pk", GSI1_PK), ("#gsi1sk", GSI1_SK)],
            Vec::new(),
        )
        .await?;
        Ok(marked)
    }
}

fn status_text(status: StoredStatus) -> &'static str {
    status.into()
}
