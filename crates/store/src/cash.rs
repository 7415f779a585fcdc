//! The operations on Cash balances and their ledger.

use std::future::Future;

use crate::StoreError;
use domain::cash::{Credit, Debit};
use domain::ids::UserId;
use domain::timestamp::Timestamp;

/// What a credit did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CreditOutcome {
    /// Credited; the balance after it.
    Credited { balance: u64 },
    /// This reference was credited before, with the same user, amount and currency: nothing
    /// changed.
    AlreadyCredited,
}

/// Why a credit did not happen.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CreditCashError {
    /// The reference was used for another credit (another user, amount or currency).
    #[error("the reference was already used for another credit")]
    ReferenceReused,
    /// The balance would pass the largest amount: nothing was written.
    #[error("the balance would pass the largest amount")]
    BalanceFull,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The answer to a credit its conditions refused, the same in both stores: its reference found
/// in use (`Some`: by this very credit, `true`, or another), else its balance full.
pub fn credit_refused(reference_used: Option<bool>) -> Result<CreditOutcome, CreditCashError> {
    match reference_used {
        Some(true) => Ok(CreditOutcome::AlreadyCredited),
        Some(false) => Err(CreditCashError::ReferenceReused),
        None => Err(CreditCashError::BalanceFull),
    }
}

/// The conditions of a credit's two writes, declared once (see [`crate::condition`]).
pub mod conditions {
    use crate::condition::{Compare, Condition};
    use domain::cash::Money;

    /// The credit entry's reference is unused: a reference credits once.
    pub fn reference_unused() -> Condition {
        Condition::new_item()
    }

    /// The balance in `amount`'s currency (the attribute named by its code) stays a `u64` with
    /// `amount` added: none yet, or at most the largest amount less it.
    pub fn balance_has_room(amount: &Money) -> Condition {
        let currency = amount.currency.clone();
        Condition::absent(currency.clone()).or(Condition::is(
            currency,
            Compare::Le,
            u64::MAX - amount.amount,
        ))
    }
}

/// Credits a balance and writes the credit's ledger entry, in one transaction that holds only
/// while the reference is unused.
pub trait CreditCash: Send + Sync {
    fn credit_cash(
        &self,
        credit: &Credit,
        at: Timestamp,
    ) -> impl Future<Output = Result<CreditOutcome, CreditCashError>> + Send;
}

/// A user's balance in a currency (0 when there is none), read strongly consistent.
pub trait GetBalance: Send + Sync {
    fn get_balance(
        &self,
        user_id: &UserId,
        currency: &str,
    ) -> impl Future<Output = Result<u64, StoreError>> + Send;
}

/// A user's debits (the ledger entries of their payments), oldest first.
pub trait ListDebits: Send + Sync {
    fn list_debits(
        &self,
        user_id: &UserId,
    ) -> impl Future<Output = Result<Vec<Debit>, StoreError>> + Send;
}

/// Every Cash operation.
pub trait CashStore: CreditCash + GetBalance + ListDebits {}
impl<S: CreditCash + GetBalance + ListDebits> CashStore for S {}

/// A fan's balances, one per currency they ever held, sorted by currency; read strongly
/// consistent, in one read.
pub trait GetBalances: Send + Sync {
    fn get_balances(
        &self,
        user_id: &UserId,
    ) -> impl Future<Output = Result<Vec<domain::cash::Money>, StoreError>> + Send;
}

/// A page of a fan's ledger (credits and debits), newest first: one Query of their partition of
/// the fan's index (a second when entries of other currencies cut the first short).
pub trait ListLedger: Send + Sync {
    fn list_ledger(
        &self,
        query: &domain::cash::ledger::LedgerQuery,
    ) -> impl Future<
        Output = Result<
            domain::purchases::mine::Page<domain::cash::ledger::LedgerEntry>,
            StoreError,
        >,
    > + Send;
}
