//! `GET /api/packs/{packId}/purchases/{purchaseId}`: one of the caller's purchases.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;

use crate::http::error::ApiError;
use crate::http::extract::{Fan, PURCHASE_PATH, Path, PurchasePath};
use crate::http::refusals::purchase_not_found;
use crate::http::response::json_response;
use crate::openapi::{examples, responses as doc};
use crate::state::PurchaseState;
use crate::views::purchase::{PurchaseAnswer, PurchaseJson};
use domain::timestamp::Timestamp;
use store::packs::GetRevealedSeed;
use store::purchases::GetPurchase;

/// The caller's purchase of that pack; anybody else's, another pack's or none is the same 404
/// (never 403: whether it exists is not told). One read; a second (the pack's published seed)
/// only for an opened purchase whose seed it does not show yet.
#[utoipa::path(
    get,
    path = PURCHASE_PATH,
    operation_id = "getPurchase",
    tag = "Purchases",
    summary = "Get one of the signed-in user's purchases",
    description = "The purchase as it is now. A `reserved` purchase whose `expiresAt` has passed \
reads `expired`, whether or not its hold was released yet. Another user's purchase, another \
pack's, or none at all are the same 404 `purchase_not_found`.",
    security(("sessionToken" = [])),
    params(PurchasePath),
    responses(
        (status = 200, description = "The purchase.", body = PurchaseAnswer,
            examples(("reserved" = (value = json!(examples::reserved_purchase()))))),
        (status = 404, response = doc::PurchaseNotFound),
        doc::SignedIn,
    ),
)]
pub async fn get_purchase<S: GetPurchase + GetRevealedSeed>(
    State(state): State<Arc<PurchaseState<S>>>,
    Path(PurchasePath {
        pack_id,
        purchase_id,
    }): Path<PurchasePath>,
    Fan(identity): Fan,
) -> Result<Response, ApiError> {
    let mut purchase = state
        .store
        .get_purchase(&identity.user_id, &purchase_id)
        .await?
        .filter(|purchase| purchase.pack_id == pack_id)
        .ok_or_else(purchase_not_found)?;
    // Opened before its pack's seed was revealed: the seed, once the sweep has published it
    // on the pack's public item (and it is the one committed to), is shown too.
    if let Some(fairness) = purchase.fairness.as_mut()
        && fairness.server_seed.is_none()
        && let Some(seed) = state.store.revealed_seed(&purchase.pack_id).await?
        && seed.commitment() == fairness.server_seed_hash
    {
        fairness.server_seed = Some(seed.to_hex());
    }
    Ok(json_response(
        StatusCode::OK,
        &PurchaseAnswer {
            purchase: PurchaseJson::at(&purchase, Timestamp::now()),
        },
    ))
}
