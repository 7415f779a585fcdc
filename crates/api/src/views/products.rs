//! A product as the catalogue lists it, an order as its fan reads it, and a fan's equipped
//! cosmetics (issue 48).

use serde::Serialize;
use utoipa::ToSchema;

use crate::openapi::schemas::Id;
use domain::cash::Money;
use domain::products::cosmetics::Equipped;
use domain::products::order::{Order, OrderStatus};
use domain::products::{Grant, PayMethod, Product, ProductType, Slot};
use domain::timestamp::Timestamp;

/// A product on sale (or coming): what it costs in each currency, what it grants, how it may be
/// paid, its sale window, and its per-fan limit and stock when it has them.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = Product)]
pub struct ProductJson<'a> {
    #[schema(value_type = Id)]
    id: &'a str,
    #[serde(rename = "type")]
    product_type: ProductType,
    name: &'a str,
    description: &'a str,
    #[schema(format = "uri", required)]
    image_url: Option<&'a str>,
    /// One price per currency, in minor units.
    prices: &'a [Money],
    grants: &'a Grant,
    /// How it may be paid: `cash` (from the fan's balance in the price's currency) and/or `card`
    /// (Stripe Checkout). A `cash_bundle` is paid by card only.
    pay: &'a [PayMethod],
    /// Sold from then on (`null`: already).
    #[schema(required)]
    sale_starts_at: Option<Timestamp>,
    /// Sold until then (`null`: no end).
    #[schema(required)]
    sale_ends_at: Option<Timestamp>,
    /// The most orders one fan may place of it (`null`: no limit).
    #[schema(required, minimum = 1)]
    max_per_fan: Option<u32>,
    /// The most orders all fans together may place of it (`null`: no stock).
    #[schema(required)]
    stock: Option<u64>,
}

impl<'a> ProductJson<'a> {
    pub fn of(product: &'a Product) -> Self {
        Self {
            id: product.id.as_str(),
            product_type: product.product_type,
            name: &product.name,
            description: &product.description,
            image_url: product.image_url.as_deref(),
            prices: &product.prices,
            grants: &product.grants,
            pay: &product.pay,
            sale_starts_at: product.sale_starts_at,
            sale_ends_at: product.sale_ends_at,
            max_per_fan: product.max_per_fan,
            stock: product.stock,
        }
    }
}

/// An order, as it was sold: the product's name, the price and the grant when it was placed.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = Order)]
pub struct OrderJson<'a> {
    #[schema(value_type = Id)]
    id: &'a str,
    #[schema(value_type = Id)]
    product_id: &'a str,
    product_type: ProductType,
    product_name: &'a str,
    price: &'a Money,
    grants: &'a Grant,
    pay: PayMethod,
    status: OrderStatus,
    /// A card order's Stripe Checkout page (`null` for Cash, and while Stripe could not be
    /// reached).
    #[schema(required)]
    checkout_url: Option<&'a str>,
    created_at: Timestamp,
    #[schema(required)]
    completed_at: Option<Timestamp>,
}

impl<'a> OrderJson<'a> {
    pub fn of(order: &'a Order) -> Self {
        Self {
            id: order.id.as_str(),
            product_id: order.product_id.as_str(),
            product_type: order.product_type,
            product_name: &order.product_name,
            price: &order.price,
            grants: &order.grants,
            pay: order.pay,
            status: order.status,
            checkout_url: order.checkout.as_ref().map(|c| c.url.as_str()),
            created_at: order.created_at,
            completed_at: order.completed_at,
        }
    }
}

/// The cosmetics a fan shows, by slot (`null`: nothing in it).
#[derive(Serialize, ToSchema, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = Cosmetics)]
pub struct CosmeticsJson<'a> {
    #[schema(value_type = Option<Id>, required)]
    avatar_frame: Option<&'a str>,
    #[schema(value_type = Option<Id>, required)]
    locker_theme: Option<&'a str>,
    #[schema(value_type = Option<Id>, required)]
    badge: Option<&'a str>,
}

impl<'a> CosmeticsJson<'a> {
    pub fn of(equipped: &'a Equipped) -> Self {
        let slot = |slot: Slot| equipped.in_slot(slot).map(|id| id.as_str());
        Self {
            avatar_frame: slot(Slot::AvatarFrame),
            locker_theme: slot(Slot::LockerTheme),
            badge: slot(Slot::Badge),
        }
    }
}
