//! The operations on a fan's wallets (`USER#<userId>` / `WALLET#<walletId>`, and the count
//! `WALLETS`). A link adds or refreshes a wallet ([`crate::links::UpsertLink`]).

use std::future::Future;

use crate::StoreError;
use domain::ids::{UserId, WalletId};
use domain::timestamp::Timestamp;
use domain::wallets::Wallet;

/// The fan's wallets, newest first ([`domain::wallets::sort_newest_first`]): one read.
pub trait ListWallets: Send + Sync {
    fn list_wallets(
        &self,
        user_id: &UserId,
    ) -> impl Future<Output = Result<Vec<Wallet>, StoreError>> + Send;
}

/// What a removal did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Removal {
    /// The wallet was the fan's: it is gone and its slot of the cap free, in one transaction.
    Removed,
    /// The fan holds no wallet of that id (another fan's is not under their key): nothing changed.
    NotHeld,
}

/// Removes one of the fan's wallets at `now` and frees its slot of the cap, with its
/// `wallet.removed` event, in one transaction.
pub trait DeleteWallet: Send + Sync {
    fn delete_wallet(
        &self,
        user_id: &UserId,
        wallet_id: &WalletId,
        now: Timestamp,
    ) -> impl Future<Output = Result<Removal, StoreError>> + Send;
}

/// Every wallet operation (a link's is [`crate::links::UpsertLink`]).
pub trait WalletStore: ListWallets + DeleteWallet {}
impl<S: ListWallets + DeleteWallet> WalletStore for S {}
