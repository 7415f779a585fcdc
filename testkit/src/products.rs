//! Products for the card path's tests: a product paid by card, with its grant, stock and
//! per-fan limit, and an order of it placed now.

use domain::cash::Money;
use domain::ids::ProductId;
use domain::products::order::{Order, order_id};
use domain::products::{Grant, PayMethod, Product, ProductStatus, ProductType, Slot};
use domain::timestamp::Timestamp;

/// An active product `id` named `Product <id>`, sold at `price` USD cents by card, granting
/// `grants`, with `stock` and `max_per_fan`.
pub fn by_card(
    id: &str,
    (price, grants): (u64, Grant),
    stock: Option<u64>,
    max_per_fan: Option<u32>,
) -> Product {
    Product {
        id: ProductId::parse(id).unwrap(),
        product_type: match grants {
            Grant::Cash { .. } => ProductType::CashBundle,
            Grant::Cosmetic { .. } => ProductType::Cosmetic,
        },
        name: format!("Product {id}"),
        description: String::new(),
        image_url: None,
        prices: vec![Money {
            amount: price,
            currency: "USD".into(),
        }],
        grants,
        pay: vec![PayMethod::Card],
        status: ProductStatus::Active,
        sale_starts_at: None,
        sale_ends_at: None,
        max_per_fan,
        stock,
    }
}

/// An avatar frame's grant.
pub fn frame() -> Grant {
    Grant::Cosmetic {
        slot: Slot::AvatarFrame,
    }
}

/// A card order by `fan` with the key `key` of `product` at its first price, placed now.
pub fn card_order(fan: &str, key: &str, product: &Product) -> Order {
    let fan = crate::ids::user(fan);
    let price = product.prices[0].clone();
    let id = order_id(&fan, key);
    Order::place(id, fan, product, price, PayMethod::Card, Timestamp::now())
}
