//! The waiting room on DynamoDB (keys in `store/schema/mod.rs`): a join is one transaction of the
//! fan's entry with its index keys (a conditional put) and its `queue.joined` event; a fan's
//! entry one GetItem; the public line one BatchGetItem of the pack item and the state; an
//! entrant page one GetItem; every entrant one BatchGetItem per 100 pages. Seeding writes the state and the secret seed
//! ([`seeding_actions`]) inside the pack's own transaction.

use aws_sdk_dynamodb::types::{Delete, TransactWriteItem};

use super::packs::UpdateExpression;
use super::records::queue::{
    entrant_page_from_item, entrants_index_from_item, entry_from_item, entry_item, queue_seed_item,
    state_from_item, state_item,
};
use super::records::{pack_from_item, whole_number};
use super::transaction::put;
use super::{DynamoStore, Item, key, s};
use crate::StoreError;
use crate::queue::Settled;
use crate::queue::{
    GetEntrantPage, GetEntrantsIndex, GetQueue, GetQueueEntry, JoinQueue, Joined, ListMyEntries,
    QueueView, conditions, entry_list_key,
};
use crate::schema::{
    ENTITY, ENTRANTS_INDEX_SK, ENTRY_SK, GSI1_PK, GSI1_SK, GSI2_PK, GSI2_SK, GSI3_PK, GSI3_SK,
    PACK_REMAINING, PACK_SK, PENDING_QUEUES, QSEED_SEED, QSEED_SK, QUEUE_STATE_SK, entrants_sk,
    entries_by_fan_pk, entry_pk, pack_pk, pending_queue_key, qseed_pk, queue_entries_pk, queue_pk,
};
use domain::ids::{PackId, UserId};
use domain::packs::draw::{ServerSeed, parse_hex32};
use domain::packs::seed::QueueWrite;
use domain::purchases::mine::Page;
use domain::queue::admission::Allowance;
use domain::queue::entry::{QueueEntry, entry_shard};
use domain::queue::state::{EntrantPage, EntrantsIndex, QueueState, StoredStatus};

pub(crate) fn entry_key(pack_id: &PackId, user_id: &UserId) -> Item {
    key(entry_pk(pack_id, user_id), ENTRY_SK)
}

pub(crate) fn state_key(pack_id: &PackId) -> Item {
    key(queue_pk(pack_id), QUEUE_STATE_SK)
}

pub(crate) fn seed_key(pack_id: &PackId) -> Item {
    key(qseed_pk(pack_id), QSEED_SK)
}

/// The whole item of an entry: its record, keys, `entity` and its entry in the sharded index.
pub(crate) fn whole_entry_item(entry: &QueueEntry) -> Item {
    let mut item = entry_item(entry);
    item.extend(entry_key(&entry.pack_id, &entry.user_id));
    item.insert(ENTITY.into(), s("queueEntry"));
    item.insert(
        GSI2_PK.into(),
        s(queue_entries_pk(
            &entry.pack_id,
            entry_shard(&entry.entry_id),
        )),
    );
    item.insert(GSI2_SK.into(), s(entry.entry_id.as_str()));
    item.insert(GSI3_PK.into(), s(entries_by_fan_pk(&entry.user_id)));
    item.insert(GSI3_SK.into(), s(entry_list_key(entry)));
    item
}

impl ListMyEntries for DynamoStore {
    async fn list_my_entries(
        &self,
        user_id: &UserId,
        limit: usize,
        after: Option<&str>,
    ) -> Result<Page<QueueEntry>, StoreError> {
        self.fan_index_page(entries_by_fan_pk(user_id), limit, after, entry_from_item)
            .await
    }
}

/// The actions a pack's seeding write adds for its queue: for [`QueueWrite::Put`], the state
/// (status `open`, in the keeper's pending index by close, the terms' beacon round) and the
/// secret seed, each written whole but for the seed and its hash, set only where absent, so that
/// a queue's commitment never changes once made; for [`QueueWrite::Remove`], both deleted.
pub(super) fn seeding_actions(
    table: &str,
    pack_id: &PackId,
    write: QueueWrite,
) -> Result<Vec<TransactWriteItem>, StoreError> {
    match write {
        QueueWrite::Keep => Ok(Vec::new()),
        QueueWrite::Remove => [state_key(pack_id), seed_key(pack_id)]
            .into_iter()
            .map(|key| {
                Delete::builder()
                    .table_name(table)
                    .set_key(Some(key))
                    .build()
                    .map(|delete| TransactWriteItem::builder().delete(delete).build())
                    .map_err(|e| StoreError::internal_from("delete", e))
            })
            .collect(),
        QueueWrite::Put(terms) => {
            let seed = ServerSeed::generate();
            let hash = parse_hex32(&seed.commitment()).expect("a commitment is 64 hex digits");
            let state = QueueState::seeded(pack_id.clone(), &terms, hash);
            let mut state_attributes = state_item(&state);
            let seed_hash = state_attributes
                .remove("seedHash")
                .expect("a state item has its seed's hash");
            state_attributes.insert(ENTITY.into(), s("queueState"));
            state_attributes.insert(GSI1_PK.into(), s(PENDING_QUEUES));
            state_attributes.insert(
                GSI1_SK.into(),
                s(pending_queue_key(terms.closes_at, pack_id)),
            );
            let state_update =
                UpdateExpression::new(state_attributes.into_iter().map(|(n, v)| (n, Some(v))))
                    .set_once("seedHash", seed_hash)
                    .into_unconditional(table, state_key(pack_id))?;
            let mut seed_attributes = queue_seed_item(&seed);
            let seed_bytes = seed_attributes
                .remove(QSEED_SEED)
                .expect("a seed item has its seed");
            seed_attributes.insert(ENTITY.into(), s("queueSeed"));
            let seed_update =
                UpdateExpression::new(seed_attributes.into_iter().map(|(n, v)| (n, Some(v))))
                    .set_once(QSEED_SEED, seed_bytes)
                    .into_unconditional(table, seed_key(pack_id))?;
            Ok(vec![
                TransactWriteItem::builder().update(state_update).build(),
                TransactWriteItem::builder().update(seed_update).build(),
            ])
        }
    }
}

impl DynamoStore {
    pub(crate) async fn read_entry(
        &self,
        pack_id: &PackId,
        user_id: &UserId,
        consistent: bool,
    ) -> Result<Option<QueueEntry>, StoreError> {
        self.get_item(entry_key(pack_id, user_id), consistent)
            .await?
            .map(entry_from_item)
            .transpose()
    }
}

impl JoinQueue for DynamoStore {
    async fn join_queue(&self, entry: &QueueEntry) -> Result<Joined, StoreError> {
        let put = put(
            &self.table,
            whole_entry_item(entry),
            &conditions::entry_new(),
        )?;
        let events = domain::queue::events::joined(entry);
        if self
            .write_emitting("join queue", put, events, entry.joined_at)
            .await?
        {
            return Ok(Joined::New(entry.clone()));
        }
        // The fan joined before: their entry, read strongly so that it is the one that made the
        // condition fail.
        self.read_entry(&entry.pack_id, &entry.user_id, true)
            .await?
            .map(Joined::Replayed)
            .ok_or_else(|| StoreError::internal("queue entry: refused, then not found"))
    }
}

impl GetQueueEntry for DynamoStore {
    async fn queue_entry(
        &self,
        pack_id: &PackId,
        user_id: &UserId,
    ) -> Result<Option<QueueEntry>, StoreError> {
        // Strongly consistent: a fan who just joined (or was just admitted) reads it so.
        self.read_entry(pack_id, user_id, true).await
    }
}

impl GetQueue for DynamoStore {
    async fn get_queue(&self, pack_id: &PackId) -> Result<Option<QueueView>, StoreError> {
        let [pack_item, state_item] = self
            .batch_get([key(pack_pk(pack_id), PACK_SK), state_key(pack_id)], false)
            .await?;
        let Some(pack_item) = pack_item else {
            return Ok(None);
        };
        let remaining = whole_number(&pack_item, PACK_REMAINING).unwrap_or(0);
        let pack = pack_from_item(pack_item)?;
        let Some(terms) = pack.queue else {
            return Ok(None);
        };
        let state = state_item
            .map(state_from_item)
            .transpose()?
            .ok_or_else(|| StoreError::internal("queue state: missing for a queued pack"))?;
        let settled = match state.status {
            StoredStatus::Finished => {
                let (left, sold) = self.share_counts(pack_id, &pack).await?;
                Some(Settled { sold, left })
            }
            _ => None,
        };
        Ok(Some(QueueView {
            terms,
            state,
            allowance: Allowance::of(pack.max_per_user),
            total_supply: pack.total_supply,
            remaining,
            settled,
        }))
    }
}

impl GetEntrantPage for DynamoStore {
    async fn entrant_page(
        &self,
        pack_id: &PackId,
        page: u32,
    ) -> Result<Option<EntrantPage>, StoreError> {
        self.get_item(key(queue_pk(pack_id), &entrants_sk(page)), false)
            .await?
            .map(entrant_page_from_item)
            .transpose()
    }
}

impl GetEntrantsIndex for DynamoStore {
    async fn entrants_index(&self, pack_id: &PackId) -> Result<Option<EntrantsIndex>, StoreError> {
        self.get_item(key(queue_pk(pack_id), ENTRANTS_INDEX_SK), false)
            .await?
            .map(entrants_index_from_item)
            .transpose()
    }
}
