//! `POST /api/packs/{packId}/purchases`: reserves one unit of a pack for the caller.

use lambda_http::http::{HeaderValue, StatusCode, header};
use lambda_http::{Body, Request, Response};
use serde::{Deserialize, Deserializer};

use crate::handlers::get_pack::pack_not_found;
use crate::handlers::purchase_json::{PurchaseAnswer, PurchaseJson, PurchaseState, mark_replayed};
use crate::http::error::{ApiError, ErrorCode};
use crate::http::request::{
    bearer_token, body_bytes, has_body, idempotency_key, json_object, require_json_content_type,
};
use crate::http::respond;
use crate::http::response::json_response;
use crate::http::routes::{GET_PURCHASE, PackPath, START_PURCHASE};
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

/// The client seed the body asks for: no body, `{}`, or `{"clientSeed": "<1-64 printable
/// ASCII>"}`.
pub fn requested_client_seed(
    request: &Request,
    max_body: usize,
) -> Result<Option<String>, ApiError> {
    if !has_body(request) {
        return Ok(None);
    }
    require_json_content_type(request)?;
    let body: StartBody = json_object(
        body_bytes(request, max_body)?,
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
pub async fn start_purchase<S: StartPurchase>(
    state: &PurchaseState<S>,
    request: Request,
) -> Response<Body> {
    respond(&request, async {
        let PackPath { pack_id } = START_PURCHASE.params(&request)?;
        metrics::property("packId", &pack_id);
        let identity = state.verifier.verify(bearer_token(&request)?).await?;
        let key = idempotency_key(&request)?;
        let requested_seed = requested_client_seed(&request, state.max_body_bytes)?;
        let now = Timestamp::now();
        let expires_at = now
            .plus_seconds(i64::try_from(state.hold.as_secs()).unwrap_or(i64::MAX))
            .ok_or_else(|| ApiError::Internal {
                detail: "the hold ends past 9999".into(),
            })?;
        let start = StartRequest {
            user_id: identity.user_id.clone(),
            pack_id,
            purchase_id: purchase_id(&identity.user_id, key),
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
        let location = GET_PURCHASE.fill(&[&purchase.pack_id, &purchase.id]);
        if let Ok(location) = HeaderValue::from_str(&location) {
            response.headers_mut().insert(header::LOCATION, location);
        }
        if replayed {
            mark_replayed(&mut response);
        }
        Ok(response)
    })
    .await
}
