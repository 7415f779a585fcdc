//! Cash in memory: balances, the credit ledger and the debit ledger (written by purchases).

use super::items::{CashItem, Present};
use super::{MemoryStore, Tables};
use crate::StoreError;
use crate::cash::{
    CreditCash, CreditCashError, CreditOutcome, GetBalance, ListDebits, conditions, credit_refused,
};
use crate::condition::Attributes;
use domain::cash::ledger::LedgerEntry;
use domain::cash::{Credit, Debit};
use domain::events::money::cash_credited;
use domain::ids::UserId;
use domain::timestamp::Timestamp;

impl Tables {
    /// The credit's writes, as DynamoDB's transaction makes them (the caller holds the lock):
    /// the balance, the credit entry and the fan's ledger entry, or nothing.
    pub(super) fn credit(
        &mut self,
        credit: &Credit,
        at: Timestamp,
    ) -> Result<CreditOutcome, CreditCashError> {
        let entry = self.credits.get(&credit.reference);
        if !conditions::reference_unused().holds(entry.map(|_| &Present as &dyn Attributes)) {
            return credit_refused(Some(entry == Some(credit)));
        }
        let cash = CashItem {
            tables: self,
            user_id: &credit.user_id,
        };
        if !conditions::balance_has_room(&credit.amount).holds(Some(&cash)) {
            return credit_refused(None);
        }
        let key = (credit.user_id.clone(), credit.amount.currency.clone());
        let balance = self.balances.get(&key).copied().unwrap_or(0) + credit.amount.amount;
        self.balances.insert(key, balance);
        self.credits
            .insert(credit.reference.clone(), credit.clone());
        self.add_to_ledger(
            &credit.user_id,
            LedgerEntry::credit(&credit.reference, credit.amount.clone(), at),
        );
        Ok(CreditOutcome::Credited { balance })
    }

    /// Writes `entry` to the fan's ledger, under its list key (the index DynamoDB keeps).
    pub(super) fn add_to_ledger(&mut self, user_id: &UserId, entry: LedgerEntry) {
        self.ledger
            .insert((user_id.to_string(), entry.list_key()), entry);
    }
}

impl CreditCash for MemoryStore {
    async fn credit_cash(
        &self,
        credit: &Credit,
        at: Timestamp,
    ) -> Result<CreditOutcome, CreditCashError> {
        // One lock around the check and the writes, as DynamoDB applies the transaction.
        let mut tables = self.write();
        let outcome = tables.credit(credit, at)?;
        if let CreditOutcome::Credited { .. } = outcome {
            tables.emit(cash_credited(credit), at);
        }
        Ok(outcome)
    }
}

impl GetBalance for MemoryStore {
    async fn get_balance(&self, user_id: &UserId, currency: &str) -> Result<u64, StoreError> {
        Ok(self
            .read()
            .balances
            .get(&(user_id.clone(), currency.to_owned()))
            .copied()
            .unwrap_or(0))
    }
}

impl ListDebits for MemoryStore {
    async fn list_debits(&self, user_id: &UserId) -> Result<Vec<Debit>, StoreError> {
        let mut debits: Vec<Debit> = self
            .read()
            .debits
            .iter()
            .filter(|((user, _), _)| user == user_id)
            .map(|(_, debit)| debit.clone())
            .collect();
        debits.sort_by(|a, b| (a.at, &a.purchase_id).cmp(&(b.at, &b.purchase_id)));
        Ok(debits)
    }
}
