//! Storage, grouped per aggregate: one trait per operation a handler needs (it lines up with each
//! function's IAM policy), each implemented on DynamoDB and in memory.
//!
//! - [`packs`], [`purchases`], [`cash`], [`links`]: the traits of each aggregate.
//! - [`schema`]: the single table (keys, indexes, the item key of each entity).
//! - [`dynamo`]: [`DynamoStore`], the implementation on DynamoDB.
//! - [`memory`]: [`MemoryStore`], the same operations in process, with the same atomicity (one
//!   lock around each operation), for the local API. One contract suite
//!   (`shared/tests/store_contract.rs`) runs against both so they cannot drift.

pub mod cash;
pub mod dynamo;
pub mod links;
pub mod memory;
pub mod packs;
pub mod purchases;
pub mod schema;

pub use dynamo::DynamoStore;
pub use memory::MemoryStore;

use crate::http::error::ApiError;

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

/// Every operation of every aggregate: what the local API and the contract tests hold.
pub trait Store:
    packs::PackStore + purchases::PurchaseStore + links::LinkStore + cash::CashStore
{
}
impl<S: packs::PackStore + purchases::PurchaseStore + links::LinkStore + cash::CashStore> Store
    for S
{
}
