//! The in-app Cash balance, as far as paying for packs needs it: per user and currency, integer
//! minor units, never negative; credited by the operator (`cash-credit`), debited by purchases,
//! every change with a ledger entry.

pub mod ledger;

use serde::{Deserialize, Serialize};

use crate::ids::{MAX_USER_ID_BYTES, UserId};
use crate::timestamp::Timestamp;

/// The largest single credit, in minor units.
pub const MAX_CREDIT: u64 = 1_000_000_000_000;
/// The longest credit reference.
pub const MAX_REFERENCE_LEN: usize = 255;

/// An amount of one currency, in integer minor units (`{"amount": 499, "currency": "USD"}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = Price)]
pub struct Money {
    /// In minor units of the currency (cents).
    pub amount: u64,
    #[schema(value_type = crate::json_schema::Currency)]
    pub currency: String,
}

/// Whether `code` looks like an ISO 4217 currency code: three capital letters.
pub fn is_currency(code: &str) -> bool {
    code.len() == 3 && code.bytes().all(|b| b.is_ascii_uppercase())
}

/// A credit to a user's balance, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credit {
    pub user_id: UserId,
    pub amount: Money,
    /// Unique per credit: the same reference credits once.
    pub reference: String,
}

/// Why a credit is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CreditError {
    #[error("--user must not be empty")]
    EmptyUser,
    /// Longer than a session token's `sub` may be: no fan could ever read the balance.
    #[error("--user must be at most {MAX_USER_ID_BYTES} bytes")]
    User,
    #[error("--amount must be a whole number of minor units from 1 to {MAX_CREDIT}")]
    Amount,
    #[error("--currency must be an ISO 4217 code of three capital letters")]
    Currency,
    #[error("--reference must be 1-{MAX_REFERENCE_LEN} visible characters")]
    Reference,
    #[error(
        "--reference must not begin with {TOPUP_REFERENCE_PREFIX}, quest: or order: (card top-ups, quest rewards and Cash bundles credit under those)"
    )]
    ReservedReference,
}

/// The references of card top-ups' credits (`topup:<topUpId>`): an operator's credit under one
/// would take a top-up's one credit, and the top-up could then never complete.
pub const TOPUP_REFERENCE_PREFIX: &str = "topup:";

/// Checks a credit as an operator typed it.
pub fn parse_credit(
    user_id: &str,
    amount: &str,
    currency: &str,
    reference: &str,
) -> Result<Credit, CreditError> {
    if user_id.trim().is_empty() {
        return Err(CreditError::EmptyUser);
    }
    let user_id = UserId::parse(user_id).map_err(|_| CreditError::User)?;
    let amount = (amount.bytes().all(|b| b.is_ascii_digit()) && !amount.is_empty())
        .then(|| amount.parse::<u64>().ok())
        .flatten()
        .filter(|amount| (1..=MAX_CREDIT).contains(amount))
        .ok_or(CreditError::Amount)?;
    if !is_currency(currency) {
        return Err(CreditError::Currency);
    }
    let reference_ok = (1..=MAX_REFERENCE_LEN).contains(&reference.len())
        && reference.bytes().all(|b| (0x21..=0x7e).contains(&b));
    if !reference_ok {
        return Err(CreditError::Reference);
    }
    // A quest's credit taken by an operator would leave the fan's claim of it impossible.
    if reference.starts_with(TOPUP_REFERENCE_PREFIX)
        || reference.starts_with(crate::quests::QUEST_REFERENCE_PREFIX)
        || reference.starts_with(crate::products::order::ORDER_REFERENCE_PREFIX)
    {
        return Err(CreditError::ReservedReference);
    }
    Ok(Credit {
        user_id,
        amount: Money {
            amount,
            currency: currency.to_owned(),
        },
        reference: reference.to_owned(),
    })
}

/// A ledger entry of a purchase's payment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Debit {
    pub purchase_id: crate::ids::PurchaseId,
    pub amount: Money,
    pub at: Timestamp,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credits_are_whole_positive_bounded_amounts_of_a_currency_with_a_reference() {
        let ok = parse_credit("u1", "1500", "USD", "grant-2026-11").unwrap();
        assert_eq!(ok.amount.amount, 1500);
        assert_eq!(ok.user_id.as_str(), "u1");
        let longest = "x".repeat(MAX_USER_ID_BYTES);
        assert!(parse_credit(&longest, "1", "USD", "r").is_ok());
        let too_long = "x".repeat(MAX_USER_ID_BYTES + 1);
        assert_eq!(
            parse_credit(&too_long, "1", "USD", "r"),
            Err(CreditError::User)
        );
        assert!(parse_credit("u1", &MAX_CREDIT.to_string(), "EUR", "r").is_ok());
        for (user, amount, currency, reference, error) in [
            ("", "1", "USD", "r", CreditError::EmptyUser),
            ("u", "0", "USD", "r", CreditError::Amount),
            ("u", "-5", "USD", "r", CreditError::Amount),
            ("u", "1.5", "USD", "r", CreditError::Amount),
            ("u", "+5", "USD", "r", CreditError::Amount),
            ("u", "", "USD", "r", CreditError::Amount),
            ("u", "1000000000001", "USD", "r", CreditError::Amount),
            (
                "u",
                "99999999999999999999999",
                "USD",
                "r",
                CreditError::Amount,
            ),
            ("u", "1", "usd", "r", CreditError::Currency),
            ("u", "1", "US", "r", CreditError::Currency),
            ("u", "1", "USDX", "r", CreditError::Currency),
            ("u", "1", "USD", "", CreditError::Reference),
            ("u", "1", "USD", "a b", CreditError::Reference),
            ("u", "1", "USD", "topup:abc", CreditError::ReservedReference),
            (
                "u",
                "1",
                "USD",
                "quest:first-pack:u",
                CreditError::ReservedReference,
            ),
            ("u", "1", "USD", "order:abc", CreditError::ReservedReference),
        ] {
            assert_eq!(
                parse_credit(user, amount, currency, reference),
                Err(error),
                "{user:?} {amount:?} {currency:?} {reference:?}"
            );
        }
    }
}
