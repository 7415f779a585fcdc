//! Web3 links in memory: the link and its wallet written under one lock, as DynamoDB's
//! transaction writes them.

use super::MemoryStore;
use super::wallets::WalletsItem;
use crate::StoreError;
use crate::condition::{Attributes, require};
use crate::links::{GetLink, LinkError, UpsertLink};
use crate::wallet_conditions;
use domain::ids::UserId;
use domain::links::{LinkUpsert, Web3Link};
use domain::wallets::{Wallet, WalletWrite, admit_link};

impl UpsertLink for MemoryStore {
    async fn upsert_link(&self, link: &LinkUpsert<'_>) -> Result<WalletWrite, LinkError> {
        let mut tables = self.write();
        let wallets = tables.wallets.entry(link.user_id.clone()).or_default();
        let existing = wallets.get(&link.wallet_id);
        let held = u32::try_from(wallets.len()).unwrap_or(u32::MAX);
        let write = admit_link(existing.is_some(), held)?;
        let (wallet_condition, count_condition) = wallet_conditions::link(write);
        let as_item = existing.map(|wallet| wallet as &dyn Attributes);
        require("link", &wallet_condition, as_item)?;
        if let Some(count_condition) = &count_condition {
            require("link", count_condition, Some(&WalletsItem(wallets)))?;
        }
        let wallet = Wallet::linked(
            existing,
            link.wallet_id.clone(),
            link.payload.get().to_owned(),
            link.at,
        );
        wallets.insert(link.wallet_id.clone(), wallet);
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
        tables.emit(link.events(write), link.at);
        Ok(write)
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
