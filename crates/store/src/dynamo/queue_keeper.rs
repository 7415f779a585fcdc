//! The queue keeper's pending lines, close and draw on DynamoDB. The pending lines: one Query of
//! `GSI1` (`QUEUES#PENDING`). The close: the line's entries read back from the entry index (a
//! Query of each of its 64 shards of `GSI2`, paged), the entrant pages put, then the state's
//! UpdateItem on the condition that it is still `open`. The draw: the state and the queue's seed
//! read, the entries again, their positions written whole by BatchWriteItem (25 a request), the
//! order pages put, then the state's update on the condition that it is still `closed`, in one
//! transaction with the line's `queue.drawn` event (the pack's, once per line).
//!
//! Why whole-item puts and not conditional updates for the positions: between the close and
//! the draw nothing else writes an entry (the line is closed to joins, no one is admitted yet,
//! and a start needs an admitted entry), and a draw run again after a crash writes the same
//! positions (the order is a function of the seed, the beacon and the set). A put needs 1/25th
//! of the requests: 8,000 BatchWriteItems for 200,000 entrants instead of 200,000 UpdateItems.

use aws_sdk_dynamodb::types::{AttributeValue, PutRequest, WriteRequest};

use super::queue::{seed_key, state_key, whole_entry_item};
use super::records::queue::{
    entrant_page_item, entrants_index_item, entry_from_item, order_page_item, queue_seed_from_item,
    state_from_item, state_item,
};
use super::transaction::update;
use super::{DynamoStore, Item, classify, key, number, s};
use crate::StoreError;
use crate::condition::Condition;
use crate::dynamo::condition::{render, written};
use crate::queue_conditions as conditions;
use crate::queue_keeper::{CloseQueue, Closed, DrawQueue, Drawn, PendingQueues, decide};
use crate::schema::{
    ENTITY, ENTRANTS_INDEX_SK, GSI1, GSI1_PK, GSI2, GSI2_PK, PENDING_QUEUES, QUEUE_DRAW_LEASE,
    entrants_sk, order_sk, queue_entries_pk, queue_pk,
};
use domain::events::NewEvent;
use domain::ids::PackId;
use domain::queue::entry::{ENTRY_SHARDS, QueueEntry};
use domain::queue::state::{Beacon, QueueState, StoredStatus};
use domain::timestamp::Timestamp;

/// Items a BatchWriteItem takes.
const BATCH_WRITE: usize = 25;

/// BatchWriteItems a draw keeps in flight: 200,000 entries are 8,000 requests, about 80 s one
/// after another at 10 ms each, over the function's 60 s; 16 at once take about 5 s.
const WRITES_IN_FLIGHT: usize = 16;

/// How long a keeper holds a line's draw: more than the function's 60 s timeout, so a draw
/// under way is never taken over, and a crashed one is taken over on a later pass.
const DRAW_LEASE_SECONDS: i64 = 90;

/// One BatchWriteItem of `writes`, again with what is left unprocessed until nothing is.
async fn write_batch(
    client: aws_sdk_dynamodb::Client,
    table: String,
    mut writes: Vec<WriteRequest>,
) -> Result<(), StoreError> {
    while !writes.is_empty() {
        let output = client
            .batch_write_item()
            .request_items(&table, writes)
            .send()
            .await
            .map_err(|e| classify("BatchWriteItem", e))?;
        writes = output
            .unprocessed_items
            .and_then(|mut left| left.remove(&table))
            .unwrap_or_default();
    }
    Ok(())
}

impl DynamoStore {
    /// Every item of a Query of `index` for partition `partition`, page after page.
    pub(super) async fn query_all(
        &self,
        index: &str,
        pk_name: &str,
        partition: String,
    ) -> Result<Vec<Item>, StoreError> {
        let query = self
            .client
            .query()
            .table_name(&self.table)
            .index_name(index)
            .key_condition_expression("#pk = :pk")
            .expression_attribute_names("#pk", pk_name)
            .expression_attribute_values(":pk", s(partition));
        self.query_pages(query).await
    }

    /// Every entry of `pack_id`'s line, from the 64 shards of the entry index.
    pub(super) async fn all_entries(
        &self,
        pack_id: &PackId,
    ) -> Result<Vec<QueueEntry>, StoreError> {
        let mut entries = Vec::new();
        for shard in 0..ENTRY_SHARDS {
            for item in self
                .query_all(GSI2, GSI2_PK, queue_entries_pk(pack_id, shard))
                .await?
            {
                entries.push(entry_from_item(item)?);
            }
        }
        Ok(entries)
    }

    /// The state of `pack_id`'s line, strongly consistent.
    pub(super) async fn line_state(&self, pack_id: &PackId) -> Result<Option<Item>, StoreError> {
        self.get_item(state_key(pack_id), true).await
    }

    /// Puts `items` whole, 25 a request and [`WRITES_IN_FLIGHT`] requests at once, each again
    /// until none of its items is left unprocessed.
    pub(super) async fn put_all(&self, items: Vec<Item>) -> Result<(), StoreError> {
        let mut items = items.into_iter().peekable();
        let mut in_flight = tokio::task::JoinSet::new();
        while items.peek().is_some() || !in_flight.is_empty() {
            while in_flight.len() < WRITES_IN_FLIGHT && items.peek().is_some() {
                let writes = items
                    .by_ref()
                    .take(BATCH_WRITE)
                    .map(|item| {
                        PutRequest::builder()
                            .set_item(Some(item))
                            .build()
                            .map(|put| WriteRequest::builder().put_request(put).build())
                            .map_err(|e| StoreError::internal_from("put request", e))
                    })
                    .collect::<Result<Vec<_>, StoreError>>()?;
                in_flight.spawn(write_batch(self.client.clone(), self.table.clone(), writes));
            }
            if let Some(done) = in_flight.join_next().await {
                done.map_err(|e| StoreError::internal_from("BatchWriteItem task", e))??;
            }
        }
        Ok(())
    }

    /// One UpdateItem of `key` on the declared `condition`: `false` when it does not hold.
    pub(super) async fn update_if(
        &self,
        key: Item,
        expression: &str,
        condition: &Condition,
        names: &[(&str, &str)],
        values: Vec<(&str, AttributeValue)>,
    ) -> Result<bool, StoreError> {
        let rendered = render(condition);
        let mut request = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key))
            .update_expression(expression)
            .condition_expression(rendered.expression);
        for (placeholder, name) in rendered.names {
            request = request.expression_attribute_names(placeholder, name);
        }
        for (placeholder, value) in rendered.values {
            request = request.expression_attribute_values(placeholder, value);
        }
        for (placeholder, name) in names {
            request = request.expression_attribute_names(*placeholder, *name);
        }
        for (placeholder, value) in values {
            request = request.expression_attribute_values(placeholder, value);
        }
        Ok(written("UpdateItem", request.send().await)?.is_some())
    }

    /// Moves `state` on (already changed as wanted) by setting `names` from its record, on the
    /// condition that its stored status is `from`, with the `events` of the move at `at` (the
    /// UpdateItem a transaction when there are some).
    async fn move_state(
        &self,
        state: &QueueState,
        names: &[&str],
        from: StoredStatus,
        (events, at): (Vec<NewEvent>, Timestamp),
    ) -> Result<bool, StoreError> {
        let mut record = state_item(state);
        let placeholders: Vec<(String, String)> = (0..names.len())
            .map(|i| (format!("#s{i}"), format!(":s{i}")))
            .collect();
        let expression = format!(
            "SET {}",
            placeholders
                .iter()
                .map(|(name, value)| format!("{name} = {value}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let mut attribute_names = Vec::new();
        let mut values = Vec::new();
        for ((name, value), attribute) in placeholders.iter().zip(names) {
            let stored = record.remove(*attribute).ok_or_else(|| {
                StoreError::internal(format!("queue state: no `{attribute}` to write"))
            })?;
            attribute_names.push((name.as_str(), *attribute));
            values.push((value.as_str(), stored));
        }
        let (key, condition) = (state_key(&state.pack_id), conditions::state_is(from));
        if events.is_empty() {
            return self
                .update_if(key, &expression, &condition, &attribute_names, values)
                .await;
        }
        let update = update(
            &self.table,
            key,
            &expression,
            &condition,
            &attribute_names,
            values,
        )?;
        self.write_emitting("move queue state", update, events, at)
            .await
    }
}

impl PendingQueues for DynamoStore {
    async fn pending_queues(&self) -> Result<Vec<QueueState>, StoreError> {
        self.query_all(GSI1, GSI1_PK, PENDING_QUEUES.to_owned())
            .await?
            .into_iter()
            .map(state_from_item)
            .collect()
    }
}

impl CloseQueue for DynamoStore {
    async fn close_queue(
        &self,
        pack_id: &PackId,
        now: Timestamp,
    ) -> Result<Option<Closed>, StoreError> {
        let Some(state) = self.line_state(pack_id).await? else {
            return Ok(None);
        };
        let mut state = state_from_item(state)?;
        if state.status != StoredStatus::Open {
            return Ok(None);
        }
        let ids = self
            .all_entries(pack_id)
            .await?
            .into_iter()
            .map(|entry| entry.entry_id)
            .collect();
        let (commitment, closed) = decide::close(&mut state, ids, now);
        // The pages and their index first: once the state says closed, they are all there. A
        // close run again writes the same items (the set no longer changes).
        let mut index = entrants_index_item(&commitment.index);
        index.extend(key(queue_pk(pack_id), ENTRANTS_INDEX_SK));
        index.insert(ENTITY.into(), s("queueEntrantsIndex"));
        let pages = commitment
            .pages
            .iter()
            .map(|page| {
                let mut item = entrant_page_item(page);
                item.extend(key(queue_pk(pack_id), &entrants_sk(page.page)));
                item.insert(ENTITY.into(), s("queueEntrants"));
                item
            })
            .chain([index])
            .collect();
        self.put_all(pages).await?;
        let moved = self
            .move_state(
                &state,
                &[
                    "status",
                    "entrants",
                    "entrantsRoot",
                    "entrantPages",
                    "committedAt",
                    "beaconRound",
                ],
                StoredStatus::Open,
                (Vec::new(), now),
            )
            .await?;
        Ok(moved.then_some(closed))
    }
}

impl DrawQueue for DynamoStore {
    async fn draw_queue(
        &self,
        pack_id: &PackId,
        beacon: &Beacon,
        now: Timestamp,
    ) -> Result<Option<Drawn>, StoreError> {
        // The positions are written whole (no condition each): one keeper draws at a time, or a
        // slower one could write `queued` over an entry another just admitted.
        let until = now
            .plus_seconds(DRAW_LEASE_SECONDS)
            .ok_or_else(|| StoreError::internal("draw lease beyond the calendar"))?;
        let leased = self
            .update_if(
                state_key(pack_id),
                "SET #lease = :until",
                &conditions::draw_free(now),
                &[("#lease", QUEUE_DRAW_LEASE)],
                vec![(":until", number(until.unix_nanos()))],
            )
            .await?;
        if !leased {
            return Ok(None);
        }
        let [state, seed] = self
            .batch_get([state_key(pack_id), seed_key(pack_id)], true)
            .await?;
        let Some(state) = state else {
            return Ok(None);
        };
        let mut state = state_from_item(state)?;
        if state.status != StoredStatus::Closed {
            return Ok(None);
        }
        let seed = seed
            .map(queue_seed_from_item)
            .transpose()?
            .ok_or_else(|| StoreError::internal("queue seed: missing for a closed line"))?;
        let mut entries = self.all_entries(pack_id).await?;
        let draw = decide::draw(
            &mut state,
            *seed.as_bytes(),
            beacon,
            entries
                .iter()
                .map(|e| (e.entry_id.clone(), e.user_id.clone()))
                .collect(),
        )?;
        for entry in &mut entries {
            draw.place(entry);
        }
        self.put_all(entries.iter().map(whole_entry_item).collect())
            .await?;
        let pages = draw
            .pages
            .iter()
            .map(|page| {
                let mut item = order_page_item(page);
                item.extend(key(queue_pk(pack_id), &order_sk(page.page)));
                item.insert(ENTITY.into(), s("queueOrder"));
                item
            })
            .collect();
        self.put_all(pages).await?;
        // The state's move to `drawn` happens once per line: it carries the line's `queue.drawn`.
        let drawn = draw.drawn();
        let moved = self
            .move_state(
                &state,
                &["status", "seed", "beacon"],
                StoredStatus::Closed,
                (domain::queue::events::drawn(pack_id, drawn.entrants), now),
            )
            .await?;
        Ok(moved.then_some(drawn))
    }
}
