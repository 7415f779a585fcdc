//! The operations on web3 links.

use std::future::Future;

use crate::ids::UserId;
use crate::links::{LinkUpsert, Web3Link};
use crate::store::StoreError;

/// Creates or replaces a user's link (keeping the first `linkedAt`), in one atomic write.
pub trait UpsertLink: Send + Sync {
    fn upsert_link(
        &self,
        link: &LinkUpsert<'_>,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;
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
