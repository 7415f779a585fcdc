//! What the purchase endpoints share: their state, and a purchase as JSON.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::auth::TokenVerifier;
use crate::http::error::{ApiError, ErrorCode};
use crate::http::extract::{NamesPack, handler_state};
use crate::http::human_check::HumanCheck;
use crate::http::routes::{LocalProcess, LocalState};
use crate::openapi::schemas::{Hex32, Id};
use domain::cash::Money;
use domain::ids::{PackId, PurchaseId};
use domain::packs::draw::ALGORITHM;
use domain::purchases::{HoldPolicy, OpenedFairness, OpenedItem, Purchase, PurchaseStatus};
use domain::timestamp::Timestamp;

/// What the purchase handlers need (the store's operations differ per function).
pub struct PurchaseState<S> {
    pub store: S,
    pub verifier: TokenVerifier,
    /// How long a start holds a unit.
    pub hold: Duration,
    pub max_body_bytes: usize,
    /// What a fan's unpaid holds may be.
    pub policy: HoldPolicy,
    /// The human check a start on a `humanCheck` pack passes (start-purchase's
    /// `TURNSTILE_SECRET`); `None`: not configured, and such a start is refused 503.
    pub human: Option<HumanCheck>,
}

handler_state!(PurchaseState: verifier, max_body_bytes);

impl<S: Send + Sync + Clone + 'static> LocalState<S> for PurchaseState<S> {
    fn local(store: &S, process: &LocalProcess) -> Self {
        Self {
            store: store.clone(),
            verifier: process.verifier(),
            hold: process.hold,
            max_body_bytes: process.max_body_bytes,
            policy: process.hold_policy,
            human: Some(process.human_check()),
        }
    }
}

/// `/api/packs/{packId}/purchases/{purchaseId}...`
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(rename_all = "camelCase", parameter_in = Path)]
pub struct PurchasePath {
    /// The pack's `id`. A path segment that is not an id once percent-decoded (1-64 characters
    /// of `A-Z`, `a-z`, `0-9`, `_` and `-`) names no resource: 404 `not_found`.
    #[param(value_type = String, pattern = "^[A-Za-z0-9_-]{1,64}$", example = "nba-rookie-2026")]
    pub pack_id: PackId,
    /// The purchase's `id` (from the start's `Location` or body). A path segment that is not an
    /// id once percent-decoded names no resource: 404 `not_found`.
    #[param(
        value_type = String,
        pattern = "^[A-Za-z0-9_-]{1,64}$",
        example = "aziCO-GO8fL4JY8pIvr5KQ"
    )]
    pub purchase_id: PurchaseId,
}

impl NamesPack for PurchasePath {
    fn pack_id(&self) -> &PackId {
        &self.pack_id
    }
}

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
        Self::with_status(purchase, purchase.status_at(now))
    }

    /// `purchase` with `status` as it is shown.
    pub fn with_status(purchase: &'a Purchase, status: PurchaseStatus) -> Self {
        Self {
            id: purchase.id.as_str(),
            pack_id: purchase.pack_id.as_str(),
            status,
            price: &purchase.price,
            client_seed: &purchase.client_seed,
            nonce: purchase.nonce,
            reserved_at: purchase.reserved_at,
            expires_at: purchase.expires_at,
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

pub fn purchase_not_found() -> ApiError {
    ApiError::refused(
        ErrorCode::PurchaseNotFound,
        "You have no purchase with this id for this pack.",
    )
}
