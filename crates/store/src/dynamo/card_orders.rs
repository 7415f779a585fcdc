//! Card orders on DynamoDB after their placing (`store::products`): the Checkout Session stored
//! on the order item, as a top-up's is on its own; the completion granting once; the close
//! giving back what the order took. Each frees the order's pending-session slot after (best
//! effort: a slot left taken frees itself when its session expires).

use aws_sdk_dynamodb::types::TransactWriteItem;

use super::cash::CreditAction;
use super::products::order_key;
use super::records::order_from_item;
use super::transaction::{Transaction, update};
use super::{Attempts, DynamoStore, key, number, s};
use crate::StoreError;
use crate::products::{
    BOUGHT_COUNT, CloseOrder, CompleteOrder, CompleteOrderError, CompletedOrder, GetOrders,
    ORDER_STATUS, STOCK_REMAINING, STOCK_SK, STOCK_SOLD, SetOrderCheckout, bought_sk, conditions,
    not_pending, stock_pk,
};
use crate::schema::user_pk;
use domain::events::money::order_completed;
use domain::ids::{OrderId, UserId};
use domain::products::order::{Order, OrderStatus};
use domain::timestamp::Timestamp;
use domain::topups::Checkout;
use domain::topups::pending::SlotHolder;

impl SetOrderCheckout for DynamoStore {
    async fn set_order_checkout(
        &self,
        user_id: &UserId,
        order_id: &OrderId,
        checkout: &Checkout,
    ) -> Result<Order, StoreError> {
        self.store_session(order_key(user_id, order_id), checkout)
            .await?
            .map(order_from_item)
            .transpose()?
            .ok_or_else(|| StoreError::internal("order: storing its checkout found no order"))
    }
}

/// The actions of a card order's completion besides a credit's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CompleteAction {
    /// The order, completed only while pending.
    Order,
    /// The cosmetic owned.
    Own,
}

impl DynamoStore {
    /// The order's update to `completed` at `at`, only while pending.
    fn complete_action(
        &self,
        order: &Order,
        at: Timestamp,
    ) -> Result<TransactWriteItem, StoreError> {
        update(
            &self.table,
            order_key(&order.user_id, &order.id),
            "SET #status = :completed, #completedAt = :at",
            &conditions::pending(),
            &[("#status", ORDER_STATUS), ("#completedAt", "completedAt")],
            vec![
                (":completed", s(OrderStatus::Completed.as_str())),
                (":at", s(at.to_string())),
            ],
        )
    }
}

impl DynamoStore {
    /// A completion's answer, its pending slot freed first (best effort).
    async fn completed_order(&self, completed: Order) -> CompletedOrder {
        let holder = SlotHolder::Order(completed.id.clone());
        self.free_pending_slot(&completed.user_id, holder).await;
        CompletedOrder::Completed(completed)
    }
}

impl CompleteOrder for DynamoStore {
    async fn complete_order(
        &self,
        order: &Order,
        at: Timestamp,
    ) -> Result<CompletedOrder, CompleteOrderError> {
        let completed = order.completed(at);
        let events = order_completed(&completed);
        let complete = self.complete_action(order, at)?;
        // A bundle's grant is its credit (the credit's own two actions first); a cosmetic's, owning it.
        if let Some(credit) = order.credit() {
            let more = [(CompleteAction::Order, complete)];
            match self.transact_credit(&credit, at, &more, &events).await? {
                None => return Ok(self.completed_order(completed).await),
                Some(reasons) if !reasons.failed(CreditAction::More(CompleteAction::Order)) => {
                    return Err(StoreError::internal("order: its credit was refused").into());
                }
                Some(_) => {}
            }
        } else {
            let slot = order
                .grants
                .slot()
                .ok_or_else(|| StoreError::internal("order: no grant"))?;
            let mut attempts = Attempts::new("complete order");
            loop {
                let transaction = Transaction::new()
                    .with(CompleteAction::Order, complete.clone())
                    .with(CompleteAction::Own, self.own_action(order, slot)?)
                    .emit(events.clone(), at);
                match self.run(transaction).await? {
                    None => return Ok(self.completed_order(completed).await),
                    Some(reasons) if reasons.failed(CompleteAction::Order) => break,
                    Some(reasons) => attempts.after(reasons.all()).await?,
                }
            }
        }
        // Not pending: completed before (answered again), or closed.
        not_pending(self.get_order(&order.user_id, &order.id).await?)
    }
}

/// The actions of a close.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CloseAction {
    /// The order, closed only while pending with the session.
    Order,
    /// Its sale undone on the stock item.
    Stock,
    /// The fan's count less one.
    Count,
}

impl DynamoStore {
    /// The close of `order` (as read) to `status`. `counts_units`: whether the stock item has
    /// units left to give one back to (the release's shape, conditioned on).
    fn close_transaction(
        &self,
        order: &Order,
        session_id: &str,
        status: OrderStatus,
        counts_units: bool,
    ) -> Result<Transaction<CloseAction>, StoreError> {
        let table = &self.table;
        let close = update(
            table,
            order_key(&order.user_id, &order.id),
            "SET #status = :status",
            &conditions::closable(session_id),
            &[("#status", ORDER_STATUS)],
            vec![(":status", s(status.as_str()))],
        )?;
        // A stock's units left are what it has beyond the units sold (as seeding sets them): one
        // sale less is one unit more, whatever the product had when the order took it.
        let mut names = vec![("#sold", STOCK_SOLD)];
        let expression = match counts_units {
            true => {
                names.push(("#remaining", STOCK_REMAINING));
                "ADD #sold :less SET #remaining = #remaining + :one"
            }
            false => "ADD #sold :less",
        };
        let mut values = vec![(":less", number(-1))];
        if counts_units {
            values.push((":one", number(1)));
        }
        let stock = update(
            table,
            key(stock_pk(&order.product_id), STOCK_SK),
            expression,
            &conditions::stock_counts_units(counts_units),
            &names,
            values,
        )?;
        let mut transaction = Transaction::new()
            .with(CloseAction::Order, close)
            .with(CloseAction::Stock, stock);
        if order.took.count {
            let count = update(
                table,
                key(user_pk(&order.user_id), &bought_sk(&order.product_id)),
                "ADD #count :less",
                &crate::condition::Condition::exists(BOUGHT_COUNT),
                &[("#count", BOUGHT_COUNT)],
                vec![(":less", number(-1))],
            )?;
            transaction.push(CloseAction::Count, count);
        }
        Ok(transaction)
    }
}

impl CloseOrder for DynamoStore {
    async fn close_order(
        &self,
        order: &Order,
        session_id: &str,
        status: OrderStatus,
    ) -> Result<Option<Order>, StoreError> {
        // What the order took is the first guess at the stock's shape; a re-seed since may
        // have added or removed the stock, which the condition finds.
        let mut counts_units = order.took.unit;
        let mut attempts = Attempts::new("close order");
        loop {
            let transaction = self.close_transaction(order, session_id, status, counts_units)?;
            let Some(reasons) = self.run(transaction).await? else {
                break;
            };
            if reasons.failed(CloseAction::Order) {
                return Ok(None);
            }
            if reasons.failed(CloseAction::Count) {
                return Err(StoreError::internal("order: closing it found no count"));
            }
            if reasons.failed(CloseAction::Stock) {
                counts_units = !counts_units;
            }
            attempts.after(reasons.all()).await?;
        }
        self.free_pending_slot(&order.user_id, SlotHolder::Order(order.id.clone()))
            .await;
        Ok(Some(order.closed(status)))
    }
}
