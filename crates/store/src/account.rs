//! A fan's account deletion (`domain::account`, docs/account-deletion.md): the stored deletion
//! (`DELETION#<userId>` / `DELETION`, listed under `DELETIONS#PENDING` of `GSI1` until done),
//! begun in one write with the refusal of every token of the fan, then carried through its steps
//! a bounded piece at a time, by the request and then by the scheduled `account-erasure`, from
//! the step stored: a crash halfway is resumed, never left half-done.

use std::future::Future;

use crate::StoreError;
use domain::account::Deletion;
use domain::ids::UserId;
use domain::timestamp::Timestamp;

/// The key prefix of the deletions (the deletion functions' reach).
pub const DELETION_PREFIX: &str = "DELETION#";
pub const DELETION_SK: &str = "DELETION";
/// The `GSI1` partition of the deletions not yet done, by request time.
pub const PENDING_DELETIONS: &str = "DELETIONS#PENDING";

pub fn deletion_pk(user_id: &UserId) -> String {
    format!("{DELETION_PREFIX}{user_id}")
}

/// How long after a pending top-up's Checkout Session closes the erasure waits for Stripe's
/// last word on it (its webhook is retried for days, but nearly always lands in seconds): a
/// payment made at the last second is credited, then kept with the books.
pub const TOP_UP_GRACE_SECONDS: u64 = 600;

/// Every operation of a deletion.
pub trait AccountDeletion: Send + Sync {
    /// The fan's deletion, if one was begun (strongly consistent).
    fn deletion(
        &self,
        user_id: &UserId,
    ) -> impl Future<Output = Result<Option<Deletion>, StoreError>> + Send;

    /// The fan's top-ups whose Checkout Session is still open at `now`.
    fn pending_top_ups(
        &self,
        user_id: &UserId,
        now: Timestamp,
    ) -> impl Future<Output = Result<u32, StoreError>> + Send;

    /// Begins `deletion`: its record, only if the fan has none, and every token of the fan
    /// refused from the next request, in one write. The deletion stored: this one, or the one
    /// begun before (whose outcome a repeat answers).
    fn begin_deletion(
        &self,
        deletion: &Deletion,
    ) -> impl Future<Output = Result<Deletion, StoreError>> + Send;

    /// One bounded piece of `deletion`'s step at `now`, money re-keyed to `pseudonym`; the
    /// deletion as stored after it (its step moved on once the step's part is done). A piece
    /// run twice, or by two workers at once, does its part once.
    fn erase_step(
        &self,
        deletion: &Deletion,
        pseudonym: &UserId,
        now: Timestamp,
    ) -> impl Future<Output = Result<Deletion, StoreError>> + Send;

    /// Up to `max` deletions not done, oldest first (the scheduled erasure's work).
    fn unfinished_deletions(
        &self,
        max: usize,
    ) -> impl Future<Output = Result<Vec<Deletion>, StoreError>> + Send;
}

/// Whether the erasure may leave the fan's pending top-ups: none of their sessions closed less
/// than [`TOP_UP_GRACE_SECONDS`] before `now` (both stores' rule).
pub fn top_ups_settled(pending: &domain::topups::pending::PendingTopUps, now: Timestamp) -> bool {
    pending
        .slots
        .iter()
        .flatten()
        .all(|slot| slot.expires_at.unix_seconds() + TOP_UP_GRACE_SECONDS <= now.unix_seconds())
}

/// How many of the fan's pending top-ups still have an open Checkout Session at `now`.
pub fn live_top_ups(pending: &domain::topups::pending::PendingTopUps, now: Timestamp) -> u32 {
    let live = pending
        .slots
        .iter()
        .flatten()
        .filter(|slot| slot.expires_at > now)
        .count();
    u32::try_from(live).unwrap_or(u32::MAX)
}
