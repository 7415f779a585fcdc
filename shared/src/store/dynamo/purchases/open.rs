//! Opening a paid purchase: its items drawn, written in one conditional update.

use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::types::{AttributeValue, ReturnValuesOnConditionCheckFailure};

use super::{purchase_from_item, purchase_item, purchase_key};
use crate::ids::{PackId, PurchaseId, UserId};
use crate::purchases::{OpenRefusal, check_open, opened};
use crate::store::StoreError;
use crate::store::dynamo::condition::render;
use crate::store::dynamo::records::draw_inputs_from_item;
use crate::store::dynamo::{Attempts, DynamoStore, Item, classify, key};
use crate::store::purchase_conditions as conditions;
use crate::store::purchases::{OpenError, OpenPurchase, Opened};
use crate::store::schema::{DRAW_SK, draw_pk};
use crate::store::schema::{GSI2_PK, GSI2_SK, PURCHASE_STATUS};
use crate::timestamp::Timestamp;

impl OpenPurchase for DynamoStore {
    async fn open_purchase(
        &self,
        user_id: &UserId,
        pack_id: &PackId,
        purchase_id: &PurchaseId,
        now: Timestamp,
    ) -> Result<Opened, OpenError> {
        let [stored, draw_item] = self
            .batch_get(
                [
                    purchase_key(user_id, purchase_id),
                    key(draw_pk(pack_id), DRAW_SK),
                ],
                true,
            )
            .await?;
        let purchase = stored.map(purchase_from_item).transpose()?;
        let open_now = check_open(purchase.as_ref(), pack_id, now)?;
        let (Some(purchase), Some(draw_item)) = (purchase, draw_item) else {
            return Err(StoreError::internal(format!("pack {pack_id} has no draw inputs")).into());
        };
        let inputs = draw_inputs_from_item(draw_item)?;
        let fairness = inputs.fairness_at(now);
        if !open_now {
            return Ok(Opened {
                purchase,
                fairness,
                repeated: true,
            });
        }
        let opened = opened(&purchase, &inputs, now)?;
        let written: Item = purchase_item(&opened)?;
        // With its entry in the fan's item list, in the same conditional write that opens it.
        let attributes = ["status", "openedAt", "items", "fairness", GSI2_PK, GSI2_SK];
        let mut values: Vec<(&str, AttributeValue)> = Vec::new();
        let placeholders = [
            ":status",
            ":openedAt",
            ":items",
            ":fairness",
            ":mine",
            ":opened_key",
        ];
        for (attribute, placeholder) in attributes.iter().zip(placeholders) {
            let value = written.get(*attribute).cloned().ok_or_else(|| {
                StoreError::internal(format!("opened purchase without `{attribute}`"))
            })?;
            values.push((placeholder, value));
        }
        // One item, so one conditional UpdateItem, not a transaction (half the write units).
        let condition = render(&conditions::openable());
        let mut write = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(purchase_key(user_id, purchase_id)))
            .update_expression(
                "SET #status = :status, #openedAt = :openedAt, #items = :items, #fairness = :fairness, \
                 #gsi2pk = :mine, #gsi2sk = :opened_key",
            )
            .condition_expression(condition.expression)
            .set_expression_attribute_names(Some(condition.names.into_iter().collect()))
            .set_expression_attribute_values(Some(condition.values.into_iter().collect()))
            .expression_attribute_names("#gsi2pk", GSI2_PK)
            .expression_attribute_names("#gsi2sk", GSI2_SK)
            .expression_attribute_names("#status", PURCHASE_STATUS)
            .expression_attribute_names("#openedAt", "openedAt")
            .expression_attribute_names("#items", "items")
            .expression_attribute_names("#fairness", "fairness")
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld);
        for (name, value) in values {
            write = write.expression_attribute_values(name, value);
        }
        let mut attempts = Attempts::new("open");
        let failed = loop {
            let error = match write.clone().send().await {
                Ok(_) => {
                    return Ok(Opened {
                        purchase: opened,
                        fairness,
                        repeated: false,
                    });
                }
                Err(error) => error,
            };
            match error.as_service_error() {
                Some(UpdateItemError::ConditionalCheckFailedException(failed)) => {
                    break failed.clone();
                }
                // A transaction (a sweep's release that read the purchase while reserved) was
                // on the item at that moment: nothing was written.
                Some(UpdateItemError::TransactionConflictException(_)) => {
                    attempts.after_conflict().await?;
                }
                _ => return Err(classify("UpdateItem", error).into()),
            }
        };
        // Opened meanwhile by a concurrent request: answer its draw.
        let current = failed
            .item()
            .cloned()
            .map(purchase_from_item)
            .transpose()?
            .ok_or(OpenRefusal::NotFound)?;
        match check_open(Some(&current), pack_id, now)? {
            false => Ok(Opened {
                purchase: current,
                fairness,
                repeated: true,
            }),
            true => Err(
                StoreError::internal("open: the condition failed on a completed purchase").into(),
            ),
        }
    }
}
