//! A purchase as the API shows it, and an item a fan pulled: the answers of the purchase
//! endpoints, the fan's lists, the dashboard and the locker room.

use serde::Serialize;
use utoipa::ToSchema;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::Schema;

use crate::openapi::schemas::{Hex32, Id};
use crate::views::pack::countdown;
use domain::cash::Money;
use domain::packs::draw::ALGORITHM;
use domain::purchases::mine::MyItem;
use domain::purchases::{OpenedFairness, OpenedItem, Purchase, PurchaseStatus};
use domain::timestamp::Timestamp;

/// A purchase as the API shows it.
#[derive(Serialize, ToSchema)]
// For the schema only (`additionalProperties: false`): the API writes no other field.
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = Purchase)]
pub struct PurchaseJson<'a> {
    /// Derived from the user and the `Idempotency-Key` that started it.
    #[schema(value_type = Id)]
    id: &'a str,
    #[schema(value_type = Id)]
    pack_id: &'a str,
    status: PurchaseStatus,
    #[schema(value_type = Money)]
    price: &'a Money,
    /// The buyer's seed of the draw (the one sent, or one the server picked).
    #[schema(min_length = 1, max_length = 64, pattern = "^[ -~]{1,64}$")]
    client_seed: &'a str,
    /// This purchase's number among the user's purchases of the pack (1, 2, ...).
    #[schema(minimum = 1)]
    nonce: u64,
    reserved_at: Timestamp,
    /// When the hold runs out unless the purchase is paid.
    expires_at: Timestamp,
    #[schema(schema_with = expires_countdown)]
    expires_in_ms: u64,
    #[schema(required)]
    completed_at: Option<Timestamp>,
    #[schema(required)]
    opened_at: Option<Timestamp>,
    /// The drawn items, once opened; null before.
    #[schema(value_type = Option<Vec<OpenedItem>>, required)]
    items: Option<&'a [OpenedItem]>,
    /// On opened purchases: what anyone needs to check the draw (docs/fairness.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = FairnessJson)]
    fairness: Option<FairnessJson<'a>>,
}

/// On opened purchases: what anyone needs to check the draw with `scripts/verify-draw`
/// (docs/fairness.md), with the pack's `odds`, `items` and `itemsPerPack` and the buyer's own
/// account id.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = PurchaseFairness)]
struct FairnessJson<'a> {
    #[schema(schema_with = algorithms)]
    algorithm: &'static str,
    /// Lowercase hex SHA-256 of the pack's server seed, published with the pack.
    #[schema(value_type = Hex32)]
    server_seed_hash: &'a str,
    /// The pack's server seed (lowercase hex), once revealed (`saleEndsAt` + 1 hour); null
    /// before. `GET` of a purchase shows it only when the purchase was opened after the reveal;
    /// the pack and a repeated open show it always once revealed.
    #[schema(value_type = Option<Hex32>, required)]
    server_seed: Option<&'a str>,
    /// The buyer's seed of the draw.
    #[schema(min_length = 1, max_length = 64, pattern = "^[ -~]{1,64}$")]
    client_seed: &'a str,
    /// The purchase's `nonce`.
    #[schema(minimum = 1)]
    nonce: u64,
}

fn expires_countdown() -> RefOr<Schema> {
    countdown("expiresAt", false)
}

/// The draw's algorithm, the one there is.
fn algorithms() -> utoipa::openapi::Object {
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(utoipa::openapi::Type::String)
        .enum_values(Some([ALGORITHM]))
        .build()
}

impl<'a> PurchaseJson<'a> {
    /// `purchase` as seen at `now` (a reserved purchase past its hold reads `expired`).
    pub fn at(purchase: &'a Purchase, now: Timestamp) -> Self {
        Self::with_status(purchase, purchase.status_at(now), now)
    }

    /// `purchase` with `status` as it is shown, answered at `now`.
    pub fn with_status(purchase: &'a Purchase, status: PurchaseStatus, now: Timestamp) -> Self {
        Self {
            id: purchase.id.as_str(),
            pack_id: purchase.pack_id.as_str(),
            status,
            price: &purchase.price,
            client_seed: &purchase.client_seed,
            nonce: purchase.nonce,
            reserved_at: purchase.reserved_at,
            expires_at: purchase.expires_at,
            expires_in_ms: now.millis_until(purchase.expires_at),
            completed_at: purchase.completed_at,
            opened_at: purchase.opened_at,
            items: purchase.items.as_deref(),
            fairness: purchase
                .fairness
                .as_ref()
                .map(|fairness| FairnessJson::of(purchase, fairness)),
        }
    }

    /// An opened `purchase` with its pack's seed as shown now (`fairness`): the seed appears
    /// once revealed, whenever the purchase was opened.
    pub fn opened(purchase: &'a Purchase, fairness: &'a OpenedFairness, now: Timestamp) -> Self {
        Self {
            fairness: Some(FairnessJson::of(purchase, fairness)),
            ..Self::at(purchase, now)
        }
    }
}

impl<'a> FairnessJson<'a> {
    fn of(purchase: &'a Purchase, fairness: &'a OpenedFairness) -> Self {
        Self {
            algorithm: ALGORITHM,
            server_seed_hash: &fairness.server_seed_hash,
            server_seed: fairness.server_seed.as_deref(),
            client_seed: &purchase.client_seed,
            nonce: purchase.nonce,
        }
    }
}

/// `{"purchase": ...}`.
#[derive(Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PurchaseAnswer<'a> {
    pub purchase: PurchaseJson<'a>,
}

/// An item the caller pulled, with where it came from.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = MyItem)]
pub struct ItemJson<'a> {
    #[schema(value_type = Id)]
    item_id: &'a str,
    #[schema(min_length = 1, max_length = 200)]
    name: &'a str,
    #[schema(min_length = 1, max_length = 32)]
    rarity: &'a str,
    #[schema(format = "uri", pattern = "^https://", required)]
    image_url: Option<&'a str>,
    #[schema(value_type = Id)]
    pack_id: &'a str,
    #[schema(value_type = Id)]
    purchase_id: &'a str,
    slot: u32,
    opened_at: Timestamp,
}

impl<'a> ItemJson<'a> {
    pub fn of(mine: &'a MyItem) -> Self {
        Self {
            item_id: &mine.item.item_id,
            name: &mine.item.name,
            rarity: &mine.item.rarity,
            image_url: mine.item.image_url.as_deref(),
            pack_id: mine.pack_id.as_str(),
            purchase_id: mine.purchase_id.as_str(),
            slot: mine.item.slot,
            opened_at: mine.opened_at,
        }
    }
}
