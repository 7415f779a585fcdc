//! A fan's account deletion (issue 47, docs/account-deletion.md): what the fan loses, the
//! confirmation it needs, the pseudonym the books keep, and the steps of the erasure, which
//! every store runs in this order and resumes from the step it stored.

use std::collections::BTreeMap;

use aws_lc_rs::hmac;
use serde::{Deserialize, Serialize};

use crate::ids::UserId;
use crate::timestamp::Timestamp;

/// What a deleted account gives up, told before it is deleted (`409 confirmation_required`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = AccountLosses)]
pub struct Losses {
    /// Cash balances by currency, in minor units (only those above zero).
    pub cash: BTreeMap<String, u64>,
    /// Purchases reserved and not paid: released, their units back on sale.
    pub reserved_purchases: u32,
    /// Top-ups started and not finished: a payment that still arrives is kept for the books
    /// under the pseudonym, and refunded on request to support.
    pub pending_top_ups: u32,
    /// Packs paid and not opened (counted over the fan's newest purchases, see
    /// `unopenedPacksCounted`).
    pub unopened_packs: u32,
    /// False when the fan has more purchases than the count reads ([`UNOPENED_PAGES`] pages):
    /// `unopenedPacks` is then a lower bound.
    pub unopened_packs_counted: bool,
}

/// How many pages (of 100 purchases) the count of unopened packs reads at most: a bounded
/// request whatever the fan's history.
pub const UNOPENED_PAGES: usize = 10;

impl Losses {
    /// Nothing is lost: the deletion needs no confirmation.
    pub fn is_empty(&self) -> bool {
        self.cash.values().all(|amount| *amount == 0)
            && self.reserved_purchases == 0
            && self.pending_top_ups == 0
            && self.unopened_packs == 0
    }

    /// Whether a request may go on: a fan who would lose something must have confirmed.
    pub fn allow(&self, confirmed: bool) -> Result<(), NeedsConfirmation> {
        if confirmed || self.is_empty() {
            Ok(())
        } else {
            Err(NeedsConfirmation)
        }
    }
}

/// The fan would lose something and did not confirm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NeedsConfirmation;

/// The erasure's steps, in the order they run: each bounded, repeated until its part is done.
/// Money first (kept under the pseudonym), then what is erased.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, strum::EnumIter,
)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    /// Reserved purchases released: their units back into their packs' supply.
    ReleaseHolds,
    /// The public face erased: display name freed, locker room, stats, leaderboard scores.
    PublicFace,
    /// Queue entries erased.
    QueueEntries,
    /// Waits until every pending top-up's Checkout Session has closed and Stripe has had time
    /// to tell its outcome (at most about 70 minutes): a payment still made is credited first.
    SettleTopUps,
    /// Top-ups kept, re-keyed to the pseudonym.
    TopUps,
    /// Ledger entries (credits and debits) kept, re-keyed to the pseudonym.
    Ledger,
    /// The balances kept, moved to the pseudonym.
    Balance,
    /// The fan's own items erased: profile, links, wallets, purchases and items, claims.
    OwnItems,
    /// Everything done.
    Done,
}

impl Step {
    /// The step after this one.
    pub fn next(self) -> Self {
        use strum::IntoEnumIterator;
        Self::iter().find(|step| *step > self).unwrap_or(Self::Done)
    }
}

/// A deletion as stored: requested once, then carried through its steps.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Deletion {
    pub user_id: UserId,
    /// The `Idempotency-Key` of the request that started it.
    pub key: String,
    pub requested_at: Timestamp,
    /// What the fan was told they lose (and confirmed, when not empty).
    pub losses: Losses,
    /// The step under way (`Done` once finished).
    pub step: Step,
    /// Where the step's walk stands, when it walks a list it does not shrink (a store's key).
    #[serde(default)]
    pub after: Option<String>,
    /// When the last step finished.
    pub completed_at: Option<Timestamp>,
}

impl Deletion {
    pub fn new(user_id: UserId, key: String, losses: Losses, now: Timestamp) -> Self {
        Self {
            user_id,
            key,
            requested_at: now,
            losses,
            step: Step::ReleaseHolds,
            after: None,
            completed_at: None,
        }
    }

    /// Its event, written with its beginning: subscribers erase what they hold of the fan.
    pub fn event(&self) -> crate::events::NewEvent {
        crate::events::NewEvent::fan(
            &self.user_id,
            crate::events::AccountDeleted {
                confirmed_losses: !self.losses.is_empty(),
            },
        )
    }

    pub fn is_done(&self) -> bool {
        self.step == Step::Done
    }

    /// `self` once `step` finished at `now` (a step finished twice moves nothing on).
    pub fn finished(mut self, step: Step, now: Timestamp) -> Self {
        if step == self.step {
            self.step = step.next();
            self.after = None;
            if self.is_done() {
                self.completed_at = Some(now);
            }
        }
        self
    }
}

/// The key that makes a deleted fan's pseudonym: an operator's secret, so that only someone
/// holding it (the operator's records) links a pseudonym back to the account.
#[derive(Clone)]
pub struct PseudonymKey(hmac::Key);

impl PseudonymKey {
    /// The key from its secret text (at least 32 bytes).
    pub fn new(secret: &str) -> Result<Self, ShortKey> {
        if secret.len() < 32 {
            return Err(ShortKey);
        }
        Ok(Self(hmac::Key::new(hmac::HMAC_SHA256, secret.as_bytes())))
    }

    /// A key of random bytes, for a process that keeps no pseudonym across restarts (the local
    /// API over its in-memory store).
    pub fn random() -> Self {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).expect("the system random source works");
        Self(hmac::Key::new(hmac::HMAC_SHA256, &bytes))
    }

    /// The pseudonym the books keep `user_id`'s money under: `anon_` and 32 hex digits of the
    /// HMAC-SHA256 of the id. The same fan always gets the same one, so an interrupted
    /// erasure resumes onto the same.
    pub fn pseudonym(&self, user_id: &UserId) -> UserId {
        let tag = hmac::sign(&self.0, user_id.as_str().as_bytes());
        let text = format!("anon_{}", hex::encode(&tag.as_ref()[..16]));
        UserId::parse(text).expect("an anon_ hex id is a valid user id")
    }
}

impl std::fmt::Debug for PseudonymKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PseudonymKey(***)")
    }
}

/// The pseudonym key is shorter than 32 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the pseudonym key must be at least 32 bytes")]
pub struct ShortKey;

#[cfg(test)]
mod tests {
    use super::*;

    fn fan(id: &str) -> UserId {
        UserId::parse(id).unwrap()
    }

    #[test]
    fn steps_run_in_order_and_end_done() {
        let mut step = Step::ReleaseHolds;
        let mut seen = vec![step];
        while step != Step::Done {
            step = step.next();
            seen.push(step);
        }
        assert_eq!(seen.len(), 9);
        assert_eq!(Step::Done.next(), Step::Done);
    }

    #[test]
    fn a_step_finished_twice_moves_on_once() {
        let now = Timestamp::from_unix_nanos(1).unwrap();
        let deletion = Deletion::new(fan("a"), "k".into(), Losses::default(), now);
        let once = deletion.finished(Step::ReleaseHolds, now);
        assert_eq!(once.step, Step::PublicFace);
        assert_eq!(once.clone().finished(Step::ReleaseHolds, now), once);
    }

    #[test]
    fn losses_need_confirmation_unless_empty() {
        let mut losses = Losses::default();
        assert!(losses.allow(false).is_ok());
        losses.cash.insert("USD".into(), 0);
        assert!(losses.allow(false).is_ok(), "a zero balance loses nothing");
        losses.cash.insert("USD".into(), 500);
        assert_eq!(losses.allow(false), Err(NeedsConfirmation));
        assert!(losses.allow(true).is_ok());
        let held = Losses {
            unopened_packs: 1,
            ..Losses::default()
        };
        assert_eq!(held.allow(false), Err(NeedsConfirmation));
    }

    #[test]
    fn the_pseudonym_is_stable_keyed_and_unlinkable_without_the_key() {
        let key = PseudonymKey::new(&"k".repeat(32)).unwrap();
        let other = PseudonymKey::new(&"j".repeat(32)).unwrap();
        let a = key.pseudonym(&fan("did:privy:a"));
        assert_eq!(a, key.pseudonym(&fan("did:privy:a")));
        assert_ne!(a, key.pseudonym(&fan("did:privy:b")));
        assert_ne!(a, other.pseudonym(&fan("did:privy:a")));
        assert!(a.as_str().starts_with("anon_") && a.as_str().len() == 37);
        assert!(!a.as_str().contains("privy"));
        assert_eq!(PseudonymKey::new("short").err(), Some(ShortKey));
    }
}
