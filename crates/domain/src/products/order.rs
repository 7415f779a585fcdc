//! An order of a product: placed with an `Idempotency-Key`, paid with Cash (completed in the
//! one transaction that debits the fan, takes the stock and the fan's allowance and grants the
//! product) or by card (pending, with its stock and allowance taken, until Stripe's signed
//! webhook completes it and grants the product once).
//!
//! An order keeps what it was sold as: the product's name, type, price and grant when placed.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};
use strum::{EnumString, IntoStaticStr, VariantArray};

use super::{Grant, PayMethod, Product, ProductType};
use crate::cash::{Credit, Money};
use crate::ids::{OrderId, ProductId, UserId};
use crate::timestamp::{Timestamp, time_key};
use crate::topups::Checkout;

/// The references of bundles' credits (`order:<orderId>`): `cash-credit` refuses them, so an
/// order's one credit cannot be taken by an operator's.
pub const ORDER_REFERENCE_PREFIX: &str = "order:";

/// Where an order is.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    utoipa::ToSchema,
    IntoStaticStr,
    EnumString,
    VariantArray,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum OrderStatus {
    /// Paid by card, not (yet) paid: its stock and the fan's allowance are held.
    Pending,
    /// Paid and granted: final.
    Completed,
    /// The card payment failed: its stock and allowance went back.
    Failed,
    /// The Checkout Session expired unpaid: its stock and allowance went back.
    Expired,
}

impl OrderStatus {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// What an order took when placed besides its `sold` count: a unit of the product's stock and a
/// count toward the fan's limit, each when the product had one. Recorded on the order, since the
/// product may be re-seeded while a card order is pending, and closing it unpaid gives back what
/// it took, not what the product has now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Took {
    pub unit: bool,
    pub count: bool,
}

/// An order as stored: what was bought, as it was sold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Order {
    pub id: OrderId,
    pub user_id: UserId,
    pub product_id: ProductId,
    pub product_type: ProductType,
    pub product_name: String,
    pub price: Money,
    pub grants: Grant,
    pub pay: PayMethod,
    pub status: OrderStatus,
    pub took: Took,
    /// A card order's Checkout Session, once Stripe made one.
    pub checkout: Option<Checkout>,
    pub created_at: Timestamp,
    pub completed_at: Option<Timestamp>,
}

/// The id of the order a user places with an idempotency key (22 base64url characters of
/// SHA-256); its own domain tag, so it never shares an id with a purchase or a top-up.
pub fn order_id(user_id: &UserId, idempotency_key: &str) -> OrderId {
    let digest = aws_lc_rs::digest::digest(
        &aws_lc_rs::digest::SHA256,
        format!("order-v1\n{user_id}\n{idempotency_key}").as_bytes(),
    );
    OrderId::parse(URL_SAFE_NO_PAD.encode(&digest.as_ref()[..16]))
        .expect("22 base64url characters are an id")
}

/// The ledger reference of a bundle order's credit: one per order.
pub fn credit_reference(id: &OrderId) -> String {
    format!("{ORDER_REFERENCE_PREFIX}{id}")
}

/// The order a credit's reference names, when it is an order's.
pub fn order_of_reference(reference: &str) -> Option<OrderId> {
    OrderId::parse(reference.strip_prefix(ORDER_REFERENCE_PREFIX)?).ok()
}

/// Why an order is refused before anything is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum OrderRefusal {
    #[error("no such product")]
    ProductNotFound,
    #[error("the product is not on sale")]
    NotOnSale,
    #[error("the product cannot be paid this way")]
    PayNotAccepted,
    #[error("the product has no price in this currency")]
    CurrencyNotOffered,
}

/// What an order of `product` paid with `pay` in `currency` costs at `now`, or why it cannot be
/// placed. The stock, the fan's allowance and their balance are the store's to check, in the
/// order's own write.
pub fn check_order<'p>(
    product: Option<&'p Product>,
    pay: PayMethod,
    currency: &str,
    now: Timestamp,
) -> Result<&'p Money, OrderRefusal> {
    let product = product.ok_or(OrderRefusal::ProductNotFound)?;
    if !product.on_sale_at(now) {
        return Err(OrderRefusal::NotOnSale);
    }
    if !product.pay.contains(&pay) {
        return Err(OrderRefusal::PayNotAccepted);
    }
    product
        .price_in(currency)
        .ok_or(OrderRefusal::CurrencyNotOffered)
}

impl Order {
    /// A new order of `product` at `price`: completed when paid with Cash (the store writes it
    /// in the completing transaction), pending by card.
    pub fn place(
        id: OrderId,
        user_id: UserId,
        product: &Product,
        price: Money,
        pay: PayMethod,
        now: Timestamp,
    ) -> Self {
        let cash = pay == PayMethod::Cash;
        Self {
            id,
            user_id,
            product_id: product.id.clone(),
            product_type: product.product_type,
            product_name: product.name.clone(),
            price,
            grants: product.grants.clone(),
            pay,
            status: if cash {
                OrderStatus::Completed
            } else {
                OrderStatus::Pending
            },
            took: Took {
                unit: product.stock.is_some(),
                count: product.max_per_fan.is_some(),
            },
            checkout: None,
            created_at: now,
            completed_at: cash.then_some(now),
        }
    }

    /// Whether a repeat of the key that placed this order asks for the same one (else the key
    /// is reused for another: 422).
    pub fn is_repeated_by(&self, other: &Order) -> bool {
        self.product_id == other.product_id
            && self.pay == other.pay
            && self.price.currency == other.price.currency
    }

    /// The credit a bundle's order makes when completed: `amount + bonus`, once per order.
    pub fn credit(&self) -> Option<Credit> {
        self.grants.cash().map(|amount| Credit {
            user_id: self.user_id.clone(),
            amount,
            reference: credit_reference(&self.id),
        })
    }

    /// Its key in the fan's list of orders: time order, then id.
    pub fn list_key(&self) -> String {
        time_key(self.created_at, self.id.as_str())
    }

    /// When a card order's Checkout Session expires (and its pending slot frees itself), as a
    /// top-up's does.
    pub fn expires_at(&self) -> Timestamp {
        crate::topups::pending::session_expires_at(self.created_at)
    }

    /// The order closed unpaid (`Failed` or `Expired`).
    pub fn closed(&self, status: OrderStatus) -> Self {
        Self {
            status,
            ..self.clone()
        }
    }

    /// The order completed at `at` (its card payment confirmed).
    pub fn completed(&self, at: Timestamp) -> Self {
        Self {
            status: OrderStatus::Completed,
            completed_at: Some(at),
            ..self.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::products::fixtures::{bundle, cosmetic};

    fn user(id: &str) -> UserId {
        UserId::parse(id).unwrap()
    }

    fn ts(text: &str) -> Timestamp {
        Timestamp::parse(text).unwrap()
    }

    #[test]
    fn order_ids_are_stable_per_user_and_key_and_differ_from_other_ids() {
        let id = order_id(&user("u1"), "k");
        assert_eq!(id, order_id(&user("u1"), "k"));
        assert_ne!(id, order_id(&user("u2"), "k"));
        assert_ne!(id, order_id(&user("u1"), "k2"));
        assert_ne!(
            id.as_str(),
            crate::topups::top_up_id(&user("u1"), "k").as_str()
        );
        assert_eq!(order_of_reference(&credit_reference(&id)), Some(id));
        assert_eq!(order_of_reference("topup:abc"), None);
    }

    #[test]
    fn an_order_is_checked_for_sale_method_and_currency() {
        let now = ts("2026-06-01T00:00:00Z");
        let product = cosmetic("c");
        assert_eq!(
            check_order(Some(&product), PayMethod::Cash, "USD", now).map(|m| m.amount),
            Ok(299)
        );
        assert_eq!(
            check_order(None, PayMethod::Cash, "USD", now),
            Err(OrderRefusal::ProductNotFound)
        );
        assert_eq!(
            check_order(Some(&product), PayMethod::Cash, "EUR", now),
            Err(OrderRefusal::CurrencyNotOffered)
        );
        assert_eq!(
            check_order(
                Some(&product),
                PayMethod::Cash,
                "USD",
                ts("2025-01-01T00:00:00Z")
            ),
            Err(OrderRefusal::NotOnSale)
        );
        assert_eq!(
            check_order(Some(&bundle("b")), PayMethod::Cash, "USD", now),
            Err(OrderRefusal::PayNotAccepted),
            "a Cash bundle cannot be paid with Cash"
        );
    }

    #[test]
    fn an_order_keeps_what_it_was_sold_as() {
        let now = ts("2026-06-01T00:00:00Z");
        let mut product = bundle("b");
        let price = product.prices[0].clone();
        let order = Order::place(
            order_id(&user("u"), "k"),
            user("u"),
            &product,
            price,
            PayMethod::Card,
            now,
        );
        assert_eq!(order.status, OrderStatus::Pending);
        product.prices[0].amount = 1;
        product.name = "Renamed".into();
        assert_eq!(
            (order.price.amount, order.product_name.as_str()),
            (999, "Starter Cash")
        );
        let credit = order.credit().unwrap();
        assert_eq!(credit.amount.amount, 1100, "amount plus bonus");
        assert_eq!(credit.reference, format!("order:{}", order.id));
        let done = order.completed(now);
        assert_eq!(
            (done.status, done.completed_at),
            (OrderStatus::Completed, Some(now))
        );
    }
}
