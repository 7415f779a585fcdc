//! Cash in memory: balances, the credit ledger and the debit ledger (written by purchases).

use super::{MemoryStore, Tables};
use crate::cash::{Credit, Debit};
use crate::store::StoreError;
use crate::store::cash::{CreditCash, CreditCashError, CreditOutcome, GetBalance, ListDebits};
use crate::timestamp::Timestamp;

impl CreditCash for MemoryStore {
    async fn credit_cash(
        &self,
        credit: &Credit,
        at: Timestamp,
    ) -> Result<CreditOutcome, CreditCashError> {
        // One lock around the check and both writes, as DynamoDB applies the transaction.
        credit_in(&mut self.write(), credit, at)
    }
}

/// The credit's check and writes, on tables the caller holds locked (a top-up's completion
/// holds the lock around this and its own change, as one DynamoDB transaction holds both).
pub(super) fn credit_in(
    tables: &mut Tables,
    credit: &Credit,
    _at: Timestamp,
) -> Result<CreditOutcome, CreditCashError> {
    if let Some(existing) = tables.credits.get(&credit.reference) {
        return if existing == credit {
            Ok(CreditOutcome::AlreadyCredited)
        } else {
            Err(CreditCashError::ReferenceReused)
        };
    }
    let key = (credit.user_id.clone(), credit.amount.currency.clone());
    let current = tables.balances.get(&key).copied().unwrap_or(0);
    let balance = current
        .checked_add(credit.amount.amount)
        .ok_or(CreditCashError::BalanceFull)?;
    tables.balances.insert(key, balance);
    tables
        .credits
        .insert(credit.reference.clone(), credit.clone());
    Ok(CreditOutcome::Credited { balance })
}

impl GetBalance for MemoryStore {
    async fn get_balance(&self, user_id: &str, currency: &str) -> Result<u64, StoreError> {
        Ok(self
            .read()
            .balances
            .get(&(user_id.to_owned(), currency.to_owned()))
            .copied()
            .unwrap_or(0))
    }
}

impl ListDebits for MemoryStore {
    async fn list_debits(&self, user_id: &str) -> Result<Vec<Debit>, StoreError> {
        let mut debits: Vec<Debit> = self
            .read()
            .debits
            .range((user_id.to_owned(), String::new())..)
            .take_while(|((user, _), _)| user == user_id)
            .map(|(_, debit)| debit.clone())
            .collect();
        debits.sort_by(|a, b| (a.at, &a.purchase_id).cmp(&(b.at, &b.purchase_id)));
        Ok(debits)
    }
}
