//! Products (`PRODUCTS` / `PRODUCT#<productId>`) and orders (`USER#<userId>` /
//! `ORDER#<orderId>`) as records: an order keeps what it was sold as.

use serde::{Deserialize, Serialize};

use super::{read_record, readable};
use crate::StoreError;
use crate::dynamo::Item;
use domain::cash::Money;
use domain::ids::{OrderId, ProductId, UserId};
use domain::products::order::{Order, OrderStatus, Took};
use domain::products::{Grant, PayMethod, Product, ProductType};
use domain::timestamp::Timestamp;
use domain::topups::Checkout;

/// The version of the product, stock, order and cosmetics items this release writes, and the
/// newest it reads.
pub(crate) const PRODUCT_VERSION: u32 = 1;

/// A product item: the product as one JSON text (its `type` beside it is the listing's filter).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ProductRecord {
    schema_version: u32,
    doc: String,
}

impl TryFrom<ProductRecord> for Product {
    type Error = StoreError;

    fn try_from(record: ProductRecord) -> Result<Self, StoreError> {
        readable("product", record.schema_version, PRODUCT_VERSION)?;
        serde_json::from_str(&record.doc).map_err(|e| StoreError::internal_from("product item", e))
    }
}

/// An order item's attributes (besides its keys and index keys): what was sold, as sold.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct OrderRecord {
    schema_version: u32,
    order_id: OrderId,
    user_id: UserId,
    product_id: ProductId,
    product_type: ProductType,
    product_name: String,
    amount: u64,
    currency: String,
    grants: Grant,
    pay: PayMethod,
    status: OrderStatus,
    /// What it took besides `sold` ([`Took`]): given back if it closes unpaid.
    #[serde(default)]
    took_unit: bool,
    #[serde(default)]
    took_count: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    checkout_session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    checkout_url: Option<String>,
    created_at: Timestamp,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    completed_at: Option<Timestamp>,
}

impl From<&Order> for OrderRecord {
    fn from(order: &Order) -> Self {
        Self {
            schema_version: PRODUCT_VERSION,
            order_id: order.id.clone(),
            user_id: order.user_id.clone(),
            product_id: order.product_id.clone(),
            product_type: order.product_type,
            product_name: order.product_name.clone(),
            amount: order.price.amount,
            currency: order.price.currency.clone(),
            grants: order.grants.clone(),
            pay: order.pay,
            status: order.status,
            took_unit: order.took.unit,
            took_count: order.took.count,
            checkout_session_id: order.checkout.as_ref().map(|c| c.session_id.clone()),
            checkout_url: order.checkout.as_ref().map(|c| c.url.clone()),
            created_at: order.created_at,
            completed_at: order.completed_at,
        }
    }
}

impl TryFrom<OrderRecord> for Order {
    type Error = StoreError;

    fn try_from(record: OrderRecord) -> Result<Self, StoreError> {
        readable("order", record.schema_version, PRODUCT_VERSION)?;
        let checkout = match (record.checkout_session_id, record.checkout_url) {
            (Some(session_id), Some(url)) => Some(Checkout { session_id, url }),
            _ => None,
        };
        Ok(Order {
            id: record.order_id,
            user_id: record.user_id,
            product_id: record.product_id,
            product_type: record.product_type,
            product_name: record.product_name,
            price: Money {
                amount: record.amount,
                currency: record.currency,
            },
            grants: record.grants,
            pay: record.pay,
            status: record.status,
            took: Took {
                unit: record.took_unit,
                count: record.took_count,
            },
            checkout,
            created_at: record.created_at,
            completed_at: record.completed_at,
        })
    }
}

pub(crate) fn order_from_item(item: Item) -> Result<Order, StoreError> {
    read_record::<OrderRecord, _>(item, "order")
}
