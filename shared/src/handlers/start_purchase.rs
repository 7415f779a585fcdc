//! `POST /api/packs/{packId}/purchases`: reserves one unit of a pack for the caller.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use serde::{Deserialize, Deserializer};

use crate::handlers::get_pack::{PackPath, pack_not_found};
use crate::handlers::get_purchase::__path_get_purchase;
use crate::handlers::purchase_json::{PurchaseAnswer, PurchaseJson, PurchaseState};
use crate::http::error::{ApiError, ErrorCode};
use crate::http::extract::{Fan, FromJsonBody, IdempotencyKey, Json, PackMetered};
use crate::http::request::json_object;
use crate::http::response::{json_response, mark_replayed};
use crate::http::routes::fill;
use crate::metrics::{self, Metric};
use crate::purchases::{
    MAX_CLIENT_SEED_CHARS, PurchaseStatus, StartRefusal, StartRequest, is_valid_client_seed,
    purchase_id, random_client_seed,
};
use crate::store::purchases::{StartError, StartPurchase, Started};
use crate::timestamp::Timestamp;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StartBody {
    /// Absent: `None`; present: `Some` of the value, so that `null` is refused, not ignored.
    #[serde(default, rename = "clientSeed", deserialize_with = "present")]
    client_seed: Option<Option<String>>,
}

fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<String>>, D::Error> {
    Option::<String>::deserialize(d).map(Some)
}

/// The client seed a start's body asks for: `{}` or `{"clientSeed": "<1-64 printable
/// ASCII>"}` (no body at all asks for none either).
pub struct RequestedSeed(pub Option<String>);

impl FromJsonBody for RequestedSeed {
    fn from_json(body: &[u8]) -> Result<Self, ApiError> {
        requested_client_seed(body).map(Self)
    }
}

/// Reads a start's body: `{}` or `{"clientSeed": "<1-64 printable ASCII>"}`.
pub fn requested_client_seed(body: &[u8]) -> Result<Option<String>, ApiError> {
    let body: StartBody = json_object(
        body,
        "The body must be empty or a JSON object with at most a 'clientSeed' string.",
    )?;
    match body.client_seed {
        None => Ok(None),
        Some(Some(seed)) if is_valid_client_seed(&seed) => Ok(Some(seed)),
        Some(_) => Err(ApiError::refused(
            ErrorCode::InvalidClientSeed,
            format!(
                "'clientSeed' must be 1-{MAX_CLIENT_SEED_CHARS} characters of printable ASCII (space to ~)."
            ),
        )),
    }
}

fn refused(error: StartError) -> ApiError {
    let (code, message) = match error {
        StartError::Store(error) => return error.into(),
        StartError::KeyReused => (
            ErrorCode::IdempotencyKeyReused,
            "This Idempotency-Key was used for another purchase start (another pack or client seed).",
        ),
        StartError::Refused(StartRefusal::PackNotFound) => return pack_not_found(),
        StartError::Refused(StartRefusal::NotOnSale) => {
            (ErrorCode::NotOnSale, "This pack is not on sale now.")
        }
        StartError::Refused(StartRefusal::SoldOut) => {
            (ErrorCode::SoldOut, "This pack is sold out.")
        }
        StartError::Refused(StartRefusal::LimitReached) => (
            ErrorCode::PurchaseLimitReached,
            "You hold as many purchases of this pack as one buyer may.",
        ),
        StartError::Refused(StartRefusal::UnpaidHoldsLimit) => (
            ErrorCode::UnpaidHoldsLimit,
            "You hold as many unpaid purchases as a fan may: pay for one, or let it run out.",
        ),
        StartError::Refused(StartRefusal::InsufficientFunds) => (
            ErrorCode::InsufficientFunds,
            "Your Cash balance does not cover this pack and your other unpaid purchases.",
        ),
    };
    ApiError::refused(code, message)
}

/// Checks, in order: route (404/405), token (401), `Idempotency-Key` (400), body (415, 413,
/// 400); then starts the purchase in one transaction. 201 with `Location`; a repeat of the key
/// answers the same purchase as it is now (as GET would) with `Idempotent-Replayed: true`.
#[utoipa::path(
    post,
    path = "/api/packs/{packId}/purchases",
    operation_id = "start_purchase",
    tag = "purchases"
)]
pub async fn start_purchase<S: StartPurchase>(
    State(state): State<Arc<PurchaseState<S>>>,
    PackMetered(PackPath { pack_id }): PackMetered<PackPath>,
    Fan(identity): Fan,
    IdempotencyKey(key): IdempotencyKey,
    body: Option<Json<RequestedSeed>>,
) -> Result<Response, ApiError> {
    let requested_seed = body.and_then(|Json(RequestedSeed(seed))| seed);
    let now = Timestamp::now();
    let expires_at = now
        .plus_seconds(i64::try_from(state.hold.as_secs()).unwrap_or(i64::MAX))
        .ok_or_else(|| ApiError::Internal {
            detail: "the hold ends past 9999".into(),
        })?;
    let start = StartRequest {
        user_id: identity.user_id.clone(),
        pack_id,
        purchase_id: purchase_id(&identity.user_id, &key),
        client_seed: requested_seed.clone().unwrap_or_else(random_client_seed),
        requested_seed,
        now,
        expires_at,
        policy: state.policy,
    };
    let (purchase, replayed) = match state.store.start_purchase(&start).await {
        Ok(Started::Created(purchase)) => {
            metrics::count(Metric::PurchasesStarted);
            (purchase, false)
        }
        Ok(Started::Repeated(purchase)) => (purchase, true),
        Err(error) => {
            match error {
                StartError::Refused(StartRefusal::SoldOut) => {
                    metrics::count(Metric::PurchasesSoldOut);
                }
                StartError::Refused(StartRefusal::LimitReached) => {
                    metrics::count(Metric::PurchaseLimitReached);
                }
                _ => {}
            }
            return Err(refused(error));
        }
    };
    let json = if replayed {
        // The purchase as it is now, as GET answers it: a hold that ran out is `expired`,
        // not a `reserved` with an `expiresAt` in the past.
        PurchaseJson::at(&purchase, now)
    } else {
        tracing::info!(purchase_id = %purchase.id, pack_id = %purchase.pack_id, "purchase started");
        PurchaseJson::with_status(&purchase, PurchaseStatus::Reserved)
    };
    let mut response = json_response(StatusCode::CREATED, &PurchaseAnswer { purchase: json });
    let location = fill(
        &<__path_get_purchase as utoipa::Path>::path(),
        &[purchase.pack_id.as_str(), purchase.id.as_str()],
    );
    if let Ok(location) = HeaderValue::from_str(&location) {
        response.headers_mut().insert(header::LOCATION, location);
    }
    if replayed {
        mark_replayed(&mut response);
    }
    Ok(response)
}
