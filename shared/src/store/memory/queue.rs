//! The waiting room in memory: the same operations as on DynamoDB, each under the one lock, the
//! join's condition ([`conditions::entry_new`]) checked as DynamoDB would.

use std::collections::BTreeMap;

use super::{MemoryStore, Tables};
use crate::ids::{EntryId, PackId, UserId};
use crate::packs::Pack;
use crate::packs::draw::{ServerSeed, parse_hex32};
use crate::packs::seed::QueueWrite;
use crate::queue::entry::QueueEntry;
use crate::queue::state::{EntrantPage, OrderPage, QueueState, StoredStatus};
use crate::store::StoreError;
use crate::store::condition::{Attributes, Value};
use crate::store::queue::{
    GetEntrantPage, GetQueue, GetQueueEntry, JoinQueue, Joined, QueueView, ReadEntrants, conditions,
};
use crate::store::schema::{ENTRY_BOUGHT, ENTRY_PASS_EXPIRES_AT, ENTRY_POSITION, ENTRY_STATUS, PK};

/// A pack's line: what DynamoDB keeps under `QUEUE#<packId>` and `QSEED#<packId>`.
pub(super) struct Line {
    pub(super) state: QueueState,
    pub(super) seed: ServerSeed,
    /// By page number.
    pub(super) entrant_pages: BTreeMap<u32, EntrantPage>,
    #[allow(dead_code)] // The keeper's draw writes it.
    pub(super) order_pages: BTreeMap<u32, OrderPage>,
}

/// An entry as DynamoDB holds it, for conditions.
pub(super) struct EntryItem<'a>(pub(super) &'a QueueEntry);

impl Attributes for EntryItem<'_> {
    fn attribute(&self, path: &[&str]) -> Option<Value> {
        let entry = self.0;
        match path {
            [name] if *name == PK => Some(Value::S(crate::store::schema::entry_pk(
                &entry.pack_id,
                &entry.user_id,
            ))),
            [name] if *name == ENTRY_STATUS => Some(entry.status.as_str().into()),
            [name] if *name == ENTRY_POSITION => entry.position.map(Value::from),
            [name] if *name == ENTRY_PASS_EXPIRES_AT => {
                entry.pass_expires_at.map(|at| at.unix_nanos().into())
            }
            [name] if *name == ENTRY_BOUGHT => Some(entry.bought.into()),
            _ => None,
        }
    }
}

impl Tables {
    /// A seeding write's change to `pack`'s line, as DynamoDB's seeding makes it: a line seeded
    /// before keeps its seed (and its hash) and takes the new terms.
    pub(super) fn seed_queue(&mut self, pack: &Pack, write: QueueWrite) {
        let Ok(pack_id) = pack.pack_id() else { return };
        match write {
            QueueWrite::Keep => {}
            QueueWrite::Remove => {
                self.queues.remove(&pack_id);
            }
            QueueWrite::Put(terms) => {
                let seed = self
                    .queues
                    .remove(&pack_id)
                    .map_or_else(ServerSeed::generate, |line| line.seed);
                let hash = parse_hex32(&seed.commitment()).expect("a commitment is 64 hex digits");
                let state = QueueState::seeded(pack_id.clone(), &terms, hash);
                self.queues.insert(
                    pack_id,
                    Line {
                        state,
                        seed,
                        entrant_pages: BTreeMap::new(),
                        order_pages: BTreeMap::new(),
                    },
                );
            }
        }
    }
}

impl JoinQueue for MemoryStore {
    async fn join_queue(&self, entry: &QueueEntry) -> Result<Joined, StoreError> {
        let mut tables = self.write();
        let key = (entry.pack_id.clone(), entry.user_id.clone());
        let existing = tables.queue_entries.get(&key);
        let item = existing.map(EntryItem);
        if !conditions::entry_new().holds(item.as_ref().map(|item| item as &dyn Attributes)) {
            return existing
                .cloned()
                .map(Joined::Replayed)
                .ok_or_else(|| StoreError::internal("queue entry: refused, then not found"));
        }
        tables.queue_entries.insert(key, entry.clone());
        Ok(Joined::New(entry.clone()))
    }
}

impl GetQueueEntry for MemoryStore {
    async fn queue_entry(
        &self,
        pack_id: &PackId,
        user_id: &UserId,
    ) -> Result<Option<QueueEntry>, StoreError> {
        Ok(self
            .read()
            .queue_entries
            .get(&(pack_id.clone(), user_id.clone()))
            .cloned())
    }
}

impl GetQueue for MemoryStore {
    async fn get_queue(&self, pack_id: &PackId) -> Result<Option<QueueView>, StoreError> {
        let tables = self.read();
        let Some(stored) = tables.packs.get(pack_id.as_str()) else {
            return Ok(None);
        };
        let Some(terms) = stored.pack.queue else {
            return Ok(None);
        };
        let line = tables
            .queues
            .get(pack_id)
            .ok_or_else(|| StoreError::internal("queue state: missing for a queued pack"))?;
        Ok(Some(QueueView {
            terms,
            state: line.state.clone(),
            total_supply: stored.pack.total_supply,
            remaining: stored.pack.remaining,
            sold: (line.state.status == StoredStatus::Finished)
                .then(|| tables.sold.get(pack_id.as_str()).copied().unwrap_or(0)),
        }))
    }
}

impl GetEntrantPage for MemoryStore {
    async fn entrant_page(
        &self,
        pack_id: &PackId,
        page: u32,
    ) -> Result<Option<EntrantPage>, StoreError> {
        Ok(self
            .read()
            .queues
            .get(pack_id)
            .and_then(|line| line.entrant_pages.get(&page).cloned()))
    }
}

impl ReadEntrants for MemoryStore {
    async fn read_entrants(
        &self,
        pack_id: &PackId,
        pages: u32,
    ) -> Result<Vec<EntryId>, StoreError> {
        let tables = self.read();
        let line = tables.queues.get(pack_id);
        let mut ids = Vec::new();
        for page in 0..pages {
            let found = line
                .and_then(|line| line.entrant_pages.get(&page))
                .ok_or_else(|| {
                    StoreError::internal(format!("entrant page {page}: missing of {pages}"))
                })?;
            ids.extend(found.ids.iter().cloned());
        }
        Ok(ids)
    }
}
