//! Packs in memory.

use std::ops::Bound;

use super::{MemoryStore, Tables};
use crate::StoreError;
use crate::packs::{
    GetPack, GetRevealedSeed, ListActivePacks, ListUpcomingPacks, PublishRevealedSeeds, ReadSupply,
    RefreshRemaining, SeedPack, SeedPackError, StoredPack, Supply,
};
use domain::events::money::pack_sold_out;
use domain::ids::PackId;
use domain::packs::document::PackDocument;
use domain::packs::draw::ServerSeed;
use domain::packs::listing::{ListingKey, Page, PageRequest};
use domain::packs::seed::{SeedWrite, queue_write, replaceable};
use domain::packs::seed_revealed;
use domain::packs::{Pack, split_supply};
use domain::purchases::PurchaseStatus;
use domain::timestamp::Timestamp;

impl Tables {
    /// Stores `pack` (keeping the stored supply unless `replace_remaining`, which splits the
    /// pack's `remaining` over its shares) and indexes it.
    fn put_pack(&mut self, mut stored: StoredPack, replace_remaining: bool) {
        stored.pack.supply_shards = Some(stored.pack.shard_count());
        if replace_remaining || !self.supply.contains_key(&stored.pack.id) {
            let shares = split_supply(stored.pack.remaining, stored.pack.shard_count());
            self.supply.insert(stored.pack.id.clone(), shares);
        }
        stored.pack.remaining = self.supply[&stored.pack.id].iter().sum();
        if let Some(old) = self.packs.get(&stored.pack.id)
            && let Some(key) = ListingKey::of(&old.pack)
        {
            self.listed.remove(&key);
        }
        self.index(&stored.pack);
        self.packs.insert(stored.pack.id.clone(), stored);
    }

    /// Puts `pack` in the listing index when it can be listed.
    fn index(&mut self, pack: &Pack) {
        if let Some(key) = ListingKey::of(pack) {
            let mut listed = pack.clone();
            listed.items.clear();
            let document = PackDocument::of(&listed);
            self.listed.insert(key, (listed, document));
        }
    }
}

impl Tables {
    /// Moves `change` units into share `shard` of a pack's supply (a release: 1; a start: -1)
    /// at `at`, and its `remaining` with it, in its listing too: in memory the summary is never
    /// behind, so its `pack.sold_out` is written by the move that takes the last unit.
    pub(super) fn move_units(&mut self, id: &PackId, shard: u32, change: i64, at: Timestamp) {
        let pack_id = id.as_str();
        let Some(share) = self
            .supply
            .get_mut(pack_id)
            .and_then(|shares| shares.get_mut(shard as usize))
        else {
            return;
        };
        *share = share.saturating_add_signed(change);
        let remaining = self.supply[pack_id].iter().sum();
        let Some(stored) = self.packs.get_mut(pack_id) else {
            return;
        };
        let sold_out = stored.pack.remaining > 0 && remaining == 0;
        stored.pack.remaining = remaining;
        if let Some(key) = ListingKey::of(&stored.pack)
            && let Some((pack, document)) = self.listed.get_mut(&key)
        {
            pack.remaining = remaining;
            *document = document.with_remaining(remaining);
        }
        if sold_out {
            self.emit(pack_sold_out(id), at);
        }
    }
}

impl Tables {
    /// The keeper's mark on a pack whose line finished, in its listing too.
    pub(super) fn mark_line_finished(&mut self, pack_id: &PackId) {
        let Some(stored) = self.packs.get_mut(pack_id.as_str()) else {
            return;
        };
        stored.pack.line_finished = true;
        if let Some(key) = ListingKey::of(&stored.pack)
            && let Some((pack, document)) = self.listed.get_mut(&key)
        {
            pack.line_finished = true;
            *document = document.clone().with_line_finished(true);
        }
    }
}

impl MemoryStore {
    /// A store holding `packs`, each created as `seed-packs` creates it.
    pub fn with_packs(packs: &[Pack]) -> Self {
        let store = Self::default();
        {
            let mut tables = store.write();
            for pack in packs {
                tables.seed_queue(pack, queue_write(pack, SeedWrite::Create, Timestamp::now()));
                tables.put_pack(
                    StoredPack {
                        pack: pack.clone(),
                        seed: ServerSeed::generate(),
                        revision: 1,
                    },
                    true,
                );
            }
        }
        store
    }
}

impl ListActivePacks for MemoryStore {
    async fn list_active_packs(&self, request: &PageRequest) -> Result<Page, StoreError> {
        let tables = self.read();
        let start = request
            .after
            .as_ref()
            .map_or(Bound::Unbounded, Bound::Excluded);
        let mut listed = tables
            .listed
            .range((start, Bound::Unbounded))
            .filter(|(_, (pack, _))| pack.is_active_at(request.now) && request.filter.admits(pack))
            .take(request.limit + 1);
        // One allocation of the page's size: a filter's size hint is 0, and collecting from it
        // grows the list, then copies it.
        let mut packs = Vec::with_capacity(request.limit.min(tables.listed.len()));
        let mut last = None;
        for (key, (_, document)) in listed.by_ref().take(request.limit) {
            packs.push(document.clone());
            last = Some(key);
        }
        let more = listed.next().is_some();
        Ok(Page {
            next: last.filter(|_| more).cloned(),
            packs,
        })
    }
}

impl ListUpcomingPacks for MemoryStore {
    async fn list_upcoming_packs(
        &self,
        now: Timestamp,
        limit: usize,
    ) -> Result<Vec<PackDocument>, StoreError> {
        let tables = self.read();
        // The listing order is the latest start first: the soonest of the upcoming are last.
        Ok(tables
            .listed
            .values()
            .rev()
            .filter(|(pack, _)| pack.sale_starts_at.is_some_and(|starts| starts > now))
            .take(limit)
            .map(|(_, document)| document.clone())
            .collect())
    }
}

impl GetPack for MemoryStore {
    async fn get_pack(&self, pack_id: &PackId) -> Result<Option<StoredPack>, StoreError> {
        Ok(self.read().packs.get(pack_id.as_str()).cloned())
    }
}

impl SeedPack for MemoryStore {
    async fn seed_pack(
        &self,
        pack: &Pack,
        write: SeedWrite,
        revision: u64,
        now: Timestamp,
    ) -> Result<(), SeedPackError> {
        let mut tables = self.write();
        let stored = tables.packs.get(&pack.id);
        let holds = match (write, stored) {
            (SeedWrite::Create, None) => true,
            (SeedWrite::Create, Some(_)) | (_, None) => false,
            (SeedWrite::Replace, Some(stored)) => {
                stored.revision == revision && replaceable(&stored.pack, now)
            }
            (SeedWrite::Update, Some(stored)) => stored.revision == revision,
        };
        if !holds {
            return Err(SeedPackError::Changed);
        }
        let seed = stored.map_or_else(ServerSeed::generate, |stored| stored.seed.clone());
        // As DynamoDB's in-place update of the item: the keeper's mark stays.
        let line_finished = stored.is_some_and(|stored| stored.pack.line_finished);
        tables.seed_queue(pack, queue_write(pack, write, now));
        tables.put_pack(
            StoredPack {
                pack: Pack {
                    line_finished,
                    ..pack.clone()
                },
                seed,
                revision: revision + 1,
            },
            write != SeedWrite::Update,
        );
        Ok(())
    }
}

impl ReadSupply for MemoryStore {
    async fn read_supply(&self, pack_id: &PackId) -> Result<Option<Supply>, StoreError> {
        let tables = self.read();
        let held = tables
            .purchases
            .values()
            .filter(|p| p.pack_id == *pack_id && p.status == PurchaseStatus::Reserved)
            .count();
        Ok(tables.supply.get(pack_id.as_str()).map(|shares| Supply {
            shares: shares.clone(),
            held: held as u64,
            sold: tables.sold.get(pack_id.as_str()).copied().unwrap_or(0),
        }))
    }
}

impl RefreshRemaining for MemoryStore {
    /// Nothing to do: in memory every change of a share updates the summary with it.
    async fn refresh_remaining(&self) -> Result<u64, StoreError> {
        Ok(0)
    }
}

impl PublishRevealedSeeds for MemoryStore {
    async fn publish_revealed_seeds(&self, now: Timestamp) -> Result<u64, StoreError> {
        let mut tables = self.write();
        let due: Vec<String> = tables
            .listed
            .values()
            .map(|(pack, _)| pack)
            .filter(|pack| pack.sale_ends_at.is_some() && seed_revealed(pack.sale_ends_at, now))
            .map(|pack| pack.id.clone())
            .filter(|id| !tables.revealed.contains(id))
            .collect();
        let published = due.len() as u64;
        tables.revealed.extend(due);
        Ok(published)
    }
}

impl GetRevealedSeed for MemoryStore {
    async fn revealed_seed(&self, pack_id: &PackId) -> Result<Option<ServerSeed>, StoreError> {
        let tables = self.read();
        Ok(tables
            .revealed
            .contains(pack_id.as_str())
            .then(|| {
                tables
                    .packs
                    .get(pack_id.as_str())
                    .map(|stored| stored.seed.clone())
            })
            .flatten())
    }

    async fn revealed_seeds(
        &self,
        pack_ids: &[&PackId],
    ) -> Result<Vec<Option<ServerSeed>>, StoreError> {
        let mut seeds = Vec::with_capacity(pack_ids.len());
        for pack_id in pack_ids {
            seeds.push(self.revealed_seed(pack_id).await?);
        }
        Ok(seeds)
    }
}
