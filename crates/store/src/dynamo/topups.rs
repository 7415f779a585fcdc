//! Cash top-ups on DynamoDB: one item per top-up (`TOPUP#<topUpId>` / `TOPUP`). Its completion
//! is one transaction of the credit's own two writes (the `CREDIT#topup:<id>` entry and the
//! `CASH#<userId>` balance, built by [`DynamoStore::credit_transaction`]) and the top-up's
//! update, conditioned on it not being completed. A create takes one of its fan's pending slots
//! (`TOPUP#USER#<userId>` / `PENDING`) in the same transaction as its put, conditioned on the
//! slots as read; a settlement frees it after.

use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::types::{
    ReturnValue, ReturnValuesOnConditionCheckFailure, TransactWriteItem, Update,
};

use super::cash::CreditAction;
use super::condition::{render, written};
use super::records::{
    PendingSlotRecord, SCHEMA_VERSION, TOPUP_VERSION, TopUpRecord, pending_from_item,
};
use super::transaction::{Transaction, put_new, update};
use super::{Attempts, DynamoStore, Item, classify, key, number, s};
use crate::StoreError;
use crate::cash::{CreditCashError, credit_refused};
use crate::schema::{
    ENTITY, GSI3_PK, GSI3_SK, PENDING_TOPUPS_SK, PK, SLOTS_VERSION, TOPUP_SESSION_ID, TOPUP_SK,
    TOPUP_STATUS, pending_slot, pending_topups_pk, topup_pk, topups_by_fan_pk,
};
use crate::topups::{
    CompletedTopUp, CreateTopUp, CreateTopUpError, CreatedTopUp, GetTopUp, ListMyTopUps,
    SetCheckout, SettleTopUp, SlotTaken, slot_to_free, take_slot, top_up_list_key,
};
use domain::events::money::{top_up_completed, top_up_failed};
use domain::ids::{TopUpId, UserId};
use domain::purchases::mine::Page;
use domain::timestamp::Timestamp;
use domain::topups::pending::SlotHolder;
use domain::topups::{Checkout, TopUp, TopUpStatus};

/// The actions of a create's transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CreateAction {
    /// The top-up (its key free).
    TopUp,
    /// The fan's pending slots gain it, as read.
    Pending,
}

/// The action a completion adds to its credit's two.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Settle;

fn top_up_key(id: &TopUpId) -> Item {
    key(topup_pk(id), TOPUP_SK)
}

fn pending_key(user_id: &UserId) -> Item {
    key(pending_topups_pk(user_id), PENDING_TOPUPS_SK)
}

fn top_up_item(top_up: &TopUp) -> Result<Item, StoreError> {
    let mut item: Item = serde_dynamo::to_item(TopUpRecord::from(top_up))
        .map_err(|e| StoreError::internal_from("top-up item", e))?;
    item.extend(top_up_key(&top_up.id));
    item.insert(ENTITY.into(), s("topup"));
    item.insert(GSI3_PK.into(), s(topups_by_fan_pk(&top_up.user_id)));
    item.insert(GSI3_SK.into(), s(top_up_list_key(top_up)));
    Ok(item)
}

fn top_up_from_item(item: Item) -> Result<TopUp, StoreError> {
    serde_dynamo::from_item::<_, TopUpRecord>(item)
        .map_err(|e| StoreError::internal_from("top-up item", e))?
        .try_into()
}

impl CreateTopUp for DynamoStore {
    async fn create_top_up(&self, top_up: &TopUp) -> Result<CreatedTopUp, CreateTopUpError> {
        let key = pending_key(&top_up.user_id);
        let mut pending = pending_from_item(self.consistent_get(key).await?.as_ref())?;
        let mut attempts = Attempts::new("create top-up");
        loop {
            let slot = match take_slot(top_up.pending_slot(), top_up.created_at, &pending) {
                Ok(slot) => slot,
                // A repeat of a top-up's key answers it, whatever the fan's slots.
                Err(full) => {
                    return match self.get_top_up(&top_up.id).await? {
                        Some(existing) => Ok(CreatedTopUp::Existing(existing)),
                        None => Err(full.into()),
                    };
                }
            };
            let transaction = Transaction::new()
                .with(
                    CreateAction::TopUp,
                    put_new(&self.table, top_up_item(top_up)?)?,
                )
                .with(
                    CreateAction::Pending,
                    self.take_pending_slot_action(&top_up.user_id, &slot)?,
                );
            let Some(reasons) = self.run(transaction).await? else {
                return Ok(CreatedTopUp::New(top_up.clone()));
            };
            if reasons.failed(CreateAction::TopUp) {
                let existing = match reasons.of(CreateAction::TopUp).item.clone() {
                    Some(item) => Some(top_up_from_item(item)?),
                    None => self.get_top_up(&top_up.id).await?,
                };
                return existing.map(CreatedTopUp::Existing).ok_or_else(|| {
                    StoreError::internal("top-up: its put was refused but it cannot be read").into()
                });
            }
            if reasons.failed(CreateAction::Pending) {
                // Another create or settlement of this fan's came between: decide on the slots
                // as they are now.
                pending = pending_from_item(reasons.of(CreateAction::Pending).item.as_ref())?;
            }
            attempts.after(reasons.all()).await?;
        }
    }
}

impl ListMyTopUps for DynamoStore {
    async fn list_my_top_ups(
        &self,
        user_id: &UserId,
        limit: usize,
        after: Option<&str>,
    ) -> Result<Page<TopUp>, StoreError> {
        self.fan_index_page(topups_by_fan_pk(user_id), limit, after, top_up_from_item)
            .await
    }
}

impl DynamoStore {
    /// The fan's pending slots take `slot`'s session, on its condition (the slots as read: the
    /// cap was decided on them).
    pub(super) fn take_pending_slot_action(
        &self,
        user_id: &UserId,
        slot: &SlotTaken,
    ) -> Result<TransactWriteItem, StoreError> {
        let taken = serde_dynamo::to_attribute_value(PendingSlotRecord::from(&slot.taken))
            .map_err(|e| StoreError::internal_from("pending top-up slot", e))?;
        let slot_name = pending_slot(slot.slot);
        update(
            &self.table,
            pending_key(user_id),
            "SET #slot = :taken, #v = :next, #sv = :sv, #entity = :entity",
            &slot.condition,
            &[
                ("#slot", slot_name.as_str()),
                ("#v", SLOTS_VERSION),
                ("#sv", SCHEMA_VERSION),
                ("#entity", ENTITY),
            ],
            vec![
                (":taken", taken),
                (":next", number(slot.version)),
                (":sv", number(TOPUP_VERSION)),
                (":entity", s("pendingtopups")),
            ],
        )
    }

    /// Frees the pending slot of `user_id`'s that `holder` still holds (settled: completed,
    /// failed or expired). Best effort: a slot left taken frees itself when its session expires,
    /// so a failure here is logged, never the settlement's.
    pub(super) async fn free_pending_slot(&self, user_id: &UserId, holder: SlotHolder) {
        if let Err(error) = self.try_free_pending_slot(user_id, &holder).await {
            tracing::warn!(holder = ?holder, error = %error.detail(), "a settled session's pending slot was left to expire");
        }
    }

    async fn try_free_pending_slot(
        &self,
        user_id: &UserId,
        holder: &SlotHolder,
    ) -> Result<(), StoreError> {
        let key = pending_key(user_id);
        let pending = pending_from_item(self.consistent_get(key.clone()).await?.as_ref())?;
        let Some((slot, holds_it)) = slot_to_free(&pending, holder) else {
            return Ok(());
        };
        let condition = render(&holds_it);
        let result = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key))
            .update_expression("REMOVE #slot SET #v = #v + :one")
            .condition_expression(condition.expression)
            .set_expression_attribute_names(Some(condition.names.into_iter().collect()))
            .set_expression_attribute_values(Some(condition.values.into_iter().collect()))
            .expression_attribute_names("#slot", pending_slot(slot))
            .expression_attribute_names("#v", SLOTS_VERSION)
            .expression_attribute_values(":one", number(1))
            .send()
            .await;
        // Not written: taken by another session since (this one's expired), nothing to free.
        written("UpdateItem", result).map(drop)
    }
}

impl SetCheckout for DynamoStore {
    async fn set_checkout(&self, id: &TopUpId, checkout: &Checkout) -> Result<TopUp, StoreError> {
        self.store_session(top_up_key(id), checkout)
            .await?
            .map(top_up_from_item)
            .transpose()?
            .ok_or_else(|| StoreError::internal("top-up: storing its checkout found no top-up"))
    }
}

impl DynamoStore {
    /// Stores `checkout` on the item at `key` (a top-up's or a card order's), only while it
    /// exists and has no session or this one: one conditional update. Answers the item after
    /// it, or as it is when another request stored another session first (that one stands).
    pub(super) async fn store_session(
        &self,
        key: Item,
        checkout: &Checkout,
    ) -> Result<Option<Item>, StoreError> {
        let result = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key))
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
        match result {
            Ok(output) => Ok(output.attributes),
            Err(error) => match error.as_service_error() {
                Some(UpdateItemError::ConditionalCheckFailedException(failed)) => {
                    Ok(failed.item().cloned())
                }
                _ => Err(classify("UpdateItem", error)),
            },
        }
    }
}

impl DynamoStore {
    /// The item at `key`, read strongly consistent.
    /// The fan's pending top-up slots, read strongly.
    pub(crate) async fn fan_pending_top_ups(
        &self,
        user_id: &UserId,
    ) -> Result<domain::topups::pending::PendingTopUps, StoreError> {
        pending_from_item(self.consistent_get(pending_key(user_id)).await?.as_ref())
    }

    async fn consistent_get(&self, key: Item) -> Result<Option<Item>, StoreError> {
        let output = self
            .client
            .get_item()
            .table_name(&self.table)
            .set_key(Some(key))
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
            // Not to its own status again: a repeated event changes nothing and writes no event.
            .condition_expression(
                "#status <> :completed AND #status <> :status AND #session = :session",
            )
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
        self.consistent_get(top_up_key(id))
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
        let more = [(Settle, TransactWriteItem::builder().update(update).build())];
        let Some(reasons) = self
            .transact_credit(&credit, at, &more, &top_up_completed(top_up))
            .await?
        else {
            let balance = crate::cash::GetBalance::get_balance(
                self,
                &credit.user_id,
                &credit.amount.currency,
            )
            .await?;
            self.free_pending_slot(&top_up.user_id, SlotHolder::TopUp(top_up.id.clone()))
                .await;
            return Ok(CompletedTopUp::Credited { balance });
        };
        let used = if reasons.failed(CreditAction::Entry) {
            // The top-up's credit entry exists: credited before, unless an operator used its
            // reference for another credit.
            let old = reasons.of(CreditAction::Entry).item.clone();
            Some(self.is_same_credit(old, &credit).await?)
        } else if reasons.failed(CreditAction::More(Settle)) {
            return Ok(CompletedTopUp::AlreadyCompleted);
        } else {
            None
        };
        credit_refused(used).map(|_| CompletedTopUp::AlreadyCompleted)
    }

    async fn close_top_up(
        &self,
        top_up: &TopUp,
        session_id: &str,
        status: TopUpStatus,
        at: Timestamp,
    ) -> Result<bool, StoreError> {
        // A transaction, not one update: the top-up's `topup.failed` is written with it.
        let update = self.settle_update(&top_up.id, session_id, status, None);
        let transaction = Transaction::new()
            .with(Settle, TransactWriteItem::builder().update(update).build())
            .emit(top_up_failed(top_up, status), at);
        let mut attempts = Attempts::new("close top-up");
        loop {
            match self.run(transaction.clone()).await? {
                None => break,
                Some(reasons) if reasons.failed(Settle) => return Ok(false),
                Some(reasons) => attempts.after(reasons.all()).await?,
            }
        }
        self.free_pending_slot(&top_up.user_id, SlotHolder::TopUp(top_up.id.clone()))
            .await;
        Ok(true)
    }
}
