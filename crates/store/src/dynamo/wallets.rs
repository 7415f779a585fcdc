//! A fan's wallets on DynamoDB: the list is one Query of their `WALLET#` items, a removal one
//! transaction of the wallet's delete, the count's decrement and its `wallet.removed` event. (A
//! link writes them: [`super::links`].)

use super::records::wallet_from_item;
use super::transaction::{Transaction, counter, delete};
use super::{Attempts, DynamoStore, key};
use crate::StoreError;
use crate::schema::{WALLET_PREFIX, WALLETS_COUNT, WALLETS_SK, user_pk, wallet_sk};
use crate::wallet_conditions::wallet_held;
use crate::wallets::{DeleteWallet, ListWallets, Removal};
use domain::ids::{UserId, WalletId};
use domain::timestamp::Timestamp;
use domain::wallets::{Wallet, removal_events, sort_newest_first};

impl ListWallets for DynamoStore {
    /// Strongly consistent (a wallet just linked is listed); at most 20 items, but a page stops
    /// at 1 MB and each payload may be up to the body limit, so every page is read.
    async fn list_wallets(&self, user_id: &UserId) -> Result<Vec<Wallet>, StoreError> {
        let mut wallets = self
            .query_prefix(user_pk(user_id), WALLET_PREFIX, true)
            .await?
            .into_iter()
            .map(wallet_from_item)
            .collect::<Result<Vec<_>, _>>()?;
        sort_newest_first(&mut wallets);
        Ok(wallets)
    }
}

/// The actions of a removal's transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    Wallet,
    Count,
}

impl DeleteWallet for DynamoStore {
    async fn delete_wallet(
        &self,
        user_id: &UserId,
        wallet_id: &WalletId,
        now: Timestamp,
    ) -> Result<Removal, StoreError> {
        let mut attempts = Attempts::new("delete wallet");
        loop {
            let transaction = Transaction::new()
                .with(
                    Action::Wallet,
                    delete(
                        &self.table,
                        key(user_pk(user_id), &wallet_sk(wallet_id)),
                        &wallet_held(),
                    )?,
                )
                .with(
                    Action::Count,
                    counter(
                        &self.table,
                        key(user_pk(user_id), WALLETS_SK),
                        WALLETS_COUNT,
                        -1,
                    )?,
                )
                .emit(removal_events(user_id, wallet_id), now);
            match self.run(transaction).await? {
                None => return Ok(Removal::Removed),
                Some(reasons) if reasons.failed(Action::Wallet) => return Ok(Removal::NotHeld),
                // Another transaction held one of the items: try again shortly.
                Some(reasons) => attempts.after(reasons.all()).await?,
            }
        }
    }
}
