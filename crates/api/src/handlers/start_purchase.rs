//! `POST /api/packs/{packId}/purchases`: reserves one unit of a pack for the caller.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use serde::{Deserialize, Deserializer};

use crate::http::error::{ApiError, ErrorBody, ErrorCode};
use crate::http::extract::{
    Fan, FromJsonBody, IdempotencyKey, Json, PURCHASE_PATH, PackMetered, PackPath,
};
use crate::http::human_check::{HumanCheckToken, verify_human};
use crate::http::refusals::pack_not_found;
use crate::http::request::{self, json_object};
use crate::http::response::{json_response, mark_replayed};
use crate::http::routes::fill;
use crate::openapi::headers::{HumanCheckHeader, PurchaseLocation, Replayed};
use crate::openapi::{examples, responses as doc};
use crate::state::PurchaseState;
use crate::views::purchase::{PurchaseAnswer, PurchaseJson};
use domain::humancheck::Door;
use domain::purchases::{
    MAX_CLIENT_SEED_CHARS, PurchaseStatus, StartRefusal, StartRequest, is_valid_client_seed,
    purchase_id, random_client_seed,
};
use domain::timestamp::Timestamp;
use store::metrics::{self, Metric};
use store::purchases::{StartError, StartPurchase, Started};
use store::ratelimit::SpendToken;

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = StartPurchaseRequest)]
struct StartBody {
    // Absent: `None`; present: `Some` of the value, so that `null` is refused, not ignored.
    /// Your part of the draw's randomness, 1-64 printable ASCII characters (space to `~`).
    /// Absent, the server picks one.
    #[serde(default, rename = "clientSeed", deserialize_with = "present")]
    #[schema(value_type = String, min_length = 1, max_length = 64, pattern = "^[ -~]{1,64}$")]
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
        StartError::Refused(StartRefusal::NotAdmitted(refusal)) => {
            (ErrorCode::QueueAdmissionRequired, refusal.message())
        }
        // [`start_checked`] answers it with the check; a store that asks again after a check
        // passed refuses as a failed check would.
        StartError::Refused(StartRefusal::HumanCheckRequired { .. }) => {
            return crate::http::human_check::human_check_failed();
        }
    };
    ApiError::refused(code, message)
}

/// Checks, in order: route (404/405), token (401), `Idempotency-Key` (400), body (415, 413,
/// 400); then starts the purchase in one transaction. 201 with `Location`; a repeat of the key
/// answers the same purchase as it is now (as GET would) with `Idempotent-Replayed: true`.
#[utoipa::path(
    post,
    path = "/api/packs/{packId}/purchases",
    operation_id = "startPurchase",
    tag = "Purchases",
    summary = "Start a purchase of a pack (hold one unit)",
    description = "Reserves one unit of the pack for the signed-in user: the pack's `remaining` \
goes down by one and the purchase is `reserved` until `expiresAt` (`PURCHASE_HOLD_SECONDS` after \
`reservedAt`, 600 s by default). Pay for it with `PUT` on its `Location` before then; a hold that \
runs out is released (status `expired`, the unit back on sale).

`Idempotency-Key` names the purchase: sending the same key again (same pack, same `clientSeed`, \
or again none) answers the same purchase, as it was started, with `Idempotent-Replayed: true`, and \
changes nothing; the same key with another pack or another `clientSeed` is a 422 \
`idempotency_key_reused`.

`clientSeed` is the buyer's part of the draw (see docs/fairness.md); without one, the server picks \
a random one. `nonce` counts the user's purchases of the pack (1, 2, ...).

Rate limited per fan and per address (class `start`, docs/rate-limits.md): every answer carries \
`RateLimit-Policy` and `RateLimit`; over a limit, 429 `rate_limited` with `Retry-After`; the \
limits' store unreachable, 503.

Checked in this order: the path (404 `not_found`), the rate limits (429), the token (401), `Idempotency-Key` (400), the \
body (415, 413, 400); on a pack whose operator asks for the human check (`humanCheck`, a pack \
without a queue), a Cloudflare Turnstile token in `Human-Check` from a widget rendered with \
`action` `start_<packId>`, solved since the sale started and within the last 300 s, used once \
(403 `human_check_failed`; not asked again of a repeated key: docs/human-check.md); then the \
pack: unknown or draft (404 `pack_not_found`), not on sale (409 `not_on_sale`), sold out (409 \
`sold_out`), the user's `maxPerUser` reached (409 `purchase_limit_reached`).",
    security(("sessionToken" = [])),
    params(
        PackPath,
        HumanCheckHeader,
        ("Idempotency-Key" = String, Header,
            description = "A unique string per purchase the client means to start (a UUID, say): \
1-255 visible ASCII characters (`!` to `~`), sent once. Retrying with the same key is safe. \
(Behind API Gateway a header sent twice arrives as one, its values joined by `,`: that is then the \
key, as any key may hold a comma. The local API sees both and refuses them.)",
            min_length = 1, max_length = 255, pattern = "^[!-~]{1,255}$",
            example = "3f2b9c1e-6d4a-4b8e-9f21-7c5a0d8e1b43"),
    ),
    request_body(
        content = Option<StartBody>,
        description = "Optional (no body at all is the same as `{}`). At most 64 KiB \
(`MAX_BODY_BYTES`).",
        examples(
            ("seeded" = (value = json!({"clientSeed": "my lucky seed 42"}))),
            ("serverPicked" = (value = json!({}))),
        ),
    ),
    responses(
        (status = 201, description = "The purchase, reserved (`status` is always `reserved` \
here, also on a replay). A replay answers the first answer again, with `Idempotent-Replayed: true`.",
            body = PurchaseAnswer,
            headers(
                ("Location" = inline(PurchaseLocation)),
                ("Idempotent-Replayed" = inline(Replayed)),
            ),
            examples(("reserved" = (value = json!(examples::reserved_purchase()))))),
        (status = 400, description = "No `Idempotency-Key` (`missing_idempotency_key`), or one \
that is not 1-255 visible ASCII characters sent once (`invalid_idempotency_key`); malformed JSON \
(`invalid_json`); a body that is not an object with at most a `clientSeed` string \
(`invalid_body`); a `clientSeed` that is not 1-64 printable ASCII characters \
(`invalid_client_seed`).",
            body = ErrorBody,
            examples(
                ("missingKey" = (value = json!(doc::error_example(ErrorCode::MissingIdempotencyKey, request::MISSING_IDEMPOTENCY_KEY)))),
                ("invalidKey" = (value = json!(doc::error_example(ErrorCode::InvalidIdempotencyKey, request::INVALID_IDEMPOTENCY_KEY)))),
                ("invalidJson" = (value = json!(doc::invalid_json()))),
                ("invalidBody" = (value = json!(doc::error_example(ErrorCode::InvalidBody, "The body must be empty or a JSON object with at most a 'clientSeed' string.")))),
                ("invalidClientSeed" = (value = json!(doc::error_example(ErrorCode::InvalidClientSeed, "'clientSeed' must be 1-64 characters of printable ASCII (space to ~).")))),
            )),
        (status = 402, description = "The deployment asks a start for funds \
(`START_REQUIRES_FUNDS`) and the Cash balance in the pack's currency does not cover this price \
plus the user's other live unpaid holds in it (`insufficient_funds`); nothing is held.",
            body = ErrorBody,
            example = json!(doc::error_example(ErrorCode::InsufficientFunds, "Your Cash balance does not cover this pack and your other unpaid purchases."))),
        (status = 403, description = "The pack has a waiting room and the fan may not buy from \
it now (`queue_admission_required`): the message says which, did not join, not yet admitted, \
admission window passed, bought as many as the admission allows, or sold out before their turn \
(docs/fairness.md). Nothing is held. Or the pack asks for the human check and `Human-Check` \
did not pass it (`human_check_failed`). Nothing is written.",
            body = ErrorBody,
            examples(
                ("humanCheckFailed" = (value = json!(doc::example(crate::http::human_check::human_check_failed())))),
                ("notJoined" = (value = json!(doc::error_example(ErrorCode::QueueAdmissionRequired, domain::queue::admission::AdmissionRefusal::NotJoined.message())))),
                ("notYetAdmitted" = (value = json!(doc::error_example(ErrorCode::QueueAdmissionRequired, domain::queue::admission::AdmissionRefusal::NotYetAdmitted.message())))),
                ("lapsed" = (value = json!(doc::error_example(ErrorCode::QueueAdmissionRequired, domain::queue::admission::AdmissionRefusal::Lapsed.message())))),
            )),
        (status = 404, description = "No pack has this id, or the pack is a draft \
(`pack_not_found`); or the id is not an id (`not_found`).",
            body = ErrorBody,
            examples(
                ("unknown" = (value = json!(doc::error_example(ErrorCode::PackNotFound, "No pack has this id.")))),
                ("notAnId" = (value = json!(doc::not_an_id()))),
            )),
        (status = 409, description = "The pack is not on sale now (`not_on_sale`: archived, \
before `saleStartsAt`, after `saleEndsAt`), has no unit left in any share of its supply \
(`sold_out`; expired holds are released first), the user holds `maxPerUser` purchases of it \
already (`purchase_limit_reached`; reserved, paid and opened ones count, expired ones do not), or \
the user holds as many live unpaid purchases, across all packs, as the deployment allows \
(`unpaid_holds_limit`, `MAX_UNPAID_HOLDS`: pay for one or let it run out).",
            body = ErrorBody,
            examples(
                ("notOnSale" = (value = json!(doc::error_example(ErrorCode::NotOnSale, "This pack is not on sale now.")))),
                ("soldOut" = (value = json!(doc::error_example(ErrorCode::SoldOut, "This pack is sold out.")))),
                ("limitReached" = (value = json!(doc::error_example(ErrorCode::PurchaseLimitReached, "You hold as many purchases of this pack as one buyer may.")))),
                ("unpaidHoldsLimit" = (value = json!(doc::error_example(ErrorCode::UnpaidHoldsLimit, "You hold as many unpaid purchases as a fan may: pay for one, or let it run out.")))),
            )),
        (status = 413, response = doc::PayloadTooLarge),
        (status = 415, response = doc::UnsupportedMediaType),
        (status = 429, response = doc::RateLimited),
        (status = 422, description = "This `Idempotency-Key` started another purchase (another \
pack, or another `clientSeed`) (`idempotency_key_reused`): use a new key for a new purchase.",
            body = ErrorBody,
            example = json!(doc::error_example(ErrorCode::IdempotencyKeyReused, "This Idempotency-Key was used for another purchase start (another pack or client seed)."))),
        doc::SignedIn,
    ),
)]
pub async fn start_purchase<S: StartPurchase + SpendToken>(
    State(state): State<Arc<PurchaseState<S>>>,
    PackMetered(PackPath { pack_id }): PackMetered<PackPath>,
    Fan(identity): Fan,
    IdempotencyKey(key): IdempotencyKey,
    human: HumanCheckToken,
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
        human_checked: false,
    };
    let (purchase, replayed) = match start_checked(&state, start, &human).await? {
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
        PurchaseJson::with_status(&purchase, PurchaseStatus::Reserved, now)
    };
    let mut response = json_response(StatusCode::CREATED, &PurchaseAnswer { purchase: json });
    let location = fill(
        PURCHASE_PATH,
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

/// Starts `start`; when its pack asks for the human check, verifies `human` for the pack's start
/// door (solved since its sale started) and starts again. A pack without the check costs nothing
/// more, and the store asks only where no purchase exists under the key (a repeat is answered
/// without a token, as a join's is); the second start reads again (one more read, on checked
/// packs only) and decides on what it reads. The outer error is the check's (403, 503).
async fn start_checked<S: StartPurchase + SpendToken>(
    state: &PurchaseState<S>,
    mut start: StartRequest,
    human: &HumanCheckToken,
) -> Result<Result<Started, StartError>, ApiError> {
    let sale_starts_at = match state.store.start_purchase(&start).await {
        Err(StartError::Refused(StartRefusal::HumanCheckRequired { sale_starts_at })) => {
            sale_starts_at
        }
        other => return Ok(other),
    };
    // Fail closed: a pack that asks for the check is never sold unchecked.
    let check = state.human.as_ref().ok_or_else(|| ApiError::Unavailable {
        what: "human check",
        detail: "a humanCheck pack, and no TURNSTILE_SECRET".into(),
    })?;
    let door = Door::Start(start.pack_id.clone());
    verify_human(check, &state.store, human, &door, sale_starts_at).await?;
    start.human_checked = true;
    Ok(state.store.start_purchase(&start).await)
}
