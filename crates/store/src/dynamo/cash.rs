//! Cash on DynamoDB: balances (`CASH#<userId>` / `CASH`, one number per currency), the credit ledger
//! (`CREDIT#<reference>` / `CREDIT`) and the debit ledger (`CASH#<userId>` / `DEBIT#<purchaseId>`,
//! written by purchases).

use aws_sdk_dynamodb::types::TransactWriteItem;

use super::records::{
    CASH_VERSION, CreditRecord, SCHEMA_VERSION, balance_from_item, credit_record_from_item,
    debit_from_item,
};
use super::transaction::{Reasons, Transaction, put, update};
use super::{Attempts, DynamoStore, Item, classify, key, number, s};
use crate::StoreError;
use crate::cash::{
    CreditCash, CreditCashError, CreditOutcome, GetBalance, ListDebits, conditions, credit_refused,
};
use crate::schema::{CASH_SK, CREDIT_SK, DEBIT_PREFIX, ENTITY, PK, SK, cash_pk, credit_pk};
use crate::schema::{GSI3_PK, GSI3_SK};
use domain::cash::Credit;
use domain::cash::Debit;
use domain::cash::ledger::credit_entry_id;
use domain::events::NewEvent;
use domain::events::money::cash_credited;
use domain::ids::UserId;
use domain::timestamp::{Timestamp, time_key};

/// The actions of a credit's transaction: its own two, then those of the write it goes with
/// (named by `N`: a top-up's update, a claim's puts).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum CreditAction<N> {
    /// The credit entry, only while its reference is unused.
    Entry,
    /// The balance, only while it stays a `u64`.
    Balance,
    /// An action of the write the credit goes with.
    More(N),
}

/// A credit on its own: no action after its two.
type Alone = std::convert::Infallible;

impl DynamoStore {
    /// The transaction of `credit`: the credit entry, only while its reference is unused, and
    /// the balance, only while it stays a `u64`.
    pub(super) fn credit_transaction<N: Copy + PartialEq>(
        &self,
        credit: &Credit,
        at: Timestamp,
    ) -> Result<Transaction<CreditAction<N>>, StoreError> {
        let mut entry = serde_dynamo::to_item::<_, Item>(CreditRecord::new(credit, at))
            .map_err(|e| StoreError::internal_from("credit item", e))?;
        entry.extend([
            (PK.to_owned(), s(credit_pk(&credit.reference))),
            (SK.to_owned(), s(CREDIT_SK)),
            (ENTITY.to_owned(), s("credit")),
            // The fan's ledger entry (the index `GET /api/me/cash/transactions` reads), in the
            // credit's own put: every credit written through here is listed.
            (GSI3_PK.to_owned(), s(cash_pk(&credit.user_id))),
            (
                GSI3_SK.to_owned(),
                s(time_key(at, &credit_entry_id(&credit.reference))),
            ),
        ]);
        let balance = update(
            &self.table,
            key(cash_pk(&credit.user_id), CASH_SK),
            "SET #balance = if_not_exists(#balance, :zero) + :amount, #entity = :entity, #sv = :sv",
            &conditions::balance_has_room(&credit.amount),
            // The balance in a currency is the attribute named by its code (`USD`).
            &[
                ("#balance", &credit.amount.currency),
                ("#entity", ENTITY),
                ("#sv", SCHEMA_VERSION),
            ],
            vec![
                (":sv", number(CASH_VERSION)),
                (":zero", number(0)),
                (":amount", number(credit.amount.amount)),
                (":entity", s("cash")),
            ],
        )?;
        Ok(Transaction::new()
            .with(
                CreditAction::Entry,
                put(&self.table, entry, &conditions::reference_unused())?,
            )
            .with(CreditAction::Balance, balance))
    }

    /// Runs the transaction of `credit` with `more` actions after its two, writing `events`:
    /// `Ok(None)` when applied, the reasons when a condition failed. Cancelled by conflicts with another
    /// transaction on the same items (nothing written), it is tried again (see [`Attempts`]).
    pub(super) async fn transact_credit<N: Copy + PartialEq>(
        &self,
        credit: &Credit,
        at: Timestamp,
        more: &[(N, TransactWriteItem)],
        events: &[NewEvent],
    ) -> Result<Option<Reasons<CreditAction<N>>>, StoreError> {
        let mut attempts = Attempts::new("credit");
        loop {
            let mut transaction = self
                .credit_transaction(credit, at)?
                .emit(events.to_vec(), at);
            for (name, action) in more {
                transaction.push(CreditAction::More(*name), action.clone());
            }
            // The conditions make a repeat change nothing. The SDK also gives each call its own
            // ClientRequestToken and keeps it across its retries, so a retry after a lost answer
            // is answered as the first try was (applied), not as a repeat.
            let Some(reasons) = self.run(transaction).await? else {
                return Ok(None);
            };
            if reasons.all().iter().any(|reason| reason.condition_failed()) {
                return Ok(Some(reasons));
            }
            // Another transaction was on the same items: nothing was written.
            attempts.after_conflict().await?;
        }
    }

    /// The credit entry of `reference`, read strongly consistent.
    async fn credit_entry(&self, reference: &str) -> Result<Option<Item>, StoreError> {
        self.get_item(super::key(credit_pk(reference), CREDIT_SK), true)
            .await
    }
}

impl CreditCash for DynamoStore {
    async fn credit_cash(
        &self,
        credit: &Credit,
        at: Timestamp,
    ) -> Result<CreditOutcome, CreditCashError> {
        let Some(reasons) = self
            .transact_credit::<Alone>(credit, at, &[], &cash_credited(credit))
            .await?
        else {
            let balance = self
                .get_balance(&credit.user_id, &credit.amount.currency)
                .await?;
            return Ok(CreditOutcome::Credited { balance });
        };
        let used = if reasons.failed(CreditAction::Entry) {
            let old = reasons.of(CreditAction::Entry).item.clone();
            Some(self.is_same_credit(old, credit).await?)
        } else {
            None
        };
        credit_refused(used)
    }
}

impl DynamoStore {
    /// Whether the credit entry found in the way of `credit` (`old`, when the cancelled
    /// transaction returned it) is the same credit.
    pub(super) async fn is_same_credit(
        &self,
        old: Option<Item>,
        credit: &Credit,
    ) -> Result<bool, StoreError> {
        let old = match old {
            Some(old) => old,
            // Not returned: read it (a credit entry is never deleted).
            None => self.credit_entry(&credit.reference).await?.ok_or_else(|| {
                StoreError::internal("credit item: its put was refused but it cannot be read")
            })?,
        };
        credit_record_from_item(old)?.is(credit)
    }
}

impl GetBalance for DynamoStore {
    async fn get_balance(&self, user_id: &UserId, currency: &str) -> Result<u64, StoreError> {
        let output = self
            .client
            .get_item()
            .table_name(&self.table)
            .key(PK, s(cash_pk(user_id)))
            .key(SK, s(CASH_SK))
            .projection_expression("#balance")
            .expression_attribute_names("#balance", currency)
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| classify("GetItem", e))?;
        // Projected to the one currency: the item reads as its record of that balance alone.
        balance_from_item(output.item, currency)
    }
}

impl ListDebits for DynamoStore {
    async fn list_debits(&self, user_id: &UserId) -> Result<Vec<Debit>, StoreError> {
        let mut debits = self
            .query_prefix(cash_pk(user_id), DEBIT_PREFIX, true)
            .await?
            .into_iter()
            .map(debit_from_item)
            .collect::<Result<Vec<_>, _>>()?;
        // The keys order debits by purchase id; the ledger reads oldest first.
        debits.sort_by(|a, b| (a.at, &a.purchase_id).cmp(&(b.at, &b.purchase_id)));
        Ok(debits)
    }
}
