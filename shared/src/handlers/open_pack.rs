//! `POST /api/packs/{packId}/purchases/{purchaseId}/open`: reveals what a paid pack holds,
//! drawn as docs/fairness.md publishes, exactly once.

use lambda_http::http::StatusCode;
use lambda_http::{Body, Request, Response};
use serde::Deserialize;

use crate::handlers::purchase_json::{
    PurchaseAnswer, PurchaseJson, PurchaseState, mark_replayed, purchase_not_found,
};
use crate::http::error::{ApiError, ErrorCode};
use crate::http::request::{
    bearer_token, body_bytes, has_body, json_object, require_json_content_type,
};
use crate::http::respond;
use crate::http::response::json_response;
use crate::http::routes::{OPEN_PACK, PurchasePath};
use crate::metrics::{self, Metric};
use crate::purchases::OpenRefusal;
use crate::store::purchases::{OpenError, OpenPurchase};
use crate::timestamp::Timestamp;

/// The only body an open takes, besides none.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EmptyObject {}

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
pub async fn open_pack<S: OpenPurchase>(
    state: &PurchaseState<S>,
    request: Request,
) -> Response<Body> {
    respond(&request, async {
        let PurchasePath {
            pack_id,
            purchase_id,
        } = OPEN_PACK.params(&request)?;
        metrics::property("packId", &pack_id);
        let identity = state.verifier.verify(bearer_token(&request)?).await?;
        if has_body(&request) {
            require_json_content_type(&request)?;
            let EmptyObject {} = json_object(
                body_bytes(&request, state.max_body_bytes)?,
                "The body must be empty or {}.",
            )?;
        }
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
    })
    .await
}
