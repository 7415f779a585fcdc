//! `POST /api/packs/{packId}/purchases/{purchaseId}/open`: reveals what a paid pack holds,
//! drawn as docs/fairness.md publishes, exactly once.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;

use crate::http::error::{ApiError, ErrorBody, ErrorCode};
use crate::http::extract::{Fan, FromJsonBody, Json, PackMetered, PurchasePath};
use crate::http::refusals::purchase_not_found;
use crate::http::request::json_object;
use crate::http::response::{json_response, mark_replayed};
use crate::openapi::headers::Replayed;
use crate::openapi::{examples, responses as doc};
use crate::state::PurchaseState;
use crate::views::purchase::{PurchaseAnswer, PurchaseJson};
use domain::purchases::OpenRefusal;
use domain::timestamp::Timestamp;
use store::metrics::{self, Metric};
use store::purchases::{OpenError, OpenPurchase};

/// The only body an open takes, besides none.
/// None, or an empty object.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(max_properties = 0)]
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
    operation_id = "openPack",
    tag = "Purchases",
    summary = "Open a paid pack",
    description = "Draws the items of the signed-in user's paid (`completed`) purchase, one per \
slot 0 .. `itemsPerPack` - 1, by the published algorithm (docs/fairness.md: HMAC-SHA256 of the \
pack's server seed over the pack, the buyer, the purchase's `nonce` and `clientSeed`), and writes \
them with `completed -> opened` in one conditional write: exactly once. A repeat, or a concurrent \
open, answers the very same items with `Idempotent-Replayed: true`. The answer's `fairness` \
carries what anyone needs to check the draw; `serverSeed` is null until the pack's `saleEndsAt` + \
1 hour.

Checked in this order: the path (404 `not_found`), the token (401), the body (none or `{}`: 415, \
413, 400); then the purchase: not the user's, or not of this pack (404 `purchase_not_found`), not \
paid yet (409 `purchase_not_completed`), its hold ran out unpaid (410 `reservation_expired`).",
    security(("sessionToken" = [])),
    params(PurchasePath),
    request_body(content = Option<EmptyObject>),
    responses(
        (status = 200, description = "The purchase, opened: `items` and `fairness`. A replay \
(opened before) has `Idempotent-Replayed: true`.",
            body = PurchaseAnswer,
            headers(("Idempotent-Replayed" = inline(Replayed))),
            examples(("opened" = (value = json!(examples::opened_purchase()))))),
        (status = 400, description = "Malformed JSON (`invalid_json`), or a body other than `{}` \
(`invalid_body`).",
            body = ErrorBody,
            examples(
                ("invalidJson" = (value = json!(doc::invalid_json()))),
                ("invalidBody" = (value = json!(doc::error_example(
                    ErrorCode::InvalidBody,
                    "The body must be empty or {}.",
                )))),
            )),
        (status = 404, response = doc::PurchaseNotFound),
        (status = 409, description = "The purchase is not paid yet (`purchase_not_completed`).",
            body = ErrorBody,
            example = json!(doc::error_example(
                ErrorCode::PurchaseNotCompleted,
                "This purchase is not paid yet: complete it before opening it.",
            ))),
        (status = 410, description = "The hold ran out before the purchase was paid \
(`reservation_expired`).",
            body = ErrorBody,
            example = json!(doc::error_example(
                ErrorCode::ReservationExpired,
                "The reservation expired before it was paid; there is nothing to open.",
            ))),
        (status = 413, response = doc::PayloadTooLarge),
        (status = 415, response = doc::UnsupportedMediaType),
        doc::SignedIn,
    ),
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
