//! Storage, grouped per aggregate: one trait per operation a handler needs (it lines up with each
//! function's IAM policy), each implemented on DynamoDB and in memory.
//!
//! - [`packs`], [`purchases`], [`cash`], [`links`], [`topups`], [`catalog`], [`wallets`],
//!   [`profile`], [`locker_room`], [`leaderboards`], [`quests`], [`queue`]: the traits of each
//!   aggregate.
//! - [`condition`], [`purchase_conditions`], [`wallet_conditions`]: each condition a write puts
//!   on the items it changes, declared once, rendered for DynamoDB and checked in memory.
//! - [`schema`]: the single table (keys, indexes, the item key of each entity).
//! - [`dynamo`]: [`DynamoStore`], the implementation on DynamoDB.
//! - [`memory`]: [`MemoryStore`], the same operations in process, with the same atomicity (one
//!   lock around each operation), for the local API. One contract suite
//!   (`crates/api/tests/store_contract.rs`) runs against both so they cannot drift.

pub mod account;
pub mod app_config;
pub mod cash;
pub mod catalog;
pub mod condition;
pub mod dynamo;
pub mod events;
pub mod leaderboards;
pub mod links;
pub mod locker_room;
pub mod memory;
pub mod metrics;
pub mod packs;
pub mod products;
pub mod profile;
pub mod purchase_conditions;
pub mod purchases;
pub mod quests;
pub mod queue;
pub mod queue_conditions;
pub mod queue_excluded;
pub mod queue_keeper;
pub mod ratelimit;
pub mod schema;
pub mod sessions;
pub mod topups;
pub mod wallet_conditions;
pub mod wallets;
pub mod webhooks;

pub use dynamo::DynamoStore;
pub use memory::MemoryStore;

use std::error::Error;
use std::sync::Arc;

/// What caused a [`StoreError`]: the SDK's error, a (de)serialisation error, ... Shared, so that
/// an error can be cloned (a cache hands one answer to several waiters).
pub type ErrorSource = Arc<dyn Error + Send + Sync>;

/// A storage failure: what the store was doing, and its cause when there is one (the HTTP layer
/// maps it to a 503 or a 500 in `http::error`, logging the whole chain and rendering none of it).
#[derive(Debug, Clone, thiserror::Error)]
pub enum StoreError {
    /// The store throttled, timed out or could not be reached (after the SDK's bounded retries).
    #[error("store unavailable: {context}")]
    Unavailable {
        context: String,
        #[source]
        source: Option<ErrorSource>,
    },
    /// Any other failure.
    #[error("store failure: {context}")]
    Internal {
        context: String,
        #[source]
        source: Option<ErrorSource>,
    },
}

impl StoreError {
    pub fn unavailable(context: impl Into<String>) -> Self {
        Self::Unavailable {
            context: context.into(),
            source: None,
        }
    }

    pub fn internal(context: impl Into<String>) -> Self {
        Self::Internal {
            context: context.into(),
            source: None,
        }
    }

    /// An internal failure caused by `source`.
    pub fn internal_from(
        context: impl Into<String>,
        source: impl Error + Send + Sync + 'static,
    ) -> Self {
        Self::Internal {
            context: context.into(),
            source: Some(Arc::new(source)),
        }
    }

    fn parts(&self) -> (bool, &str) {
        match self {
            Self::Unavailable { context, .. } => (true, context),
            Self::Internal { context, .. } => (false, context),
        }
    }

    /// The failure and every cause under it, for the logs.
    pub fn detail(&self) -> String {
        let mut detail = self.to_string();
        let mut cause = self.source();
        while let Some(error) = cause {
            detail.push_str(": ");
            detail.push_str(&error.to_string());
            cause = error.source();
        }
        detail
    }
}

/// Errors are compared by what they say (the domain errors that wrap one are compared in tests);
/// a source has no equality of its own.
impl PartialEq for StoreError {
    fn eq(&self, other: &Self) -> bool {
        self.parts() == other.parts()
    }
}
impl Eq for StoreError {}

/// Every operation of every aggregate: what the local API and the contract tests hold.
pub trait Store:
    app_config::AppConfigStore
    + packs::PackStore
    + purchases::PurchaseStore
    + links::LinkStore
    + cash::CashStore
    + FanViewStore
    + topups::TopUpStore
    + profile::ProfileStore
    + locker_room::LockerRoomStore
    + catalog::CatalogStore
    + wallets::WalletStore
    + leaderboards::LeaderboardStore
    + quests::QuestStore
    + products::ProductStore
    + queue::QueueStore
    + queue::ListMyEntries
    + queue_keeper::QueueKeeper
    + ratelimit::AbuseStore
    + events::EventStore
    + sessions::SessionStore
    + webhooks::WebhookStore
    + webhooks::ManageEndpoints
    + account::AccountDeletion
{
}
impl<
    S: app_config::AppConfigStore
        + packs::PackStore
        + purchases::PurchaseStore
        + links::LinkStore
        + cash::CashStore
        + FanViewStore
        + topups::TopUpStore
        + profile::ProfileStore
        + locker_room::LockerRoomStore
        + catalog::CatalogStore
        + wallets::WalletStore
        + leaderboards::LeaderboardStore
        + quests::QuestStore
        + products::ProductStore
        + queue::QueueStore
        + queue::ListMyEntries
        + queue_keeper::QueueKeeper
        + ratelimit::AbuseStore
        + events::EventStore
        + sessions::SessionStore
        + webhooks::WebhookStore
        + webhooks::ManageEndpoints
        + account::AccountDeletion,
> Store for S
{
}

/// The fan's own view: their purchases, items, balances and ledger (reads only).
pub trait FanViewStore:
    purchases::ListMyPurchases + purchases::ListMyItems + cash::GetBalances + cash::ListLedger
{
}
impl<S: purchases::ListMyPurchases + purchases::ListMyItems + cash::GetBalances + cash::ListLedger>
    FanViewStore for S
{
}
