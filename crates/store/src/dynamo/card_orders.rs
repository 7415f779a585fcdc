//! Card orders on DynamoDB after their placing (`store::products`): the Checkout Session stored
//! on the order item, as a top-up's is on its own.

use super::records::order_from_item;
use super::{DynamoStore, key};
use crate::StoreError;
use crate::products::{SetOrderCheckout, order_sk};
use crate::schema::user_pk;
use domain::ids::{OrderId, UserId};
use domain::products::order::Order;
use domain::topups::Checkout;

impl SetOrderCheckout for DynamoStore {
    async fn set_order_checkout(
        &self,
        user_id: &UserId,
        order_id: &OrderId,
        checkout: &Checkout,
    ) -> Result<Order, StoreError> {
        self.store_session(key(user_pk(user_id), &order_sk(order_id)), checkout)
            .await?
            .map(order_from_item)
            .transpose()?
            .ok_or_else(|| StoreError::internal("order: storing its checkout found no order"))
    }
}
