//! Storage: one trait per operation a handler needs, and their DynamoDB implementation.
//!
//! - [`schema`]: the single table (keys, the sparse index, the item key of each entity).
//! - [`dynamo`]: [`DynamoStore`], the implementation on DynamoDB.
//! - [`memory`]: [`MemoryStore`], the same operations in process, for the local API. One test
//!   suite (`shared/tests/store_contract.rs`) runs against both so they cannot drift.

pub mod dynamo;
pub mod memory;
pub mod schema;

use std::future::Future;

pub use dynamo::DynamoStore;
pub use memory::MemoryStore;

use crate::error::ApiError;
use crate::links::{LinkUpsert, Web3Link};
use crate::packs::Pack;
use crate::packs::listing::{Page, PageRequest};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// The store throttled, timed out or could not be reached (after the SDK's bounded retries).
    #[error("store unavailable: {0}")]
    Unavailable(String),
    /// Any other failure.
    #[error("store failure: {0}")]
    Internal(String),
}

impl From<StoreError> for ApiError {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::Unavailable(detail) => ApiError::Unavailable {
                what: "dynamodb",
                detail,
            },
            StoreError::Internal(detail) => ApiError::Internal { detail },
        }
    }
}

/// A page of the active packs, in list order, after `request.after`.
pub trait ListActivePacks: Send + Sync {
    fn list_active_packs(
        &self,
        request: &PageRequest,
    ) -> impl Future<Output = Result<Page, StoreError>> + Send;
}

/// Creates or replaces a user's link (keeping the first `linkedAt`), in one atomic write.
pub trait UpsertLink: Send + Sync {
    fn upsert_link(
        &self,
        link: &LinkUpsert<'_>,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;
}

/// Creates or replaces a pack (seeding, and the admin operations to come).
pub trait SavePack: Send + Sync {
    fn save_pack(&self, pack: &Pack) -> impl Future<Output = Result<(), StoreError>> + Send;
}

/// A pack by id, or `None`.
pub trait GetPack: Send + Sync {
    fn get_pack(
        &self,
        pack_id: &str,
    ) -> impl Future<Output = Result<Option<Pack>, StoreError>> + Send;
}

/// A user's link to a provider, or `None`.
pub trait GetLink: Send + Sync {
    fn get_link(
        &self,
        user_id: &str,
        provider: &str,
    ) -> impl Future<Output = Result<Option<Web3Link>, StoreError>> + Send;
}
