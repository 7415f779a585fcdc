//! [`MemoryStore`]: the storage traits in process, for the local API (no server needed). Same
//! semantics as [`DynamoStore`](super::DynamoStore): the shared contract tests run on both.

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;
use std::sync::{Arc, PoisonError, RwLock};

use crate::links::{LinkUpsert, Web3Link};
use crate::packs::Pack;
use crate::packs::document::PackDocument;
use crate::packs::listing::{ListingKey, Page, PageRequest};
use crate::store::{GetLink, GetPack, ListActivePacks, SavePack, StoreError, UpsertLink};

#[derive(Default)]
struct Tables {
    packs: BTreeMap<String, Pack>,
    /// The packs that can be listed, in list order, with their documents: the in-memory
    /// listing index.
    listed: BTreeMap<ListingKey, (Pack, PackDocument)>,
    /// By (user id, provider).
    links: HashMap<(String, String), Web3Link>,
}

/// In-process store; clones share the same data.
#[derive(Clone, Default)]
pub struct MemoryStore {
    tables: Arc<RwLock<Tables>>,
}

impl MemoryStore {
    /// A store holding `packs`.
    pub fn with_packs(packs: &[Pack]) -> Self {
        let store = Self::default();
        {
            let mut tables = store.write();
            for pack in packs {
                tables.save(pack);
            }
        }
        store
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Tables> {
        self.tables.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Tables> {
        self.tables.write().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Tables {
    fn save(&mut self, pack: &Pack) {
        if let Some(key) = self.packs.get(&pack.id).and_then(ListingKey::of) {
            self.listed.remove(&key);
        }
        if let Some(key) = ListingKey::of(pack) {
            self.listed
                .insert(key, (pack.clone(), PackDocument::of(pack)));
        }
        self.packs.insert(pack.id.clone(), pack.clone());
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
            .filter(|(_, (pack, _))| pack.is_active_at(request.now))
            .take(request.limit + 1);
        let packs: Vec<(&ListingKey, &(Pack, PackDocument))> =
            listed.by_ref().take(request.limit).collect();
        let more = listed.next().is_some();
        Ok(Page {
            next: if more {
                packs.last().map(|(key, _)| (*key).clone())
            } else {
                None
            },
            packs: packs
                .into_iter()
                .map(|(_, (_, document))| document.clone())
                .collect(),
        })
    }
}

impl UpsertLink for MemoryStore {
    async fn upsert_link(&self, link: &LinkUpsert<'_>) -> Result<(), StoreError> {
        let mut tables = self.write();
        let key = (link.user_id.to_owned(), link.provider.to_owned());
        let linked_at = tables
            .links
            .get(&key)
            .map_or(link.at, |existing| existing.linked_at);
        tables.links.insert(
            key,
            Web3Link {
                user_id: link.user_id.to_owned(),
                email: link.email.map(str::to_owned),
                provider: link.provider.to_owned(),
                payload: link.payload.get().to_owned(),
                linked_at,
                updated_at: link.at,
            },
        );
        Ok(())
    }
}

impl SavePack for MemoryStore {
    async fn save_pack(&self, pack: &Pack) -> Result<(), StoreError> {
        self.write().save(pack);
        Ok(())
    }
}

impl GetPack for MemoryStore {
    async fn get_pack(&self, pack_id: &str) -> Result<Option<Pack>, StoreError> {
        Ok(self.read().packs.get(pack_id).cloned())
    }
}

impl GetLink for MemoryStore {
    async fn get_link(
        &self,
        user_id: &str,
        provider: &str,
    ) -> Result<Option<Web3Link>, StoreError> {
        Ok(self
            .read()
            .links
            .get(&(user_id.to_owned(), provider.to_owned()))
            .cloned())
    }
}
