//! The store's products beyond packs (issue 48): Cash bundles and cosmetics, each with its
//! prices per currency in minor units, what it grants, how it may be paid, a sale window, and
//! optionally a stock and a per-fan limit.
//!
//! As Stripe splits a product from its prices, an order keeps the price, the grant and the name
//! as they were when it was placed ([`order::Order`]): re-seeding a product changes what later
//! orders pay, never an order placed. Cash never expires (App Store guideline 3.1.1), and a
//! bundle's bonus is Cash like any other: one credit of `amount + bonus`.
//!
//! - [`order`]: an order, its id per `Idempotency-Key`, the checks before anything is written,
//!   and the ledger entries and events it makes.
//! - [`seed`]: the operator's seed file (`infra/seed/products.json`), checked whole.
//! - [`cosmetics`]: what a fan equips, one per slot.

pub mod cosmetics;
pub mod order;
pub mod seed;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};
use strum::{EnumString, IntoStaticStr, VariantArray};
use utoipa::ToSchema;

use crate::cash::{MAX_CREDIT, Money, is_currency};
use crate::ids::ProductId;
use crate::packs::{FieldError, MAX_NAME_CHARS, check_image_url, check_text, field_error};
use crate::timestamp::Timestamp;

/// The most prices (currencies) a product has.
pub const MAX_PRICES: usize = 8;
/// The largest stock a product may have.
pub const MAX_STOCK: u64 = 1_000_000_000;

/// What a product is.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    ToSchema,
    IntoStaticStr,
    EnumString,
    VariantArray,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum ProductType {
    /// Cash in a currency, with an optional bonus; paid by card only.
    CashBundle,
    /// A cosmetic shown on the fan's public face, in one slot.
    Cosmetic,
}

/// Where a cosmetic shows: a fan equips one per slot.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    ToSchema,
    IntoStaticStr,
    EnumString,
    VariantArray,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Slot {
    AvatarFrame,
    LockerTheme,
    Badge,
}

impl Slot {
    /// Every slot.
    pub const ALL: [Slot; 3] = [Slot::AvatarFrame, Slot::LockerTheme, Slot::Badge];

    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// How an order is paid.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    ToSchema,
    IntoStaticStr,
    EnumString,
    VariantArray,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum PayMethod {
    /// From the fan's Cash balance in the price's currency, at once.
    Cash,
    /// On Stripe's hosted Checkout page; granted when its signed webhook says it was paid.
    Card,
}

impl PayMethod {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// Whether a product is offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProductStatus {
    Active,
    /// Not listed, not sold; its orders stay.
    Archived,
}

/// What a product grants when its order completes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Grant {
    /// `amount + bonus` of Cash in `currency`, credited at once (a bonus is Cash like any other).
    Cash {
        amount: u64,
        bonus: u64,
        #[schema(value_type = crate::json_schema::Currency)]
        currency: String,
    },
    /// The product itself, owned, shown in `slot` once equipped.
    Cosmetic { slot: Slot },
}

impl Grant {
    /// The Cash this grant credits, `None` for a cosmetic.
    pub fn cash(&self) -> Option<Money> {
        match self {
            Grant::Cash {
                amount,
                bonus,
                currency,
            } => Some(Money {
                amount: amount + bonus,
                currency: currency.clone(),
            }),
            Grant::Cosmetic { .. } => None,
        }
    }

    /// A cosmetic's slot, `None` for Cash.
    pub fn slot(&self) -> Option<Slot> {
        match self {
            Grant::Cosmetic { slot } => Some(*slot),
            Grant::Cash { .. } => None,
        }
    }
}

/// A product as seeded, stored and listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Product {
    pub id: ProductId,
    #[serde(rename = "type")]
    pub product_type: ProductType,
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub image_url: Option<String>,
    /// One price per currency, in minor units.
    pub prices: Vec<Money>,
    pub grants: Grant,
    /// How it may be paid.
    pub pay: Vec<PayMethod>,
    pub status: ProductStatus,
    #[serde(default)]
    pub sale_starts_at: Option<Timestamp>,
    #[serde(default)]
    pub sale_ends_at: Option<Timestamp>,
    /// The most orders one fan may place (completed, or pending by card); `None`: no limit.
    #[serde(default)]
    pub max_per_fan: Option<u32>,
    /// The most orders all fans together may place; `None`: no stock.
    #[serde(default)]
    pub stock: Option<u64>,
}

impl Product {
    /// The rules a product must keep, naming the field that breaks one.
    pub fn validate(&self) -> Result<(), FieldError> {
        check_text("name", &self.name, MAX_NAME_CHARS)?;
        if self.description.chars().count() > 2000 {
            return Err(field_error(
                "description",
                "must be at most 2000 characters",
            ));
        }
        check_image_url("imageUrl", self.image_url.as_deref(), &["https"])?;
        self.validate_prices()?;
        self.validate_grant()?;
        if self.pay.is_empty() {
            return Err(field_error("pay", "must name at least one of cash, card"));
        }
        if let Some(repeat) = (1..self.pay.len()).find(|&i| self.pay[..i].contains(&self.pay[i])) {
            return Err(field_error(
                format!("pay[{repeat}]"),
                "must not repeat a method",
            ));
        }
        if let (Some(starts), Some(ends)) = (self.sale_starts_at, self.sale_ends_at)
            && ends <= starts
        {
            return Err(field_error("saleEndsAt", "must be after saleStartsAt"));
        }
        if self.max_per_fan == Some(0) {
            return Err(field_error(
                "maxPerFan",
                "must be at least 1, or null for no limit",
            ));
        }
        if self.stock.is_some_and(|stock| stock > MAX_STOCK) {
            return Err(field_error(
                "stock",
                format!("must be at most {MAX_STOCK}, or null for no stock"),
            ));
        }
        Ok(())
    }

    fn validate_prices(&self) -> Result<(), FieldError> {
        if !(1..=MAX_PRICES).contains(&self.prices.len()) {
            return Err(field_error(
                "prices",
                format!("must hold 1-{MAX_PRICES} prices"),
            ));
        }
        for (index, price) in self.prices.iter().enumerate() {
            if !is_currency(&price.currency) {
                return Err(field_error(
                    format!("prices[{index}].currency"),
                    "must be an ISO 4217 code of 3 uppercase letters",
                ));
            }
            if self.prices[..index]
                .iter()
                .any(|earlier| earlier.currency == price.currency)
            {
                return Err(field_error(
                    format!("prices[{index}].currency"),
                    "must not repeat a currency",
                ));
            }
            if !(1..=MAX_CREDIT).contains(&price.amount) {
                return Err(field_error(
                    format!("prices[{index}].amount"),
                    format!("must be 1-{MAX_CREDIT} minor units"),
                ));
            }
        }
        Ok(())
    }

    fn validate_grant(&self) -> Result<(), FieldError> {
        match (&self.product_type, &self.grants) {
            (
                ProductType::CashBundle,
                Grant::Cash {
                    amount,
                    bonus,
                    currency,
                },
            ) => {
                if !is_currency(currency) {
                    return Err(field_error(
                        "grants.currency",
                        "must be an ISO 4217 code of 3 uppercase letters",
                    ));
                }
                if *amount == 0 || amount.saturating_add(*bonus) > MAX_CREDIT {
                    return Err(field_error(
                        "grants.amount",
                        format!("must be at least 1, and amount + bonus at most {MAX_CREDIT}"),
                    ));
                }
                // Cash bought with Cash would only move Cash around (and a bonus would mint it).
                if self.pay.contains(&PayMethod::Cash) {
                    return Err(field_error("pay", "a cash_bundle can only be paid by card"));
                }
                Ok(())
            }
            (ProductType::Cosmetic, Grant::Cosmetic { .. }) => Ok(()),
            (ProductType::CashBundle, _) => {
                Err(field_error("grants.kind", "must be cash for a cash_bundle"))
            }
            (ProductType::Cosmetic, _) => Err(field_error(
                "grants.kind",
                "must be cosmetic for a cosmetic",
            )),
        }
    }

    /// Its price in `currency`, if it has one.
    pub fn price_in(&self, currency: &str) -> Option<&Money> {
        self.prices.iter().find(|price| price.currency == currency)
    }

    /// Whether it sells at `now`: active, its sale started (or no start) and not ended.
    pub fn on_sale_at(&self, now: Timestamp) -> bool {
        self.status == ProductStatus::Active
            && self.sale_starts_at.is_none_or(|starts| starts <= now)
            && self.sale_ends_at.is_none_or(|ends| now < ends)
    }

    /// Whether it is listed at `now`: active and its sale not ended (a coming sale is shown).
    pub fn listed_at(&self, now: Timestamp) -> bool {
        self.status == ProductStatus::Active && self.sale_ends_at.is_none_or(|ends| now < ends)
    }

    /// A digest of everything an order decides on (22 base64url characters of SHA-256 over its
    /// JSON): an order is written only while the stored product still has it, so a re-seed
    /// between an order's read and its write makes the order read again.
    pub fn terms(&self) -> String {
        let json = serde_json::to_vec(self).expect("a product serialises");
        let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, &json);
        URL_SAFE_NO_PAD.encode(&digest.as_ref()[..16])
    }
}

#[cfg(test)]
pub(crate) mod fixtures {
    use super::*;

    /// An active cosmetic on sale since 2026-01-01, paid with Cash or a card.
    pub fn cosmetic(id: &str) -> Product {
        Product {
            id: ProductId::parse(id).unwrap(),
            product_type: ProductType::Cosmetic,
            name: "Gold Frame".into(),
            description: "A frame of gold.".into(),
            image_url: Some("https://cdn.fan-api.example/products/gold-frame.png".into()),
            prices: vec![Money {
                amount: 299,
                currency: "USD".into(),
            }],
            grants: Grant::Cosmetic {
                slot: Slot::AvatarFrame,
            },
            pay: vec![PayMethod::Cash, PayMethod::Card],
            status: ProductStatus::Active,
            sale_starts_at: Some(Timestamp::parse("2026-01-01T00:00:00Z").unwrap()),
            sale_ends_at: None,
            max_per_fan: Some(1),
            stock: Some(100),
        }
    }

    /// A Cash bundle: 1,000 USD cents plus 100 of bonus, for 999 by card.
    pub fn bundle(id: &str) -> Product {
        Product {
            product_type: ProductType::CashBundle,
            name: "Starter Cash".into(),
            prices: vec![Money {
                amount: 999,
                currency: "USD".into(),
            }],
            grants: Grant::Cash {
                amount: 1000,
                bonus: 100,
                currency: "USD".into(),
            },
            pay: vec![PayMethod::Card],
            max_per_fan: None,
            stock: None,
            ..cosmetic(id)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::{bundle, cosmetic};
    use super::*;

    fn ts(text: &str) -> Timestamp {
        Timestamp::parse(text).unwrap()
    }

    #[test]
    fn the_fixtures_are_valid_and_a_bundle_grants_amount_and_bonus_as_one_credit() {
        cosmetic("c").validate().unwrap();
        bundle("b").validate().unwrap();
        assert_eq!(
            bundle("b").grants.cash(),
            Some(Money {
                amount: 1100,
                currency: "USD".into()
            })
        );
        assert_eq!(cosmetic("c").grants.cash(), None);
        assert_eq!(cosmetic("c").grants.slot(), Some(Slot::AvatarFrame));
    }

    #[test]
    fn each_rule_names_its_field() {
        type Change = fn(&mut Product);
        let cases: [(&str, Change); 14] = [
            ("name", |p| p.name = " ".into()),
            ("imageUrl", |p| {
                p.image_url = Some("http://x.example/a.png".into())
            }),
            ("prices", |p| p.prices.clear()),
            ("prices[0].currency", |p| {
                p.prices[0].currency = "usd".into()
            }),
            ("prices[1].currency", |p| p.prices.push(p.prices[0].clone())),
            ("prices[0].amount", |p| p.prices[0].amount = 0),
            ("pay", |p| p.pay.clear()),
            ("pay[1]", |p| p.pay = vec![PayMethod::Card, PayMethod::Card]),
            ("saleEndsAt", |p| p.sale_ends_at = p.sale_starts_at),
            ("maxPerFan", |p| p.max_per_fan = Some(0)),
            ("stock", |p| p.stock = Some(MAX_STOCK + 1)),
            ("grants.kind", |p| p.product_type = ProductType::CashBundle),
            ("pay", |p| {
                *p = bundle("b");
                p.pay = vec![PayMethod::Cash];
            }),
            ("grants.amount", |p| {
                *p = bundle("b");
                p.grants = Grant::Cash {
                    amount: MAX_CREDIT,
                    bonus: 1,
                    currency: "USD".into(),
                };
            }),
        ];
        for (field, change) in cases {
            let mut product = cosmetic("c");
            change(&mut product);
            assert_eq!(product.validate().unwrap_err().field, field, "{product:?}");
        }
    }

    #[test]
    fn a_product_sells_within_its_window_and_shows_until_its_end() {
        let mut product = cosmetic("c");
        product.sale_ends_at = Some(ts("2026-02-01T00:00:00Z"));
        assert!(!product.on_sale_at(ts("2025-12-31T23:59:59Z")));
        assert!(product.listed_at(ts("2025-12-31T23:59:59Z")));
        assert!(product.on_sale_at(ts("2026-01-01T00:00:00Z")));
        assert!(!product.on_sale_at(ts("2026-02-01T00:00:00Z")));
        assert!(!product.listed_at(ts("2026-02-01T00:00:00Z")));
        product.status = ProductStatus::Archived;
        assert!(!product.on_sale_at(ts("2026-01-15T00:00:00Z")));
    }

    #[test]
    fn the_terms_change_with_any_field() {
        let product = cosmetic("c");
        assert_eq!(product.terms(), cosmetic("c").terms());
        let mut cheaper = product.clone();
        cheaper.prices[0].amount -= 1;
        assert_ne!(product.terms(), cheaper.terms());
        assert_eq!(product.terms().len(), 22);
    }
}
