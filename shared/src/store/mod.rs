//! Storage: one trait per operation a handler needs, and their DynamoDB implementation.
//!
//! - [`schema`]: the single table (keys, the sparse index, the item key of each entity).
//! - [`dynamo`]: [`DynamoStore`], the implementation on DynamoDB.

pub mod dynamo;
pub mod schema;

use std::future::Future;

pub use dynamo::DynamoStore;

use crate::error::ApiError;
use crate::links::LinkUpsert;
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
