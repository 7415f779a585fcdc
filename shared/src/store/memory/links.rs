//! Web3 links in memory.

use super::MemoryStore;
use crate::ids::UserId;
use crate::links::{LinkUpsert, Web3Link};
use crate::store::StoreError;
use crate::store::links::{GetLink, UpsertLink};

impl UpsertLink for MemoryStore {
    async fn upsert_link(&self, link: &LinkUpsert<'_>) -> Result<(), StoreError> {
        let mut tables = self.write();
        let key = (link.user_id.to_string(), link.provider.to_owned());
        let linked_at = tables
            .links
            .get(&key)
            .map_or(link.at, |existing| existing.linked_at);
        tables.links.insert(
            key,
            Web3Link {
                user_id: link.user_id.to_string(),
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

impl GetLink for MemoryStore {
    async fn get_link(
        &self,
        user_id: &UserId,
        provider: &str,
    ) -> Result<Option<Web3Link>, StoreError> {
        Ok(self
            .read()
            .links
            .get(&(user_id.to_string(), provider.to_owned()))
            .cloned())
    }
}
