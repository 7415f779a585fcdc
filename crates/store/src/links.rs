//! The operations on web3 links.

use std::future::Future;

use crate::StoreError;
use domain::ids::UserId;
use domain::links::{LinkUpsert, Web3Link};
use domain::wallets::{WalletLimitReached, WalletWrite};

/// Why a link was not written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LinkError {
    /// A new identity for a fan who holds the most wallets: nothing was written.
    #[error(transparent)]
    Refused(#[from] WalletLimitReached),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Creates or replaces a user's link (keeping the first `linkedAt`) and records its payload
/// among the fan's wallets, in one transaction: the wallet of that payload refreshed
/// (`lastLinkedAt`, the payload as sent), or a new one added under the cap
/// ([`domain::wallets::admit_link`]); past the cap neither the link nor a wallet is written.
pub trait UpsertLink: Send + Sync {
    fn upsert_link(
        &self,
        link: &LinkUpsert<'_>,
    ) -> impl Future<Output = Result<WalletWrite, LinkError>> + Send;
}

/// A user's link to a provider, or `None`.
pub trait GetLink: Send + Sync {
    fn get_link(
        &self,
        user_id: &UserId,
        provider: &str,
    ) -> impl Future<Output = Result<Option<Web3Link>, StoreError>> + Send;
}

/// Every link operation.
pub trait LinkStore: UpsertLink + GetLink {}
impl<S: UpsertLink + GetLink> LinkStore for S {}
