//! Opening a paid purchase: its items drawn, written in one conditional update.

use aws_sdk_dynamodb::types::AttributeValue;

use super::{purchase_from_item, purchase_item, purchase_key};
use crate::StoreError;
use crate::dynamo::leaderboards::score_updates;
use crate::dynamo::locker_room::stats_update;
use crate::dynamo::records::draw_inputs_from_item;
use crate::dynamo::transaction::{Transaction, update};
use crate::dynamo::{Attempts, DynamoStore, Item, key};
use crate::purchase_conditions as conditions;
use crate::purchases::{OpenError, OpenPurchase, Opened};
use crate::schema::{DRAW_SK, draw_pk};
use crate::schema::{GSI2_PK, GSI2_SK, PURCHASE_STATUS};
use domain::events::money::pack_opened;
use domain::ids::{PackId, PurchaseId, UserId};
use domain::purchases::{OpenRefusal, check_open, opened};
use domain::timestamp::Timestamp;

/// The actions of an opening's transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    Purchase,
    Stats,
    /// The fan's score on one of the pack's boards (unconditional additions).
    Score,
}

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
        // With the fan's stats in the same transaction, so that they never count an opening that
        // did not happen nor miss one (docs/fan-app.md: 8 WCU an opening instead of 3).
        let names = [
            ("#gsi2pk", GSI2_PK),
            ("#gsi2sk", GSI2_SK),
            ("#status", PURCHASE_STATUS),
            ("#openedAt", "openedAt"),
            ("#items", "items"),
            ("#fairness", "fairness"),
        ];
        let mut transaction = Transaction::new()
            .with(
                Action::Purchase,
                update(
                    &self.table,
                    purchase_key(user_id, purchase_id),
                    "SET #status = :status, #openedAt = :openedAt, #items = :items, \
                     #fairness = :fairness, #gsi2pk = :mine, #gsi2sk = :opened_key",
                    &conditions::openable(),
                    &names,
                    values,
                )?,
            )
            .with(
                Action::Stats,
                stats_update(
                    &self.table,
                    user_id,
                    opened.items.as_deref().unwrap_or_default(),
                )?,
            )
            .emit(pack_opened(&opened), now);
        // And the fan's score on each board the pack counts for, in the same transaction: a
        // board never counts an opening that did not happen (docs/leaderboards.md).
        let items = opened.items.as_deref().unwrap_or_default();
        for score in score_updates(
            &self.table,
            user_id,
            &inputs.boards,
            self.weights.score_of(items),
            now,
        )? {
            transaction.push(Action::Score, score);
        }
        let mut attempts = Attempts::new("open");
        let failed = loop {
            match self.run(transaction.clone()).await? {
                None => {
                    return Ok(Opened {
                        purchase: opened,
                        fairness,
                        repeated: false,
                    });
                }
                Some(reasons) if reasons.failed(Action::Purchase) => {
                    break reasons.of(Action::Purchase).item.clone();
                }
                // Another transaction (a sweep's release that read the purchase while reserved,
                // another opening of the fan adding to their stats) was on an item: nothing was
                // written.
                Some(reasons) => attempts.after(reasons.all()).await?,
            }
        };
        // Opened meanwhile by a concurrent request: answer its draw.
        let current = failed
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
