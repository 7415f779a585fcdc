//! The operations on purchases. Each is one atomic write (a conditional write or a transaction)
//! with every rule that two requests could race inside its condition, after at most one read.

pub mod decide;

use std::future::Future;

use crate::StoreError;
use domain::ids::{PackId, PurchaseId, UserId};
use domain::purchases::{Purchase, StartRefusal, StartRequest};
use domain::timestamp::Timestamp;

/// What a start did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Started {
    /// A new purchase, reserved: one unit of the pack held for it.
    Created(Purchase),
    /// The key was used before for this very start: the purchase it made, nothing changed.
    Repeated(Purchase),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Refused(#[from] StartRefusal),
    /// The key was used before for another start (another pack or client seed).
    #[error("the idempotency key was used for another start")]
    KeyReused,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Starts a purchase: in one transaction, the pack's `remaining` down by one and the buyer's
/// purchase count of the pack up by one, each conditioned on the rules of
/// [`check_start`](domain::purchases::check_start), and the purchase created unless its id (from
/// the idempotency key) exists. Before refusing as sold out, the pack's expired holds are
/// released, so that a drop does not look sold out while units sit in dead holds.
pub trait StartPurchase: Send + Sync {
    fn start_purchase(
        &self,
        request: &StartRequest,
    ) -> impl Future<Output = Result<Started, StartError>> + Send;
}

/// A user's purchase by id, or `None`.
pub trait GetPurchase: Send + Sync {
    fn get_purchase(
        &self,
        user_id: &UserId,
        purchase_id: &PurchaseId,
    ) -> impl Future<Output = Result<Option<Purchase>, StoreError>> + Send;
}

/// What a completion did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Completed {
    /// Paid now: the purchase and the balance left in its currency.
    Paid { purchase: Purchase, balance: u64 },
    /// Paid before: the purchase and the balance now; nothing changed.
    Repeated { purchase: Purchase, balance: u64 },
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompleteError {
    #[error(transparent)]
    Refused(#[from] domain::purchases::CompleteRefusal),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Completes the caller's purchase of `pack_id`: in one transaction, `reserved -> completed`
/// (while its hold runs), the balance in its currency down by its price (never below zero)
/// and a debit written to the ledger. A hold found expired is released instead.
pub trait CompletePurchase: Send + Sync {
    fn complete_purchase(
        &self,
        user_id: &UserId,
        pack_id: &PackId,
        purchase_id: &PurchaseId,
        now: Timestamp,
    ) -> impl Future<Output = Result<Completed, CompleteError>> + Send;
}

/// What a sweep of expired holds did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Released {
    /// Holds released: `reserved -> expired`, their units back in their packs.
    pub released: u64,
    /// Holds found expired but taken by another writer first (a completion, another sweep).
    pub lost_races: u64,
    /// Holds that cannot be released (an unreadable purchase, its pack or count gone): logged
    /// and skipped, so that one bad record never stops the release of the others.
    pub skipped: u64,
    /// Whether more expired holds may remain (the batch was full).
    pub more: bool,
}

/// Releases up to `max` holds expired at `now` (of one pack, or of all), each in one
/// transaction conditioned on the purchase still being reserved and expired: `expired`, the
/// pack's `remaining` up by one, the buyer's slot freed. Safe to run any number of times.
pub trait ReleaseHolds: Send + Sync {
    fn release_holds(
        &self,
        pack_id: Option<&PackId>,
        now: Timestamp,
        max: usize,
    ) -> impl Future<Output = Result<Released, StoreError>> + Send;
}

/// Every purchase operation.
pub trait PurchaseStore:
    StartPurchase + GetPurchase + CompletePurchase + ReleaseHolds + OpenPurchase
{
}
impl<S: StartPurchase + GetPurchase + CompletePurchase + ReleaseHolds + OpenPurchase> PurchaseStore
    for S
{
}

/// What an opening did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opened {
    /// The opened purchase, its items as drawn.
    pub purchase: Purchase,
    /// The pack's seed as shown now: the commitment, and the seed once revealed.
    pub fairness: domain::purchases::OpenedFairness,
    /// Opened before (by this request's earlier try or a concurrent one): nothing changed.
    pub repeated: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OpenError {
    #[error(transparent)]
    Refused(#[from] domain::purchases::OpenRefusal),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Opens the caller's paid purchase of `pack_id`: reads it and the pack's draw inputs, draws,
/// and writes the items with `completed -> opened` in one conditional write, so that however
/// many opens race, one draw is written and all answer it.
pub trait OpenPurchase: Send + Sync {
    fn open_purchase(
        &self,
        user_id: &UserId,
        pack_id: &PackId,
        purchase_id: &PurchaseId,
        now: Timestamp,
    ) -> impl Future<Output = Result<Opened, OpenError>> + Send;
}

/// A page of the fan's purchases, newest `reservedAt` first, that `query` asks for: one Query of
/// their partition of the fan's index (a second when entries the filters skipped cut the first
/// short); never a read per purchase.
pub trait ListMyPurchases: Send + Sync {
    fn list_my_purchases(
        &self,
        query: &domain::purchases::mine::MyPurchasesQuery,
    ) -> impl Future<Output = Result<domain::purchases::mine::Page<Purchase>, StoreError>> + Send;
}

/// A page of the items the fan pulled from opened packs, newest opening first: one Query of
/// their opened purchases (a second when filtered entries cut the first short).
pub trait ListMyItems: Send + Sync {
    fn list_my_items(
        &self,
        query: &domain::purchases::mine::MyItemsQuery,
    ) -> impl Future<
        Output = Result<domain::purchases::mine::Page<domain::purchases::mine::MyItem>, StoreError>,
    > + Send;
}

/// Writes `purchases` as they are, each its item with its index entries, outside the books (no
/// unit taken, no buyer's count, no debit): how tests and benchmarks make a fan with hundreds
/// of purchases in a few requests, where each start is a transaction.
pub trait SeedPurchases: Send + Sync {
    fn seed_purchases(
        &self,
        purchases: &[Purchase],
    ) -> impl Future<Output = Result<(), StoreError>> + Send;
}
