//! The operations of the rate limits and the human check: a window's counter taken from under
//! its quota, and a human-check token spent once. Each is one conditional write, its condition
//! declared here once, for both stores.

use std::future::Future;

use crate::StoreError;
use crate::condition::{Compare, Condition};
use crate::schema::RATE_COUNT;
use domain::ratelimit::{Counter, Taken};

/// The window's count is under `quota`: no count yet (a new window), or fewer than `quota`.
pub fn under_quota(quota: u32) -> Condition {
    Condition::absent(RATE_COUNT).or(Condition::is(RATE_COUNT, Compare::Lt, quota))
}

/// A counter given back exists (a counter of a past window deleted meanwhile is not made anew).
pub fn counted() -> Condition {
    Condition::exists(RATE_COUNT)
}

/// A token not spent before.
pub fn unspent() -> Condition {
    Condition::new_item()
}

/// Takes one request from `counter`'s window under `quota`: one conditional add. A full window
/// ([`Taken::Full`]) writes nothing.
pub trait TakeFromWindow: Send + Sync {
    fn take(
        &self,
        counter: &Counter,
        quota: u32,
    ) -> impl Future<Output = Result<Taken, StoreError>> + Send;

    /// Gives back one request taken from `counter` (a request refused by another counter after
    /// this one counted it), so that a refused request leaves every count as it was.
    fn give_back(&self, counter: &Counter) -> impl Future<Output = Result<(), StoreError>> + Send;
}

/// Records a human-check token as spent, by its hash, until `expires_at` (seconds since the
/// epoch, past the token's own validity): `false` when it was spent before (nothing written).
pub trait SpendToken: Send + Sync {
    fn spend(
        &self,
        token_hash: &str,
        expires_at: i64,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;
}

/// Every operation of the abuse defences.
pub trait AbuseStore: TakeFromWindow + SpendToken {}
impl<S: TakeFromWindow + SpendToken> AbuseStore for S {}
