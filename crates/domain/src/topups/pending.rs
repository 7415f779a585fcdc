//! A fan's pending top-ups, capped: each Checkout Session is a call to Stripe's API, whose rate
//! limit is per account (100 operations a second live, 25 in a sandbox; docs.stripe.com/rate-limits),
//! so one fan scripting creates with fresh keys must not spend it for every other fan.
//!
//! A fan holds at most [`MAX_PENDING_TOP_UPS`] top-ups that are neither completed, failed nor
//! expired: one slot each, taken by the create's write and conditioned on the slots as read, as a
//! purchase start takes one of the fan's unpaid-holds slots. A slot frees itself when its
//! session's lifetime ([`SESSION_LIFETIME_SECONDS`], sent to Stripe as the session's
//! `expires_at`) has passed, so an abandoned Checkout page frees its slot without any sweep; a
//! completion, failure or expiry event frees it at once.
//!
//! A card order of a product (issue 48) opens a Checkout Session too, on the same account's
//! rate limit: it takes one of the same slots when placed, so that a fan holds at most
//! [`MAX_PENDING_TOP_UPS`] open sessions of either kind, not five of each.

use super::TopUp;
use crate::ids::{OrderId, TopUpId};
use crate::products::order::Order;
use crate::timestamp::Timestamp;

/// Pending top-ups a fan may hold at once. A fan needs a few: a page left open in another tab, a
/// second attempt after closing one, a retry with a new key after a failure. Five covers those;
/// a script creating sessions gets five per [`SESSION_LIFETIME_SECONDS`], not hundreds a second.
pub const MAX_PENDING_TOP_UPS: u32 = 5;

/// How long a top-up's Checkout Session stays open (Stripe takes 30 minutes to 24 hours; its
/// default, 24 hours, would keep an abandoned page's slot a day). An hour is ample to pay on a
/// hosted page, and is how long a fan at the cap waits at most for a slot to free itself.
pub const SESSION_LIFETIME_SECONDS: u64 = 3600;

/// What holds a slot: a pending top-up or a pending card order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlotHolder {
    TopUp(TopUpId),
    Order(OrderId),
}

/// One open Checkout Session in its fan's slots: whose, and until when it is open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingSlot {
    pub holder: SlotHolder,
    pub expires_at: Timestamp,
}

/// A fan's pending top-ups: [`MAX_PENDING_TOP_UPS`] slots, each free or holding one top-up; a
/// slot whose `expiresAt` has passed is free. `version` moves on with every write, so that a
/// create is conditioned on the slots as it read them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PendingTopUps {
    pub slots: Vec<Option<PendingSlot>>,
    pub version: u64,
}

/// A fan already holds [`MAX_PENDING_TOP_UPS`] live pending top-ups.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the fan holds as many pending top-ups as a fan may")]
pub struct TooManyPending;

impl TopUp {
    /// When its Checkout Session expires (and its slot frees itself): [`session_expires_at`].
    pub fn expires_at(&self) -> Timestamp {
        session_expires_at(self.created_at)
    }

    /// The slot it takes among its fan's pending top-ups.
    pub fn pending_slot(&self) -> PendingSlot {
        PendingSlot {
            holder: SlotHolder::TopUp(self.id.clone()),
            expires_at: self.expires_at(),
        }
    }
}

impl Order {
    /// The slot a card order takes among its fan's pending sessions.
    pub fn pending_slot(&self) -> PendingSlot {
        PendingSlot {
            holder: SlotHolder::Order(self.id.clone()),
            expires_at: self.expires_at(),
        }
    }
}

/// When a Checkout Session made for something created at `created_at` expires: that time in
/// whole seconds, as Stripe takes `expires_at`, plus [`SESSION_LIFETIME_SECONDS`] (a top-up's
/// and a card order's alike).
pub fn session_expires_at(created_at: Timestamp) -> Timestamp {
    let seconds = created_at.unix_seconds() + SESSION_LIFETIME_SECONDS;
    Timestamp::from_unix_nanos(i128::from(seconds) * 1_000_000_000).unwrap_or(created_at)
}

/// Which slot a top-up created at `now` takes, for a fan with `pending`: the rule both stores
/// apply, the DynamoDB one inside its write's condition (the slots as read).
pub fn take_pending_slot(pending: &PendingTopUps, now: Timestamp) -> Result<u32, TooManyPending> {
    crate::slots::first_free(&pending.slots, MAX_PENDING_TOP_UPS, |slot| {
        slot.expires_at <= now
    })
    .ok_or(TooManyPending)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cash::Money;
    use crate::ids::UserId;

    fn at(text: &str) -> Timestamp {
        Timestamp::parse(text).unwrap()
    }

    fn slot(id: &str, expires_at: &str) -> Option<PendingSlot> {
        Some(PendingSlot {
            holder: SlotHolder::TopUp(TopUpId::parse(id).unwrap()),
            expires_at: at(expires_at),
        })
    }

    #[test]
    fn a_fan_holds_at_most_the_cap_and_an_expired_slot_is_free() {
        let now = at("2026-06-01T12:00:00Z");
        let mut pending = PendingTopUps::default();
        assert_eq!(take_pending_slot(&pending, now), Ok(0));
        pending.slots = (0..MAX_PENDING_TOP_UPS)
            .map(|k| slot(&format!("t{k}"), "2026-06-01T12:30:00Z"))
            .collect();
        assert_eq!(take_pending_slot(&pending, now), Err(TooManyPending));
        pending.slots[3] = slot("t3", "2026-06-01T12:00:00Z");
        assert_eq!(take_pending_slot(&pending, now), Ok(3), "expired at now");
        pending.slots[1] = None;
        assert_eq!(take_pending_slot(&pending, now), Ok(1));
    }

    #[test]
    fn the_api_description_states_the_cap_and_the_lifetime() {
        // `POST /api/me/cash/top-ups`'s description and its 409 say "5" and "an hour".
        assert_eq!(MAX_PENDING_TOP_UPS, 5);
        assert_eq!(SESSION_LIFETIME_SECONDS, 3600);
    }

    #[test]
    fn a_session_expires_a_lifetime_after_its_whole_second() {
        let user = UserId::parse("fan").unwrap();
        let top_up = TopUp::pending(
            TopUpId::parse("t1").unwrap(),
            user,
            Money {
                amount: 500,
                currency: "USD".into(),
            },
            at("2026-06-01T12:00:00.75Z"),
        );
        assert_eq!(top_up.expires_at(), at("2026-06-01T13:00:00Z"));
        assert_eq!(top_up.pending_slot().expires_at, top_up.expires_at());
    }
}
