//! A fan's wallets in memory, and the items DynamoDB's wallet conditions are checked against.

use std::collections::BTreeMap;

use super::MemoryStore;
use crate::StoreError;
use crate::condition::{Attributes, Value, require};
use crate::schema::{PK, WALLETS_COUNT, wallet_sk};
use crate::wallet_conditions::wallet_held;
use crate::wallets::{DeleteWallet, ListWallets, Removal};
use domain::ids::{UserId, WalletId};
use domain::timestamp::Timestamp;
use domain::wallets::{Wallet, removal_events, sort_newest_first};

/// A wallet as its item: it exists (the conditions ask no more of it than its key).
impl Attributes for Wallet {
    fn attribute(&self, path: &[&str]) -> Option<Value> {
        match path {
            [PK] => Some(Value::S(wallet_sk(&self.id))),
            _ => None,
        }
    }
}

/// A fan's wallets as their count item (`n`).
pub(super) struct WalletsItem<'a>(pub &'a BTreeMap<WalletId, Wallet>);

impl Attributes for WalletsItem<'_> {
    fn attribute(&self, path: &[&str]) -> Option<Value> {
        match path {
            [WALLETS_COUNT] => i128::try_from(self.0.len()).ok().map(Value::N),
            _ => None,
        }
    }
}

impl ListWallets for MemoryStore {
    async fn list_wallets(&self, user_id: &UserId) -> Result<Vec<Wallet>, StoreError> {
        let mut wallets: Vec<Wallet> = self
            .read()
            .wallets
            .get(user_id)
            .map(|wallets| wallets.values().cloned().collect())
            .unwrap_or_default();
        sort_newest_first(&mut wallets);
        Ok(wallets)
    }
}

impl DeleteWallet for MemoryStore {
    async fn delete_wallet(
        &self,
        user_id: &UserId,
        wallet_id: &WalletId,
        now: Timestamp,
    ) -> Result<Removal, StoreError> {
        let mut tables = self.write();
        let Some(wallets) = tables.wallets.get_mut(user_id) else {
            return Ok(Removal::NotHeld);
        };
        let Some(wallet) = wallets.get(wallet_id) else {
            return Ok(Removal::NotHeld);
        };
        require("delete wallet", &wallet_held(), Some(wallet))?;
        wallets.remove(wallet_id);
        tables.emit(removal_events(user_id, wallet_id), now);
        Ok(Removal::Removed)
    }
}
