//! The operations on Cash top-ups (`TOPUP#<topUpId>` / `TOPUP`): the top-up function creates
//! them and stores their Checkout Session; the webhook function settles them, crediting Cash
//! through the same credit entry and balance update as every other credit.

use std::future::Future;

use crate::StoreError;
use crate::cash::CreditCashError;
use crate::condition::Condition;
use domain::ids::{TopUpId, UserId};
use domain::purchases::mine::Page;
use domain::timestamp::{Timestamp, time_key};
use domain::topups::pending::{
    PendingSlot, PendingTopUps, SlotHolder, TooManyPending, take_pending_slot,
};
use domain::topups::{Checkout, TopUp, TopUpStatus};

/// What a create did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CreatedTopUp {
    /// Written now.
    New(TopUp),
    /// A top-up of this id existed (a repeat of the key): it, as stored.
    Existing(TopUp),
}

/// Why a top-up was not created.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CreateTopUpError {
    /// Its fan holds [`MAX_PENDING_TOP_UPS`](domain::topups::pending::MAX_PENDING_TOP_UPS) live
    /// pending top-ups: nothing was written.
    #[error(transparent)]
    TooManyPending(#[from] TooManyPending),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Writes a pending top-up, only while none of its id exists, taking one of its fan's pending
/// slots ([`take_pending_slot`](domain::topups::pending::take_pending_slot) at its `created_at`),
/// only while they are as read: one transaction, so that concurrent creates never hold more than
/// the cap. A repeat of an existing id answers it, whatever the slots.
pub trait CreateTopUp: Send + Sync {
    fn create_top_up(
        &self,
        top_up: &TopUp,
    ) -> impl Future<Output = Result<CreatedTopUp, CreateTopUpError>> + Send;
}

/// Stores a top-up's Checkout Session, only while it has none or has this one (one conditional
/// update); answers the top-up as stored after it (with the session stored first, when another
/// request stored one).
pub trait SetCheckout: Send + Sync {
    fn set_checkout(
        &self,
        id: &TopUpId,
        checkout: &Checkout,
    ) -> impl Future<Output = Result<TopUp, StoreError>> + Send;
}

/// A top-up by id, read strongly consistent.
pub trait GetTopUp: Send + Sync {
    fn get_top_up(
        &self,
        id: &TopUpId,
    ) -> impl Future<Output = Result<Option<TopUp>, StoreError>> + Send;
}

/// What completing a top-up did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompletedTopUp {
    /// Completed and credited now; the balance after the credit.
    Credited { balance: u64 },
    /// It was completed (and credited) before: nothing changed.
    AlreadyCompleted,
}

/// Settles top-ups from Stripe's events.
pub trait SettleTopUp: Send + Sync {
    /// Completes `top_up` (as read) and credits its user's Cash with its amount, in one
    /// transaction: the credit entry of [`domain::topups::credit_reference`] (only while unused),
    /// the balance, and the top-up (only while not completed and still of the session read).
    /// Then frees its pending slot (a failure there is left to the slot's expiry).
    fn complete_top_up(
        &self,
        top_up: &TopUp,
        at: Timestamp,
    ) -> impl Future<Output = Result<CompletedTopUp, CreditCashError>> + Send;

    /// Marks `top_up` (as read) `status` (failed, expired) at `at`, only while it is not
    /// completed, not already `status`, and its session is `session_id` (one conditional update,
    /// with its `topup.failed` event); `false` when that did not hold. Then frees its pending
    /// slot, as a completion does.
    fn close_top_up(
        &self,
        top_up: &TopUp,
        session_id: &str,
        status: TopUpStatus,
        at: Timestamp,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;
}

/// A page of the fan's top-ups, newest first: one Query of their `TOPUPS#` partition of the
/// fan's index (`after`: the list key the page before ended on, [`top_up_list_key`]).
pub trait ListMyTopUps: Send + Sync {
    fn list_my_top_ups(
        &self,
        user_id: &UserId,
        limit: usize,
        after: Option<&str>,
    ) -> impl Future<Output = Result<Page<TopUp>, StoreError>> + Send;
}

/// A top-up's key in its fan's list (the fan's index's sort key).
pub fn top_up_list_key(top_up: &TopUp) -> String {
    time_key(top_up.created_at, top_up.id.as_str())
}

/// Every top-up operation.
pub trait TopUpStore: CreateTopUp + SetCheckout + GetTopUp + SettleTopUp + ListMyTopUps {}
impl<S: CreateTopUp + SetCheckout + GetTopUp + SettleTopUp + ListMyTopUps> TopUpStore for S {}

/// What a create (a top-up's, or a card order's placing) writes into its fan's pending slots,
/// decided on them as read: its session in slot `slot`, the slots' version moved to `version`,
/// on `condition` (the slots as read).
#[derive(Debug, Clone)]
pub struct SlotTaken {
    pub slot: u32,
    pub taken: PendingSlot,
    pub version: u64,
    pub condition: Condition,
}

/// The slot `taken` (made at `now`) takes among its fan's `pending` slots, written once for both
/// stores.
pub fn take_slot(
    taken: PendingSlot,
    now: Timestamp,
    pending: &PendingTopUps,
) -> Result<SlotTaken, TooManyPending> {
    Ok(SlotTaken {
        slot: take_pending_slot(pending, now)?,
        taken,
        version: pending.version + 1,
        condition: conditions::pending_as_read(pending.version),
    })
}

/// The slot of `pending` that `holder` holds, if any, and the condition its freeing is written
/// on (it still holds it): a settlement frees it and moves the slots' version on.
pub fn slot_to_free(pending: &PendingTopUps, holder: &SlotHolder) -> Option<(u32, Condition)> {
    let slot = pending
        .slots
        .iter()
        .position(|slot| slot.as_ref().is_some_and(|slot| slot.holder == *holder))?;
    let slot = u32::try_from(slot).ok()?;
    Some((slot, conditions::slot_holds(slot, holder)))
}

/// The member of a slot's map naming what holds it.
pub fn holder_member(holder: &SlotHolder) -> (&'static str, &str) {
    match holder {
        SlotHolder::TopUp(id) => ("topUpId", id.as_str()),
        SlotHolder::Order(id) => ("orderId", id.as_str()),
    }
}

/// The conditions of the pending slots' writes, declared once (see [`crate::condition`]).
pub mod conditions {
    use crate::condition::Condition;
    use crate::schema::{SLOTS_VERSION, pending_slot};
    use domain::topups::pending::SlotHolder;

    /// The fan's pending top-ups are the ones the create read at `version`
    /// ([`domain::topups::pending::take_pending_slot`] decided the cap on them).
    pub fn pending_as_read(version: u64) -> Condition {
        Condition::version_as_read(SLOTS_VERSION, version)
    }

    /// Slot `slot` still holds `holder`: a settlement frees only its own slot.
    pub fn slot_holds(slot: u32, holder: &SlotHolder) -> Condition {
        let (member, id) = super::holder_member(holder);
        Condition::eq(format!("{}.{member}", pending_slot(slot)), id)
    }
}
