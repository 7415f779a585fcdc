//! Purchases on DynamoDB. Every operation reads once (a `BatchGetItem` of what it decides on),
//! applies the rules of [`domain::purchases`] to what it read, then writes once: one transaction
//! whose conditions re-check, inside the write, everything another request could have changed
//! since the read. When a condition fails, the transaction's cancellation hands back the item as
//! it is now (`ALL_OLD`), so the decision is taken again on fresh state without another read.

mod admission;
mod complete;
mod holds;
mod open;
mod release;
mod reward;
mod start;

pub(crate) use reward::PackClaimed;

use aws_sdk_dynamodb::types::AttributeValue;

use super::records::{PurchaseRecord, balance_from_item, buys_from_item, read_record};
use super::{DynamoStore, Item, key, number, s};
use crate::StoreError;
use crate::purchases::GetPurchase;
use crate::schema::{
    CASH_SK, ENTITY, GSI2_PK, GSI2_SK, GSI3_PK, GSI3_SK, PURCHASE_EXPIRES_NS, buys_sk, cash_pk,
    hold_key, holds_pk, purchase_sk, user_pk,
};
use domain::ids::{PackId, PurchaseId, UserId};
use domain::purchases::mine::{opened_list_key, purchase_list_key};
use domain::purchases::{Purchase, PurchaseStatus};

fn purchase_key(user_id: &UserId, purchase_id: &PurchaseId) -> Item {
    key(user_pk(user_id), &purchase_sk(purchase_id))
}

fn buys_key(user_id: &UserId, pack_id: &PackId) -> Item {
    key(user_pk(user_id), &buys_sk(pack_id))
}

fn cash_key(user_id: &UserId) -> Item {
    key(cash_pk(user_id), CASH_SK)
}

pub(crate) fn status_text(status: PurchaseStatus) -> AttributeValue {
    s(status.as_str())
}

/// The item of a purchase: its fields, its key, its key in the fan's purchase list, and while
/// reserved, the holds index keys.
pub(crate) fn purchase_item(purchase: &Purchase) -> Result<Item, StoreError> {
    let mut item: Item = serde_dynamo::to_item(PurchaseRecord::from(purchase))
        .map_err(|e| StoreError::internal_from("purchase item", e))?;
    item.extend(purchase_key(&purchase.user_id, &purchase.id));
    item.insert(ENTITY.into(), s("purchase"));
    item.insert(
        PURCHASE_EXPIRES_NS.into(),
        number(purchase.expires_at.unix_nanos()),
    );
    // The fan's purchase list: set once, by the start's put (the key never changes after).
    item.insert(GSI3_PK.into(), s(user_pk(&purchase.user_id)));
    item.insert(GSI3_SK.into(), s(purchase_list_key(purchase)));
    if purchase.status == PurchaseStatus::Reserved {
        item.insert(
            GSI2_PK.into(),
            s(holds_pk(&purchase.pack_id, purchase.supply_shard)),
        );
        item.insert(
            GSI2_SK.into(),
            s(hold_key(purchase.expires_at, &purchase.id)),
        );
    }
    // Once opened, the fan's item list (GSI2 is free again: the payment removed the hold's).
    if let Some(opened_key) = opened_list_key(purchase) {
        item.insert(GSI2_PK.into(), s(user_pk(&purchase.user_id)));
        item.insert(GSI2_SK.into(), s(opened_key));
    }
    Ok(item)
}

pub(crate) fn purchase_from_item(item: Item) -> Result<Purchase, StoreError> {
    read_record::<PurchaseRecord, _>(item, "purchase")
}

/// The balance in `currency` of a user's cash item (0 when none).
fn balance_in(item: Option<&Item>, currency: &str) -> Result<u64, StoreError> {
    balance_from_item(item.cloned(), currency)
}

impl GetPurchase for DynamoStore {
    async fn get_purchase(
        &self,
        user_id: &UserId,
        purchase_id: &PurchaseId,
    ) -> Result<Option<Purchase>, StoreError> {
        let output = self
            .client
            .get_item()
            .table_name(&self.table)
            .set_key(Some(purchase_key(user_id, purchase_id)))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| super::classify("GetItem", e))?;
        output.item.map(purchase_from_item).transpose()
    }
}
