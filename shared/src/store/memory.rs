//! [`MemoryStore`]: the storage traits in process, for the local API (no server needed). Same
//! semantics as [`DynamoStore`](super::DynamoStore): the shared contract tests run on both.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, PoisonError, RwLock};

use crate::links::{LinkUpsert, Web3Link};
use crate::packs::Pack;
use crate::packs::listing::{ListingKey, Page, PageRequest};
use crate::store::{GetLink, GetPack, ListActivePacks, SavePack, StoreError, UpsertLink};

#[derive(Default)]
struct Tables {
    packs: BTreeMap<String, Pack>,
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
        store
            .write()
            .packs
            .extend(packs.iter().map(|p| (p.id.clone(), p.clone())));
        store
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Tables> {
        self.tables.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Tables> {
        self.tables.write().unwrap_or_else(PoisonError::into_inner)
    }
}

impl ListActivePacks for MemoryStore {
    async fn list_active_packs(&self, request: &PageRequest) -> Result<Page, StoreError> {
        let tables = self.read();
        let mut listed: Vec<(ListingKey, &Pack)> = tables
            .packs
            .values()
            .filter(|pack| pack.is_active_at(request.now))
            .filter_map(|pack| ListingKey::of(pack).map(|key| (key, pack)))
            .filter(|(key, _)| request.after.as_ref().is_none_or(|after| key > after))
            .collect();
        listed.sort_by(|(a, _), (b, _)| a.cmp(b));
        let more = listed.len() > request.limit;
        listed.truncate(request.limit);
        Ok(Page {
            next: if more {
                listed.last().map(|(key, _)| key.clone())
            } else {
                None
            },
            packs: listed.into_iter().map(|(_, pack)| pack.clone()).collect(),
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
        self.write().packs.insert(pack.id.clone(), pack.clone());
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
