//! Products for the tests: the shipped ones (`infra/seed/products.json`), one with a given stock
//! and per-fan limit, a product paid by card with its grant and an order of it placed now; and
//! what a fan's orders left in their ledger.

use domain::cash::Money;
use domain::cash::ledger::EntryKind;
use domain::ids::ProductId;
use domain::products::order::{Order, order_id};
use domain::products::seed::parse_products;
use domain::products::{Grant, PayMethod, Product, ProductStatus, ProductType, Slot};
use domain::timestamp::Timestamp;
use store::cash::{GetBalance, ListLedger};
use store::products::SeedProducts;

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

/// The products `scripts/local` and `seed-packs` load.
pub fn shipped() -> Vec<Product> {
    parse_products(include_bytes!("../../infra/seed/products.json")).unwrap()
}

/// Seeds `products` (checked as the seed file's are).
pub async fn seed<S: SeedProducts>(store: &S, products: &[Product]) {
    for product in products {
        product.validate().expect("a valid product");
    }
    store.seed_products(products).await.unwrap();
}

/// The shipped `frame-gold` (a cosmetic of 299 USD, paid with Cash or a card) as `id`, with
/// this `stock` and `max_per_fan`.
pub fn limited(id: &str, stock: Option<u64>, max_per_fan: Option<u32>) -> Product {
    let frame = shipped()
        .into_iter()
        .find(|product| product.id.as_str() == "frame-gold")
        .expect("the shipped frame-gold");
    Product {
        id: ProductId::parse(id).expect("a product id"),
        stock,
        max_per_fan,
        ..frame
    }
}

/// `fan`'s entries of `kind` in `currency` (their ledger's), as (amount, order id or `""`).
pub async fn entries<S: ListLedger>(
    store: &S,
    fan: &str,
    currency: &str,
    kind: EntryKind,
) -> Vec<(u64, String)> {
    crate::mine::ledger(store, fan, Some(currency), 10)
        .await
        .into_iter()
        .filter(|entry| entry.kind == kind)
        .map(|entry| {
            let order = entry.order_id.map(|id| id.to_string()).unwrap_or_default();
            (entry.amount.amount, order)
        })
        .collect()
}

/// `fan`'s balance in `currency`, checked equal to what their ledger adds up to.
pub async fn balance_matching_ledger<S: GetBalance + ListLedger>(
    store: &S,
    fan: &str,
    currency: &str,
) -> u64 {
    let balance = store
        .get_balance(&crate::ids::user(fan), currency)
        .await
        .unwrap();
    assert_eq!(
        i128::from(balance),
        crate::mine::ledger_sum(store, fan, currency).await,
        "{fan}'s ledger in {currency} adds up to the balance"
    );
    balance
}
