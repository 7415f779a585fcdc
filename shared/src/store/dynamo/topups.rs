//! Cash top-ups on DynamoDB: one item per top-up (`TOPUP#<topUpId>` / `TOPUP`). Its completion
//! is one transaction of the credit's own two writes (the `CREDIT#topup:<id>` entry and the
//! `CASH#<userId>` balance, built by [`DynamoStore::credit_transaction`]) and the top-up's
//! update, conditioned on it not being completed.

use aws_sdk_dynamodb::operation::put_item::PutItemError;
use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::types::{
    ReturnValue, ReturnValuesOnConditionCheckFailure, TransactWriteItem, Update,
};

use super::records::TopUpRecord;
use super::{DynamoStore, Item, classify, key, s};
use crate::ids::TopUpId;
use crate::store::StoreError;
use crate::store::cash::CreditCashError;
use crate::store::schema::{ENTITY, PK, TOPUP_SESSION_ID, TOPUP_SK, TOPUP_STATUS, topup_pk};
use crate::store::topups::{
    CompletedTopUp, CreateTopUp, CreatedTopUp, GetTopUp, SetCheckout, SettleTopUp,
};
use crate::timestamp::Timestamp;
use crate::topups::{Checkout, TopUp, TopUpStatus};

fn top_up_key(id: &TopUpId) -> Item {
    key(topup_pk(id), TOPUP_SK)
}

fn top_up_item(top_up: &TopUp) -> Result<Item, StoreError> {
    let mut item: Item = serde_dynamo::to_item(TopUpRecord::from(top_up))
        .map_err(|e| StoreError::internal_from("top-up item", e))?;
    item.extend(top_up_key(&top_up.id));
    item.insert(ENTITY.into(), s("topup"));
    Ok(item)
}

fn top_up_from_item(item: Item) -> Result<TopUp, StoreError> {
    serde_dynamo::from_item::<_, TopUpRecord>(item)
        .map_err(|e| StoreError::internal_from("top-up item", e))?
        .try_into()
}

impl CreateTopUp for DynamoStore {
    async fn create_top_up(&self, top_up: &TopUp) -> Result<CreatedTopUp, StoreError> {
        let result = self
            .client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(top_up_item(top_up)?))
            .condition_expression("attribute_not_exists(#pk)")
            .expression_attribute_names("#pk", PK)
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
            .send()
            .await;
        match result {
            Ok(_) => Ok(CreatedTopUp::New(top_up.clone())),
            Err(error) => match error.as_service_error() {
                Some(PutItemError::ConditionalCheckFailedException(failed)) => {
                    let existing = match failed.item().cloned() {
                        Some(item) => Some(item),
                        None => self.top_up_item(&top_up.id).await?,
                    };
                    existing
                        .map(top_up_from_item)
                        .transpose()?
                        .map(CreatedTopUp::Existing)
                        .ok_or_else(|| {
                            StoreError::internal(
                                "top-up: its put was refused but it cannot be read",
                            )
                        })
                }
                _ => Err(classify("PutItem", error)),
            },
        }
    }
}

impl SetCheckout for DynamoStore {
    async fn set_checkout(&self, id: &TopUpId, checkout: &Checkout) -> Result<TopUp, StoreError> {
        let result = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(top_up_key(id)))
            .update_expression("SET #session = :session, #url = :url")
            .condition_expression(
                "attribute_exists(#pk) AND (attribute_not_exists(#session) OR #session = :session)",
            )
            .expression_attribute_names("#pk", PK)
            .expression_attribute_names("#session", TOPUP_SESSION_ID)
            .expression_attribute_names("#url", "checkoutUrl")
            .expression_attribute_values(":session", s(&checkout.session_id))
            .expression_attribute_values(":url", s(&checkout.url))
            .return_values(ReturnValue::AllNew)
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
            .send()
            .await;
        let item = match result {
            Ok(output) => output.attributes,
            Err(error) => match error.as_service_error() {
                // Another request stored another session first: it stands.
                Some(UpdateItemError::ConditionalCheckFailedException(failed)) => {
                    failed.item().cloned()
                }
                _ => return Err(classify("UpdateItem", error)),
            },
        };
        item.map(top_up_from_item)
            .transpose()?
            .ok_or_else(|| StoreError::internal("top-up: storing its checkout found no top-up"))
    }
}

impl DynamoStore {
    async fn top_up_item(&self, id: &TopUpId) -> Result<Option<Item>, StoreError> {
        let output = self
            .client
            .get_item()
            .table_name(&self.table)
            .set_key(Some(top_up_key(id)))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| classify("GetItem", e))?;
        Ok(output.item)
    }

    /// The update of a top-up to `status`, only while it is not completed and is still of
    /// `session_id`.
    fn settle_update(
        &self,
        id: &TopUpId,
        session_id: &str,
        status: TopUpStatus,
        completed_at: Option<Timestamp>,
    ) -> Update {
        let mut update = Update::builder()
            .table_name(&self.table)
            .set_key(Some(top_up_key(id)))
            .condition_expression("#status <> :completed AND #session = :session")
            .expression_attribute_names("#status", TOPUP_STATUS)
            .expression_attribute_names("#session", TOPUP_SESSION_ID)
            .expression_attribute_values(":completed", s(TopUpStatus::Completed.as_str()))
            .expression_attribute_values(":session", s(session_id))
            .expression_attribute_values(":status", s(status.as_str()));
        update = match completed_at {
            Some(at) => update
                .update_expression("SET #status = :status, #completedAt = :at")
                .expression_attribute_names("#completedAt", "completedAt")
                .expression_attribute_values(":at", s(at.to_string())),
            None => update.update_expression("SET #status = :status"),
        };
        update
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
            .build()
            .expect("table, key and update expression are set")
    }
}

impl GetTopUp for DynamoStore {
    async fn get_top_up(&self, id: &TopUpId) -> Result<Option<TopUp>, StoreError> {
        self.top_up_item(id)
            .await?
            .map(top_up_from_item)
            .transpose()
    }
}

impl SettleTopUp for DynamoStore {
    async fn complete_top_up(
        &self,
        top_up: &TopUp,
        at: Timestamp,
    ) -> Result<CompletedTopUp, CreditCashError> {
        let session_id = top_up
            .session_id()
            .ok_or_else(|| StoreError::internal("complete: a top-up without a session"))?;
        let credit = top_up.credit();
        let update = self.settle_update(&top_up.id, session_id, TopUpStatus::Completed, Some(at));
        let more = [TransactWriteItem::builder().update(update).build()];
        let Some(reasons) = self.transact_credit(&credit, at, &more).await? else {
            let balance = crate::store::cash::GetBalance::get_balance(
                self,
                &credit.user_id,
                &credit.amount.currency,
            )
            .await?;
            return Ok(CompletedTopUp::Credited { balance });
        };
        // [0] the credit entry, [1] the balance, [2] the top-up.
        let failed = |index: usize| reasons.get(index).is_some_and(|r| r.condition_failed());
        if failed(0) {
            // The top-up's credit entry exists: credited before, unless an operator used its
            // reference for another credit.
            let old = reasons[0].item.clone();
            return if self.is_same_credit(old, &credit).await? {
                Ok(CompletedTopUp::AlreadyCompleted)
            } else {
                Err(CreditCashError::ReferenceReused)
            };
        }
        if failed(2) {
            return Ok(CompletedTopUp::AlreadyCompleted);
        }
        Err(CreditCashError::BalanceFull)
    }

    async fn close_top_up(
        &self,
        id: &TopUpId,
        session_id: &str,
        status: TopUpStatus,
    ) -> Result<bool, StoreError> {
        let update = self.settle_update(id, session_id, status, None);
        let result = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(update.key))
            .update_expression(update.update_expression)
            .set_condition_expression(update.condition_expression)
            .set_expression_attribute_names(update.expression_attribute_names)
            .set_expression_attribute_values(update.expression_attribute_values)
            .send()
            .await;
        match result {
            Ok(_) => Ok(true),
            Err(error)
                if error
                    .as_service_error()
                    .is_some_and(UpdateItemError::is_conditional_check_failed_exception) =>
            {
                Ok(false)
            }
            Err(error) => Err(classify("UpdateItem", error)),
        }
    }
}
