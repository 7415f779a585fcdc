//! Card orders in memory after their placing: the Checkout Session stored on the order, as
//! DynamoDB's conditional update stores it.

use super::MemoryStore;
use super::products::Products;
use crate::StoreError;
use crate::products::SetOrderCheckout;
use domain::ids::{OrderId, UserId};
use domain::products::order::Order;
use domain::topups::Checkout;

impl SetOrderCheckout for MemoryStore {
    async fn set_order_checkout(
        &self,
        user_id: &UserId,
        order_id: &OrderId,
        checkout: &Checkout,
    ) -> Result<Order, StoreError> {
        let mut tables = self.write();
        let order = tables
            .table_mut::<Products>()
            .orders
            .get_mut(&(user_id.clone(), order_id.clone()))
            .ok_or_else(|| StoreError::internal("order: storing its checkout found no order"))?;
        if order.checkout.is_none() {
            order.checkout = Some(checkout.clone());
        }
        Ok(order.clone())
    }
}
