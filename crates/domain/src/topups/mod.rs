//! Cash a fan buys: a top-up is asked for with an amount and a currency, paid on Stripe's hosted
//! Checkout page, and credited to the fan's Cash once, when Stripe's signed webhook says the
//! session was paid.
//!
//! - A top-up's id is derived from its user and `Idempotency-Key` ([`top_up_id`]), as a
//!   purchase's is, so that every repeat of a key names the same top-up and concurrent repeats
//!   race for one item.
//! - Its credit's ledger reference is derived from its id ([`credit_reference`]): a top-up can be
//!   credited once even apart from its status.
//! - [`signature`]: Stripe's webhook signatures; [`event`]: the events this API acts on, and
//!   what each does to a top-up; [`stripe`]: the one call of Stripe's API (a Checkout Session).

pub mod event;
pub mod pending;
pub mod signature;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};
use strum::{EnumString, IntoStaticStr, VariantArray};

use crate::cash::{Credit, MAX_CREDIT, Money};
use crate::ids::{TopUpId, UserId};
use crate::timestamp::Timestamp;

/// Where a top-up is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
#[derive(IntoStaticStr, EnumString, VariantArray)]
#[strum(serialize_all = "lowercase")] // As `PurchaseStatus`'s.
pub enum TopUpStatus {
    /// Asked for; not paid (yet).
    Pending,
    /// Paid and credited: final.
    Completed,
    /// The payment failed (an asynchronous method).
    Failed,
    /// The Checkout Session expired unpaid.
    Expired,
}

impl TopUpStatus {
    /// As the API and the store write it.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// A top-up as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopUp {
    pub id: TopUpId,
    pub user_id: UserId,
    pub amount: Money,
    pub status: TopUpStatus,
    /// The Checkout Session paying for it, once Stripe made one.
    pub checkout: Option<Checkout>,
    pub created_at: Timestamp,
    pub completed_at: Option<Timestamp>,
}

/// A Checkout Session: its id (`cs_...`) and the page the fan pays on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkout {
    pub session_id: String,
    pub url: String,
}

impl TopUp {
    /// A new pending top-up, without a Checkout Session yet.
    pub fn pending(id: TopUpId, user_id: UserId, amount: Money, now: Timestamp) -> Self {
        Self {
            id,
            user_id,
            amount,
            status: TopUpStatus::Pending,
            checkout: None,
            created_at: now,
            completed_at: None,
        }
    }

    /// Whether a repeat of the key that made this top-up asks for the same one (else the key
    /// is reused for another: 422).
    pub fn is_repeated_by(&self, amount: &Money) -> bool {
        self.amount == *amount
    }

    /// The id of its Checkout Session, once stored.
    pub fn session_id(&self) -> Option<&str> {
        self.checkout.as_ref().map(|c| c.session_id.as_str())
    }

    /// The credit this top-up makes when paid: its stored amount, to its user, once.
    pub fn credit(&self) -> Credit {
        Credit {
            user_id: self.user_id.clone(),
            amount: self.amount.clone(),
            reference: credit_reference(&self.id),
        }
    }
}

/// The id of the top-up a user asks for with an idempotency key (22 base64url characters, 128
/// bits of SHA-256); another domain tag than purchases', so the two never share an id.
pub fn top_up_id(user_id: &UserId, idempotency_key: &str) -> TopUpId {
    let digest = aws_lc_rs::digest::digest(
        &aws_lc_rs::digest::SHA256,
        format!("topup-v1\n{user_id}\n{idempotency_key}").as_bytes(),
    );
    TopUpId::parse(URL_SAFE_NO_PAD.encode(&digest.as_ref()[..16]))
        .expect("22 base64url characters are an id")
}

/// The ledger reference of a top-up's credit: one per top-up, so its credit entry
/// (`CREDIT#topup:<id>`) exists at most once.
pub fn credit_reference(id: &TopUpId) -> String {
    format!("{}{id}", crate::cash::TOPUP_REFERENCE_PREFIX)
}

/// What a top-up may be: its amount's bounds and the currencies offered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopUpPolicy {
    pub min_amount: u64,
    pub max_amount: u64,
    pub currencies: Vec<String>,
}

pub const DEFAULT_MIN_AMOUNT: u64 = 100;
pub const DEFAULT_MAX_AMOUNT: u64 = 50_000;
pub const DEFAULT_CURRENCY: &str = "USD";

impl Default for TopUpPolicy {
    fn default() -> Self {
        Self {
            min_amount: DEFAULT_MIN_AMOUNT,
            max_amount: DEFAULT_MAX_AMOUNT,
            currencies: vec![DEFAULT_CURRENCY.to_owned()],
        }
    }
}

/// Why a top-up is refused before anything is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TopUpRefusal {
    #[error("the amount is outside the bounds")]
    InvalidAmount,
    #[error("the currency is not offered")]
    UnsupportedCurrency,
}

impl TopUpPolicy {
    /// The amount asked for, checked: a whole number of minor units within the bounds (JSON's
    /// `100.0` or `1e2` is not one), in an offered currency.
    pub fn check(
        &self,
        amount: &serde_json::Number,
        currency: &str,
    ) -> Result<Money, TopUpRefusal> {
        let amount = amount
            .as_u64()
            .filter(|amount| (self.min_amount..=self.max_amount.min(MAX_CREDIT)).contains(amount))
            .ok_or(TopUpRefusal::InvalidAmount)?;
        if !self.currencies.iter().any(|offered| offered == currency) {
            return Err(TopUpRefusal::UnsupportedCurrency);
        }
        Ok(Money {
            amount,
            currency: currency.to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(id: &str) -> UserId {
        UserId::parse(id).unwrap()
    }

    #[test]
    fn top_up_ids_are_stable_per_user_and_key_and_differ_from_purchase_ids() {
        let id = top_up_id(&user("u1"), "k");
        assert_eq!(id, top_up_id(&user("u1"), "k"));
        assert_ne!(id, top_up_id(&user("u2"), "k"));
        assert_ne!(id, top_up_id(&user("u1"), "k2"));
        assert_eq!(id.as_str().len(), 22);
        assert_ne!(
            id.as_str(),
            crate::purchases::purchase_id(&user("u1"), "k").as_str()
        );
        assert_eq!(credit_reference(&id), format!("topup:{id}"));
    }

    #[test]
    fn amounts_are_whole_minor_units_within_bounds_in_an_offered_currency() {
        let policy = TopUpPolicy::default();
        let number = |text: &str| serde_json::from_str::<serde_json::Number>(text).unwrap();
        assert_eq!(policy.check(&number("100"), "USD").unwrap().amount, 100);
        assert_eq!(
            policy.check(&number("50000"), "USD").unwrap().amount,
            50_000
        );
        for bad in ["99", "50001", "0", "-100", "100.0", "1e2", "100.5"] {
            assert_eq!(
                policy.check(&number(bad), "USD"),
                Err(TopUpRefusal::InvalidAmount),
                "{bad}"
            );
        }
        for bad in ["usd", "EUR", "", "USDX"] {
            assert_eq!(
                policy.check(&number("500"), bad),
                Err(TopUpRefusal::UnsupportedCurrency),
                "{bad}"
            );
        }
    }
}
