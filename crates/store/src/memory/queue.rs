//! The waiting room in memory: the same operations as on DynamoDB, each under the one lock, the
//! join's condition ([`conditions::entry_new`]) checked as DynamoDB would.

use std::collections::BTreeMap;

use super::{MemoryStore, Tables, newest_page};
use crate::StoreError;
use crate::condition::{Attributes, Value};
use crate::queue::Settled;
use crate::queue::{
    GetEntrantPage, GetEntrantsIndex, GetQueue, GetQueueEntry, JoinQueue, Joined, ListMyEntries,
    QueueView, conditions, entry_list_key,
};
use crate::schema::{ENTRY_BOUGHT, ENTRY_PASS_EXPIRES_AT, ENTRY_POSITION, ENTRY_STATUS, PK};
use domain::ids::{PackId, UserId};
use domain::packs::Pack;
use domain::packs::draw::{ServerSeed, parse_hex32};
use domain::packs::seed::QueueWrite;
use domain::purchases::mine::Page;
use domain::queue::admission::Allowance;
use domain::queue::entry::QueueEntry;
use domain::queue::state::{EntrantPage, EntrantsIndex, OrderPage, QueueState, StoredStatus};

/// A pack's line: what DynamoDB keeps under `QUEUE#<packId>` and `QSEED#<packId>`.
pub(super) struct Line {
    pub(super) state: QueueState,
    pub(super) seed: ServerSeed,
    /// By page number.
    pub(super) entrant_pages: BTreeMap<u32, EntrantPage>,
    /// Written by the close with the pages.
    pub(super) entrants_index: Option<EntrantsIndex>,
    #[allow(dead_code)] // The keeper's draw writes it.
    pub(super) order_pages: BTreeMap<u32, OrderPage>,
}

/// An entry as DynamoDB holds it, for conditions.
pub(super) struct EntryItem<'a>(pub(super) &'a QueueEntry);

impl Attributes for EntryItem<'_> {
    fn attribute(&self, path: &[&str]) -> Option<Value> {
        let entry = self.0;
        match path {
            [name] if *name == PK => Some(Value::S(crate::schema::entry_pk(
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
                        entrants_index: None,
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
        tables.emit(domain::queue::events::joined(entry), entry.joined_at);
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

impl ListMyEntries for MemoryStore {
    async fn list_my_entries(
        &self,
        user_id: &UserId,
        limit: usize,
        after: Option<&str>,
    ) -> Result<Page<QueueEntry>, StoreError> {
        let tables = self.read();
        let entries = tables
            .queue_entries
            .values()
            .filter(|entry| entry.user_id == *user_id)
            .map(|entry| (entry_list_key(entry), entry));
        Ok(newest_page(entries, limit, after))
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
            allowance: Allowance::of(stored.pack.max_per_user),
            total_supply: stored.pack.total_supply,
            remaining: stored.pack.remaining,
            settled: (line.state.status == StoredStatus::Finished).then(|| tables.settled(pack_id)),
        }))
    }
}

impl Tables {
    /// `pack_id`'s units as its shares hold them: paid for, and neither sold nor held.
    pub(super) fn settled(&self, pack_id: &PackId) -> Settled {
        Settled {
            sold: self.sold.get(pack_id.as_str()).copied().unwrap_or(0),
            left: self
                .supply
                .get(pack_id.as_str())
                .map_or(0, |shares| shares.iter().sum()),
        }
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

impl GetEntrantsIndex for MemoryStore {
    async fn entrants_index(&self, pack_id: &PackId) -> Result<Option<EntrantsIndex>, StoreError> {
        Ok(self
            .read()
            .queues
            .get(pack_id)
            .and_then(|line| line.entrants_index.clone()))
    }
}
