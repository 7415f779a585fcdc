//! Cash on DynamoDB: balances (`CASH#<userId>` / `CASH`, one number per currency), the credit ledger
//! (`CREDIT#<reference>` / `CREDIT`) and the debit ledger (`CASH#<userId>` / `DEBIT#<purchaseId>`,
//! written by purchases).

use aws_sdk_dynamodb::types::{
    Put, ReturnValuesOnConditionCheckFailure, TransactWriteItem, Update,
};

use super::records::{
    CASH_VERSION, CreditRecord, SCHEMA_VERSION, balance_from_item, credit_record_from_item,
    debit_from_item,
};
use super::{Attempts, Cancellation, DynamoStore, Item, classify, number, s};
use crate::cash::Credit;
use crate::cash::Debit;
use crate::cash::ledger::credit_entry_id;
use crate::ids::UserId;
use crate::store::StoreError;
use crate::store::cash::{CreditCash, CreditCashError, CreditOutcome, GetBalance, ListDebits};
use crate::store::schema::{CASH_SK, CREDIT_SK, DEBIT_PREFIX, ENTITY, PK, SK, cash_pk, credit_pk};
use crate::store::schema::{GSI3_PK, GSI3_SK};
use crate::timestamp::{Timestamp, time_key};

/// What a cancelled credit transaction says: [0] is the credit entry's put, [1] the balance's
/// update.
enum Cancelled {
    /// The reference has an entry (the old item, when DynamoDB returned it).
    ReferenceUsed(Option<Item>),
    /// The balance would pass `u64::MAX`.
    BalanceFull,
}

/// `reasons` as [`DynamoStore::transact_credit`] gives them: a condition failed.
fn cancelled(reasons: &[Cancellation]) -> Cancelled {
    match reasons.first() {
        Some(entry) if entry.condition_failed() => Cancelled::ReferenceUsed(entry.item.clone()),
        _ => Cancelled::BalanceFull,
    }
}

impl DynamoStore {
    /// The transaction of `credit`: the credit entry, only while its reference is unused, and
    /// the balance, only while it stays a `u64`.
    pub(super) fn credit_transaction(
        &self,
        credit: &Credit,
        at: Timestamp,
    ) -> Result<[TransactWriteItem; 2], StoreError> {
        let record = serde_dynamo::to_item::<_, Item>(CreditRecord::new(credit, at))
            .map_err(|e| StoreError::internal_from("credit item", e))?;
        let entry = Put::builder()
            .table_name(&self.table)
            .set_item(Some(record))
            .item(PK, s(credit_pk(&credit.reference)))
            .item(SK, s(CREDIT_SK))
            .item(ENTITY, s("credit"))
            // The fan's ledger entry (the index `GET /api/me/cash/transactions` reads), in the
            // credit's own put: every credit written through here is listed.
            .item(GSI3_PK, s(cash_pk(&credit.user_id)))
            .item(
                GSI3_SK,
                s(time_key(at, &credit_entry_id(&credit.reference))),
            )
            .condition_expression("attribute_not_exists(#pk)")
            .expression_attribute_names("#pk", PK)
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
            .build()
            .map_err(|e| StoreError::internal_from("put", e))?;
        let balance = Update::builder()
            .table_name(&self.table)
            .key(PK, s(cash_pk(&credit.user_id)))
            .key(SK, s(CASH_SK))
            .update_expression(
                "SET #balance = if_not_exists(#balance, :zero) + :amount, #entity = :entity, #sv = :sv",
            )
            .condition_expression("attribute_not_exists(#balance) OR #balance <= :ceiling")
            // The balance in a currency is the attribute named by its code (`USD`).
            .expression_attribute_names("#balance", &credit.amount.currency)
            .expression_attribute_names("#entity", ENTITY)
            .expression_attribute_names("#sv", SCHEMA_VERSION)
            .expression_attribute_values(":sv", number(CASH_VERSION))
            .expression_attribute_values(":zero", number(0))
            .expression_attribute_values(":amount", number(credit.amount.amount))
            .expression_attribute_values(":entity", s("cash"))
            .expression_attribute_values(":ceiling", number(u64::MAX - credit.amount.amount))
            .build()
            .map_err(|e| StoreError::internal_from("update", e))?;
        Ok([
            TransactWriteItem::builder().put(entry).build(),
            TransactWriteItem::builder().update(balance).build(),
        ])
    }

    /// Runs the transaction of `credit` with `more` actions after its two: `Ok(None)` when
    /// applied, the reasons when a condition failed. Cancelled by conflicts with another
    /// transaction on the same items (nothing written), it is tried again (see [`Attempts`]).
    pub(super) async fn transact_credit(
        &self,
        credit: &Credit,
        at: Timestamp,
        more: &[TransactWriteItem],
    ) -> Result<Option<Vec<Cancellation>>, StoreError> {
        let mut attempts = Attempts::new("credit");
        loop {
            let mut actions = Vec::from(self.credit_transaction(credit, at)?);
            actions.extend_from_slice(more);
            // The conditions make a repeat change nothing. The SDK also gives each call its own
            // ClientRequestToken and keeps it across its retries, so a retry after a lost answer
            // is answered as the first try was (applied), not as a repeat.
            let Some(reasons) = self.transact(actions).await? else {
                return Ok(None);
            };
            if reasons.iter().any(Cancellation::condition_failed) {
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
        let Some(reasons) = self.transact_credit(credit, at, &[]).await? else {
            let balance = self
                .get_balance(&credit.user_id, &credit.amount.currency)
                .await?;
            return Ok(CreditOutcome::Credited { balance });
        };
        match cancelled(&reasons) {
            Cancelled::ReferenceUsed(old) => {
                if self.is_same_credit(old, credit).await? {
                    Ok(CreditOutcome::AlreadyCredited)
                } else {
                    Err(CreditCashError::ReferenceReused)
                }
            }
            Cancelled::BalanceFull => Err(CreditCashError::BalanceFull),
        }
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
