//! What the purchase endpoints share: their state, and a purchase as JSON.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::auth::TokenVerifier;
use crate::cash::Money;
use crate::http::error::{ApiError, ErrorCode};
use crate::http::extract::{LimitsBodies, NamesPack, Verifies};
use crate::ids::{PackId, PurchaseId};
use crate::packs::draw::ALGORITHM;
use crate::purchases::{HoldPolicy, OpenedFairness, OpenedItem, Purchase, PurchaseStatus};
use crate::timestamp::Timestamp;

/// What the purchase handlers need (the store's operations differ per function).
pub struct PurchaseState<S> {
    pub store: S,
    pub verifier: TokenVerifier,
    /// How long a start holds a unit.
    pub hold: Duration,
    pub max_body_bytes: usize,
    /// What a fan's unpaid holds may be.
    pub policy: HoldPolicy,
}

impl<S: Send + Sync + 'static> Verifies for PurchaseState<S> {
    fn verifier(&self) -> &TokenVerifier {
        &self.verifier
    }
}

impl<S: Send + Sync + 'static> LimitsBodies for PurchaseState<S> {
    fn max_body_bytes(&self) -> usize {
        self.max_body_bytes
    }
}

/// `/api/packs/{packId}/purchases/{purchaseId}...`
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PurchasePath {
    pub pack_id: PackId,
    pub purchase_id: PurchaseId,
}

impl NamesPack for PurchasePath {
    fn pack_id(&self) -> &PackId {
        &self.pack_id
    }
}

/// A purchase as the API shows it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PurchaseJson<'a> {
    id: &'a str,
    pack_id: &'a str,
    status: PurchaseStatus,
    price: &'a Money,
    client_seed: &'a str,
    nonce: u64,
    reserved_at: Timestamp,
    expires_at: Timestamp,
    completed_at: Option<Timestamp>,
    opened_at: Option<Timestamp>,
    items: Option<&'a [OpenedItem]>,
    /// On opened purchases: what anyone needs to check the draw (docs/fairness.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    fairness: Option<FairnessJson<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct FairnessJson<'a> {
    algorithm: &'static str,
    server_seed_hash: &'a str,
    server_seed: Option<&'a str>,
    client_seed: &'a str,
    nonce: u64,
}

impl<'a> PurchaseJson<'a> {
    /// `purchase` as seen at `now` (a reserved purchase past its hold reads `expired`).
    pub fn at(purchase: &'a Purchase, now: Timestamp) -> Self {
        Self::with_status(purchase, purchase.status_at(now))
    }

    /// `purchase` with `status` as it is shown.
    pub fn with_status(purchase: &'a Purchase, status: PurchaseStatus) -> Self {
        Self {
            id: &purchase.id,
            pack_id: &purchase.pack_id,
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
#[derive(Serialize)]
pub struct PurchaseAnswer<'a> {
    pub purchase: PurchaseJson<'a>,
}

pub fn purchase_not_found() -> ApiError {
    ApiError::refused(
        ErrorCode::PurchaseNotFound,
        "You have no purchase with this id for this pack.",
    )
}
