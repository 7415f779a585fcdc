//! `POST /api/packs/{packId}/purchases/{purchaseId}/open`: reveals what a paid pack holds,
//! drawn as docs/fairness.md publishes, exactly once.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;

use crate::handlers::purchase_json::{
    PurchaseAnswer, PurchaseJson, PurchasePath, PurchaseState, purchase_not_found,
};
use crate::http::error::{ApiError, ErrorCode};
use crate::http::extract::{Fan, FromJsonBody, Json, PackMetered};
use crate::http::request::json_object;
use crate::http::response::{json_response, mark_replayed};
use crate::metrics::{self, Metric};
use crate::purchases::OpenRefusal;
use crate::store::purchases::{OpenError, OpenPurchase};
use crate::timestamp::Timestamp;

/// The only body an open takes, besides none.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmptyObject {}

impl FromJsonBody for EmptyObject {
    fn from_json(body: &[u8]) -> Result<Self, ApiError> {
        json_object(body, "The body must be empty or {}.")
    }
}

fn refused(error: OpenError) -> ApiError {
    match error {
        OpenError::Store(error) => error.into(),
        OpenError::Refused(OpenRefusal::NotFound) => purchase_not_found(),
        OpenError::Refused(OpenRefusal::NotCompleted) => ApiError::refused(
            ErrorCode::PurchaseNotCompleted,
            "This purchase is not paid yet: complete it before opening it.",
        ),
        OpenError::Refused(OpenRefusal::Expired) => ApiError::refused(
            ErrorCode::ReservationExpired,
            "The reservation expired before it was paid; there is nothing to open.",
        ),
        OpenError::Refused(OpenRefusal::Draw(error)) => ApiError::Internal {
            detail: format!("the pack's content cannot be drawn: {error}"),
        },
    }
}

/// Checks, in order: route (404/405), token (401), body (none or `{}`: 415, 413, 400); then
/// opens in one conditional write. A repeat, or a concurrent open, answers the same items with
/// `Idempotent-Replayed: true`. Two reads and one write at most.
#[utoipa::path(
    post,
    path = "/api/packs/{packId}/purchases/{purchaseId}/open",
    operation_id = "open_pack",
    tag = "purchases"
)]
pub async fn open_pack<S: OpenPurchase>(
    State(state): State<Arc<PurchaseState<S>>>,
    PackMetered(PurchasePath {
        pack_id,
        purchase_id,
    }): PackMetered<PurchasePath>,
    Fan(identity): Fan,
    _: Option<Json<EmptyObject>>,
) -> Result<Response, ApiError> {
    let now = Timestamp::now();
    let opened = state
        .store
        .open_purchase(&identity.user_id, &pack_id, &purchase_id, now)
        .await
        .map_err(refused)?;
    if !opened.repeated {
        metrics::count(Metric::PacksOpened);
        tracing::info!(purchase_id = %opened.purchase.id, "pack opened");
    }
    let mut response = json_response(
        StatusCode::OK,
        &PurchaseAnswer {
            purchase: PurchaseJson::opened(&opened.purchase, &opened.fairness, now),
        },
    );
    if opened.repeated {
        mark_replayed(&mut response);
    }
    Ok(response)
}
