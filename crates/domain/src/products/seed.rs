//! The products seed file: a JSON array of products, in the API's shape. Every product is
//! checked before anything is written; a bad one is named by its position, its id and the field,
//! as the packs' seed file's are.
//!
//! Re-seeding a product replaces it whole: an order keeps the price, grant and name it was
//! placed at, the units sold and each fan's count stay with the stock and allowance items, so a
//! re-seed changes what later orders pay, and a stock lowered below what was sold sells nothing
//! more.

pub use crate::packs::seed::SeedError;
use crate::packs::seed::parse_file;
use crate::products::Product;

/// Parses and validates a whole products file.
pub fn parse_products(json: &[u8]) -> Result<Vec<Product>, SeedError> {
    parse_file(json, "product", Product::validate, |product| {
        product.id.to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::products::fixtures::{bundle, cosmetic};
    use crate::products::{PayMethod, ProductType};

    fn file(products: serde_json::Value) -> Vec<u8> {
        products.to_string().into_bytes()
    }

    #[test]
    fn the_shipped_seed_file_is_valid_with_a_few_of_each_type() {
        let products =
            parse_products(include_bytes!("../../../../infra/seed/products.json")).unwrap();
        for kind in [ProductType::CashBundle, ProductType::Cosmetic] {
            assert!(
                products.iter().filter(|p| p.product_type == kind).count() >= 2,
                "{kind:?}"
            );
        }
        assert!(
            products.iter().any(|p| p.stock.is_some()
                && p.max_per_fan.is_some()
                && p.pay.contains(&PayMethod::Cash)),
            "a limited cosmetic sold for Cash, for scripts/local"
        );
    }

    #[test]
    fn errors_name_the_product_and_field() {
        let mut bad = serde_json::to_value(cosmetic("b")).unwrap();
        bad["prices"][0]["amount"] = "2.99".into();
        let error = parse_products(&file(serde_json::json!([cosmetic("a"), bad]))).unwrap_err();
        assert!(
            error.to_string().contains("[1].prices[0].amount"),
            "{error}"
        );

        let mut bad = bundle("c");
        bad.pay.push(PayMethod::Cash);
        let error = parse_products(&file(serde_json::json!([cosmetic("a"), bad]))).unwrap_err();
        assert_eq!(
            error.to_string(),
            "product [1] (c): pay: a cash_bundle can only be paid by card"
        );

        let error =
            parse_products(&file(serde_json::json!([cosmetic("a"), bundle("a")]))).unwrap_err();
        assert_eq!(
            error,
            SeedError::DuplicateId {
                noun: "product",
                index: 1,
                first: 0,
                id: "a".into()
            }
        );
        let mut unknown = serde_json::to_value(cosmetic("d")).unwrap();
        unknown["colour"] = "red".into();
        assert!(parse_products(&file(serde_json::json!([unknown]))).is_err());
        assert!(
            parse_products(b"{}")
                .unwrap_err()
                .to_string()
                .starts_with("file:")
        );
    }
}
