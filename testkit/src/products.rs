//! The shipped products (`infra/seed/products.json`), products with a given stock and per-fan
//! limit, and what a fan's orders left in their ledger.

use domain::cash::ledger::EntryKind;
use domain::ids::ProductId;
use domain::products::Product;
use domain::products::seed::parse_products;
use store::cash::{GetBalance, ListLedger};
use store::products::SeedProducts;

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

/// `fan`'s debits in `currency` (their ledger's), as (amount, order id).
pub async fn debits<S: ListLedger>(store: &S, fan: &str, currency: &str) -> Vec<(u64, String)> {
    crate::mine::ledger(store, fan, Some(currency), 10)
        .await
        .into_iter()
        .filter(|entry| entry.kind == EntryKind::Debit)
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
