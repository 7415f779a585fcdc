//! The operations on products, their orders and the cosmetics fans own and equip (issue 48).
//!
//! Items (DynamoDB; the in-memory store keeps the same, attribute by attribute):
//! - a product: `PRODUCTS#ALL` / `PRODUCT#<productId>`, its JSON (one Query of the partition lists
//!   a page);
//! - its stock: `PRODUCT#<productId>` / `STOCK`: the product's `terms` (digest), the units
//!   `remaining` (when it has a stock) and `sold`; every order writes it under the terms it read;
//! - a fan's count of a product: `USER#<userId>` / `BOUGHT#<productId>` (`count`);
//! - an order: `USER#<userId>` / `ORDER#<orderId>`, listed on GSI3 `ORDERS#<userId>`;
//! - a Cash order's debit: `CASH#<userId>` / `ODEBIT#<orderId>`, in the fan's ledger (GSI3);
//! - an owned cosmetic: `USER#<userId>` / `OWNS#<productId>` (`slot`, `count`);
//! - the equipped cosmetics: `FAN#<userId>` / `SHOW#COSMETICS` (one attribute per slot): the
//!   fan's public face, so the Query that reads a locker room (`SHOW` to `STATS`) reads them too.

use std::future::Future;

use crate::StoreError;
use crate::condition::{Compare, Condition};
use domain::ids::{OrderId, ProductId, UserId};
use domain::products::cosmetics::Equipped;
use domain::products::order::{Order, OrderStatus};
use domain::products::{Product, ProductType, Slot};
use domain::purchases::mine::Page;
use domain::topups::Checkout;
use domain::topups::pending::TooManyPending;

pub const PRODUCTS_PK: &str = "PRODUCTS#ALL";
pub const PRODUCT_PREFIX: &str = "PRODUCT#";
pub fn product_sk(id: &ProductId) -> String {
    format!("{PRODUCT_PREFIX}{id}")
}
pub fn stock_pk(id: &ProductId) -> String {
    format!("{PRODUCT_PREFIX}{id}")
}
pub const STOCK_SK: &str = "STOCK";
pub const STOCK_TERMS: &str = "terms";
pub const STOCK_REMAINING: &str = "remaining";
pub const STOCK_SOLD: &str = "sold";
pub fn bought_sk(id: &ProductId) -> String {
    format!("BOUGHT#{id}")
}
pub const BOUGHT_COUNT: &str = "count";
pub const ORDER_PREFIX: &str = "ORDER#";
pub fn order_sk(id: &OrderId) -> String {
    format!("{ORDER_PREFIX}{id}")
}
pub fn orders_pk(user_id: &UserId) -> String {
    format!("ORDERS#{user_id}")
}
pub const ORDER_STATUS: &str = "status";
pub const ORDER_SESSION_ID: &str = "checkoutSessionId";
pub fn order_debit_sk(id: &OrderId) -> String {
    format!("ODEBIT#{id}")
}
pub const OWNS_PREFIX: &str = "OWNS#";
pub fn owns_sk(id: &ProductId) -> String {
    format!("{OWNS_PREFIX}{id}")
}
pub const OWNS_SLOT: &str = "slot";
pub const COSMETICS_SK: &str = "SHOW#COSMETICS";

/// The conditions of an order's writes, declared once (see [`crate::condition`]).
pub mod conditions {
    use super::*;

    /// The stock item still has the terms the order decided on and, for a product with a
    /// stock, a unit left: never more sold than the stock.
    pub fn stock_sells(product: &Product) -> Condition {
        let terms = Condition::eq(STOCK_TERMS, product.terms().as_str());
        match product.stock {
            Some(_) => terms.and(Condition::is(STOCK_REMAINING, Compare::Ge, 1u64)),
            None => terms,
        }
    }

    /// The fan's count of the product is under its limit: never more per fan than the limit.
    pub fn under_limit(max: u32) -> Condition {
        Condition::absent(BOUGHT_COUNT).or(Condition::is(BOUGHT_COUNT, Compare::Lt, max))
    }

    /// The order is pending: a card order completes once.
    pub fn pending() -> Condition {
        Condition::eq(ORDER_STATUS, OrderStatus::Pending.as_str())
    }

    /// The order is pending with the Checkout Session `session_id`: closing it unpaid is one
    /// event's, once.
    pub fn closable(session_id: &str) -> Condition {
        pending().and(Condition::eq(ORDER_SESSION_ID, session_id))
    }

    /// The stock item has units left to count (`remaining`), or has none (no stock): the shape
    /// a closing order's release was built for.
    pub fn stock_counts_units(counts: bool) -> Condition {
        match counts {
            true => Condition::exists(STOCK_REMAINING),
            false => Condition::absent(STOCK_REMAINING),
        }
    }

    /// The fan owns a cosmetic for `slot` (equipping checks it in the same write).
    pub fn owns_for(slot: Slot) -> Condition {
        Condition::eq(OWNS_SLOT, slot.as_str())
    }
}

/// Writes the operator's products: each put whole; its stock item takes the new terms and stock,
/// keeping the units sold (a stock below them sells nothing more).
pub trait SeedProducts: Send + Sync {
    fn seed_products(
        &self,
        products: &[Product],
    ) -> impl Future<Output = Result<(), StoreError>> + Send;
}

/// A page of the products, by id (`type` filtered), after the id `after`: one Query.
pub trait ListProducts: Send + Sync {
    fn list_products(
        &self,
        product_type: Option<ProductType>,
        limit: usize,
        after: Option<&ProductId>,
    ) -> impl Future<Output = Result<Page<Product>, StoreError>> + Send;
}

/// One product, or `None`.
pub trait GetProduct: Send + Sync {
    fn get_product(
        &self,
        id: &ProductId,
    ) -> impl Future<Output = Result<Option<Product>, StoreError>> + Send;
}

/// What placing an order did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placed {
    /// Placed now: with Cash, debited, taken from the stock and the fan's allowance and granted
    /// in one transaction; by card, pending with its stock and allowance taken.
    Created(Order),
    /// The key placed this order before: that order, nothing changed.
    Repeated(Order),
}

/// Why an order was not placed (nothing was written).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OrderError {
    #[error("the idempotency key was used for another order")]
    KeyReused,
    #[error("the product's stock is sold")]
    SoldOut,
    #[error("the fan reached the product's limit")]
    LimitReached,
    #[error("the balance does not cover the price")]
    InsufficientFunds,
    /// The product changed since it was read: read it again and decide again.
    #[error("the product changed")]
    ProductChanged,
    /// A card order: its fan holds as many open Checkout Sessions (pending top-ups and card
    /// orders) as a fan may ([`MAX_PENDING_TOP_UPS`](domain::topups::pending::MAX_PENDING_TOP_UPS)).
    #[error(transparent)]
    TooManyPending(#[from] TooManyPending),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The answer to an order whose stock condition failed, the same in both stores: the stock item
/// still has the terms read (`stored_terms`) and so no unit left, or the product changed.
pub fn stock_refused(product: &Product, stored_terms: Option<&str>) -> OrderError {
    if stored_terms == Some(product.terms().as_str()) {
        OrderError::SoldOut
    } else {
        OrderError::ProductChanged
    }
}

/// Places `order` of `product` (as read): the order (only while its id, its key's, is free), the
/// product's stock (only under the terms read, with a unit left when it has a stock), the fan's
/// count (only under the limit, when it has one) and, paid with Cash, the debit of the balance
/// (only while it covers the price), its ledger entry naming the order, the grant (a cosmetic
/// owned) and the events, all in one transaction. By card, the same transaction takes one of the
/// fan's pending-session slots (shared with top-ups, only while they are as read), freed when
/// the order completes or closes, or when its session expires. Any number of concurrent orders
/// with one key place it once; all of them answer that order, whatever the slots.
pub trait PlaceOrder: Send + Sync {
    fn place_order(
        &self,
        order: &Order,
        product: &Product,
    ) -> impl Future<Output = Result<Placed, OrderError>> + Send;
}

/// What completing a card order did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompletedOrder {
    /// Completed now, and granted in the same transaction.
    Completed(Order),
    /// Completed before (a redelivery, or a concurrent one): that order, nothing changed.
    AlreadyCompleted(Order),
}

/// Why a card order was not completed (nothing was written).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompleteOrderError {
    #[error("no such order")]
    NotFound,
    /// Closed unpaid (failed or expired): its unit and allowance went back.
    #[error("the order is {0:?}, not pending")]
    Closed(domain::products::order::OrderStatus),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Completes a pending card order once paid, in one transaction: the order `completed` (only
/// while pending), its grant (a bundle's credit of `amount + bonus` under `order:<orderId>`, or
/// the cosmetic owned) and its events; then frees its pending slot (best effort). Any number of
/// concurrent or repeated completions grant once; all of them answer the completed order.
pub trait CompleteOrder: Send + Sync {
    fn complete_order(
        &self,
        order: &Order,
        at: domain::timestamp::Timestamp,
    ) -> impl Future<Output = Result<CompletedOrder, CompleteOrderError>> + Send;
}

/// Stores a card order's Checkout Session, only while the order has none or has this one (one
/// conditional update); answers the order as stored after it (with the session stored first,
/// when another request stored one), as [`crate::topups::SetCheckout`] does for a top-up.
pub trait SetOrderCheckout: Send + Sync {
    fn set_order_checkout(
        &self,
        user_id: &UserId,
        order_id: &OrderId,
        checkout: &Checkout,
    ) -> impl Future<Output = Result<Order, StoreError>> + Send;
}

/// Closes a pending card order unpaid (`status`: `Failed` or `Expired`) and gives back what it
/// took ([`Took`](domain::products::order::Took)), in one transaction: the order closed (only
/// while pending and of the session `session_id`), its `sold` less one and, where the stock has
/// units left, one more of them, and the fan's count less one when it took one. A completed
/// order is final; of a completion and a close racing, or of repeated closes, exactly one wins.
/// Then frees its pending slot (best effort, as a completion does). The closed order, or `None`
/// when nothing changed (not pending, another session, no such order).
pub trait CloseOrder: Send + Sync {
    fn close_order(
        &self,
        order: &Order,
        session_id: &str,
        status: OrderStatus,
    ) -> impl Future<Output = Result<Option<Order>, StoreError>> + Send;
}

/// A fan's order, and a page of their orders, newest first (`after`: the list key the page
/// before ended on).
pub trait GetOrders: Send + Sync {
    fn get_order(
        &self,
        user_id: &UserId,
        order_id: &OrderId,
    ) -> impl Future<Output = Result<Option<Order>, StoreError>> + Send;

    fn list_orders(
        &self,
        user_id: &UserId,
        limit: usize,
        after: Option<&str>,
    ) -> impl Future<Output = Result<Page<Order>, StoreError>> + Send;
}

/// Why equipping was refused (nothing was written).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EquipError {
    /// The fan does not own this cosmetic for this slot.
    #[error("the cosmetic is not owned for its slot")]
    NotOwned(Slot),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A fan's cosmetics: what they own (one Query) and equip (one item), and equipping, each
/// cosmetic checked owned for its slot in the same transaction.
pub trait FanCosmetics: Send + Sync {
    fn owned_cosmetics(
        &self,
        user_id: &UserId,
    ) -> impl Future<Output = Result<Vec<(ProductId, Slot)>, StoreError>> + Send;

    fn equipped(
        &self,
        user_id: &UserId,
    ) -> impl Future<Output = Result<Equipped, StoreError>> + Send;

    fn equip(
        &self,
        user_id: &UserId,
        equipped: &Equipped,
    ) -> impl Future<Output = Result<(), EquipError>> + Send;
}

/// Every products operation.
pub trait ProductStore:
    SeedProducts
    + ListProducts
    + GetProduct
    + PlaceOrder
    + SetOrderCheckout
    + CompleteOrder
    + CloseOrder
    + GetOrders
    + FanCosmetics
{
}
impl<
    S: SeedProducts
        + ListProducts
        + GetProduct
        + PlaceOrder
        + SetOrderCheckout
        + CompleteOrder
        + CloseOrder
        + GetOrders
        + FanCosmetics,
> ProductStore for S
{
}

/// The answer to a completion whose order was not pending, the same in both stores.
pub fn not_pending(existing: Option<Order>) -> Result<CompletedOrder, CompleteOrderError> {
    match existing {
        None => Err(CompleteOrderError::NotFound),
        Some(order) if order.status == OrderStatus::Completed => {
            Ok(CompletedOrder::AlreadyCompleted(order))
        }
        Some(order) => Err(CompleteOrderError::Closed(order.status)),
    }
}
