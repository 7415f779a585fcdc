//! The fan's top-ups (the `cash-top-ups` function): `POST /api/me/cash/top-ups` asks for one and
//! opens its Stripe Checkout Session; `GET /api/me/cash/top-ups/{topUpId}` reads one.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::auth::TokenVerifier;
use crate::http::error::{ApiError, ErrorBody, ErrorCode};
use crate::http::extract::{Fan, FromJsonBody, IdempotencyKey, Json, Path, handler_state};
use crate::http::refusals::{TOO_MANY_PENDING, stripe_failure, too_many_pending};
use crate::http::request::json_object;
use crate::http::response::{json_response, mark_replayed};
use crate::http::routes::fill;
use crate::http::routes::{LocalProcess, LocalState};
use crate::openapi::headers::{Replayed, TopUpLocation};
use crate::openapi::schemas::Currency;
use crate::openapi::{examples, responses as doc};
use crate::views::cash::TopUpJson;
use clients::stripe::{ReturnUrls, StripeClient};
use domain::ids::TopUpId;
use domain::timestamp::Timestamp;
use domain::topups::{TopUp, TopUpPolicy, TopUpRefusal, top_up_id};
use store::metrics::{self, Metric};
use store::topups::{CreateTopUp, CreateTopUpError, CreatedTopUp, GetTopUp, SetCheckout};

/// What the top-up handlers need.
pub struct TopUpState<S> {
    pub store: S,
    pub verifier: TokenVerifier,
    pub max_body_bytes: usize,
    pub policy: TopUpPolicy,
    pub stripe: StripeClient,
    pub return_urls: ReturnUrls,
}

handler_state!(TopUpState: verifier, max_body_bytes);

impl<S: Send + Sync + Clone + 'static> LocalState<S> for TopUpState<S> {
    fn local(store: &S, process: &LocalProcess) -> Self {
        Self {
            store: store.clone(),
            verifier: process.verifier(),
            max_body_bytes: process.max_body_bytes,
            policy: process.top_up_policy.clone(),
            stripe: StripeClient::new(&process.stripe),
            return_urls: process.return_urls.clone(),
        }
    }
}

/// `/api/me/cash/top-ups/{topUpId}`
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(rename_all = "camelCase", parameter_in = Path)]
pub struct TopUpPath {
    /// The top-up's `id` (from the create's `Location` or body).
    // The example is the top-up the create fixture's key makes for the user `me`, so that the
    // event fixtures run in order (infra/gen's examples).
    #[param(
        value_type = String,
        pattern = "^[A-Za-z0-9_-]{1,64}$",
        example = "pzYaje68pW7-F8F8bVH_NA"
    )]
    pub top_up_id: TopUpId,
}

/// `{"topUp": ...}`.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct TopUpAnswer<'a> {
    top_up: TopUpJson<'a>,
}

fn answer(status: StatusCode, top_up: &TopUp) -> Response {
    json_response(
        status,
        &TopUpAnswer {
            top_up: TopUpJson::of(top_up),
        },
    )
}

/// A top-up asked for: an amount in minor units of a currency (`{"amount": 1000, "currency": "USD"}`).
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = TopUpRequest)]
pub struct TopUpBody {
    /// Minor units (cents); within TOPUP_MIN_AMOUNT..TOPUP_MAX_AMOUNT (100..50000 by default).
    #[schema(value_type = u64, minimum = 1)]
    amount: serde_json::Number,
    /// One of TOPUP_CURRENCIES (`USD` by default).
    #[schema(value_type = Currency)]
    currency: String,
}

impl FromJsonBody for TopUpBody {
    fn from_json(body: &[u8]) -> Result<Self, ApiError> {
        json_object(
            body,
            "The body must be a JSON object with an integer 'amount' (minor units) and a 'currency'.",
        )
    }
}

/// Checks, in order: route (404/405), token (401), `Idempotency-Key` (400), body (415, 413,
/// 400), amount and currency (400); writes the pending top-up, taking one of the fan's pending
/// slots (one transaction; none free: 409, nothing sent to Stripe), opens its
/// Checkout Session at Stripe, stores it (one conditional update). 201 with `Location`. A repeat
/// of the key answers the same top-up as it is now, with `Idempotent-Replayed: true` (and
/// finishes it first when an earlier try could not reach Stripe); with another amount or
/// currency it is 422.
#[utoipa::path(
    post,
    path = "/api/me/cash/top-ups",
    operation_id = "createTopUp",
    tag = "Cash",
    summary = "Top up the signed-in user's Cash through Stripe Checkout",
    description = "Asks for a top-up of `amount` minor units of `currency` and opens a Stripe \
Checkout Session for it: send the fan to `checkoutUrl`. Once Stripe's signed webhook says the \
session is paid, the top-up is `completed` and its amount credited to the fan's Cash, exactly once \
(`GET` its `Location` to follow it).

`Idempotency-Key` names the top-up, as for a purchase start: the same key answers the same top-up, \
as it is now, with `Idempotent-Replayed: true`, and opens no second session; the same key with \
another amount or currency is 422 `idempotency_key_reused`.

Checked in this order: the token (401), `Idempotency-Key` (400), the body (415, 413, 400), the \
amount (`invalid_amount`: a whole number from `TOPUP_MIN_AMOUNT` to `TOPUP_MAX_AMOUNT`, 100 to \
50000 by default) and the currency (`unsupported_currency`: one of `TOPUP_CURRENCIES`, `USD` by \
default). A user holds at most 5 pending top-ups (neither completed, failed nor expired): one \
more is 409 `too_many_pending_top_ups` and opens no session; a top-up's Checkout Session expires \
an hour after it is opened, which frees its place, as its payment or failure does. Stripe \
unreachable, busy or failing is a 503 with `Retry-After` (retry with the same key); Stripe \
refusing the session is a 502 `payment_provider_error`.",
    security(("sessionToken" = [])),
    params(
        ("Idempotency-Key" = String, Header,
            description = "A unique string per top-up the client means to ask for: 1-255 visible \
ASCII characters (`!` to `~`), sent once. Retrying with the same key is safe.",
            min_length = 1, max_length = 255, pattern = "^[!-~]{1,255}$",
            example = "7d0c3e1a-2b4f-4c6d-8e9f-0a1b2c3d4e5f"),
    ),
    request_body(
        content = TopUpBody,
        description = "At most 64 KiB (`MAX_BODY_BYTES`).",
        example = json!({"amount": 1000, "currency": "USD"}),
    ),
    responses(
        (status = 201, description = "The top-up, `pending` until paid, with the Checkout page to \
pay it on.",
            body = TopUpAnswer,
            headers(
                ("Location" = inline(TopUpLocation)),
                ("Idempotent-Replayed" = inline(Replayed)),
            ),
            example = json!(examples::pending_top_up())),
        (status = 400, description = "No `Idempotency-Key` (`missing_idempotency_key`) or a bad \
one (`invalid_idempotency_key`); malformed JSON (`invalid_json`); a body that is not an object of \
exactly `amount` and `currency` (`invalid_body`); an amount that is not a whole number within the \
bounds (`invalid_amount`); a currency not offered (`unsupported_currency`).",
            body = ErrorBody,
            examples(
                ("invalidAmount" = (value = json!(doc::error_example(
                    ErrorCode::InvalidAmount,
                    "'amount' must be a whole number of minor units from 100 to 50000.",
                )))),
                ("unsupportedCurrency" = (value = json!(doc::error_example(
                    ErrorCode::UnsupportedCurrency,
                    "'currency' must be one of: USD.",
                )))),
            )),
        (status = 404, description = "No route (`not_found`).", body = ErrorBody),
        (status = 409, description = "The user holds 5 pending top-ups already \
(`too_many_pending_top_ups`): pay for one, or wait for its Checkout Session to expire (an hour \
after it was opened). A repeat of one of their keys is still answered its top-up.",
            body = ErrorBody,
            example = json!(doc::error_example(ErrorCode::TooManyPendingTopUps, TOO_MANY_PENDING))),
        (status = 413, response = doc::PayloadTooLarge),
        (status = 415, response = doc::UnsupportedMediaType),
        (status = 422, description = "This `Idempotency-Key` asked for another top-up (another \
amount or currency) (`idempotency_key_reused`).",
            body = ErrorBody,
            example = json!(doc::error_example(
                ErrorCode::IdempotencyKeyReused,
                "This Idempotency-Key was used for another top-up (another amount or currency).",
            ))),
        (status = 502, description = "Stripe refused to open the Checkout Session \
(`payment_provider_error`).",
            body = ErrorBody,
            example = json!(doc::error_example(
                ErrorCode::PaymentProviderError,
                "The payment provider refused this top-up.",
            ))),
        doc::SignedIn,
    ),
)]
pub async fn create_top_up<S>(
    State(state): State<Arc<TopUpState<S>>>,
    Fan(identity): Fan,
    IdempotencyKey(key): IdempotencyKey,
    Json(body): Json<TopUpBody>,
) -> Result<Response, ApiError>
where
    S: CreateTopUp + SetCheckout,
{
    let amount = state
        .policy
        .check(&body.amount, &body.currency)
        .map_err(|refusal| refused(refusal, &state.policy))?;
    let asked = TopUp::pending(
        top_up_id(&identity.user_id, &key),
        identity.user_id.clone(),
        amount,
        Timestamp::now(),
    );
    let created = state
        .store
        .create_top_up(&asked)
        .await
        .map_err(|error| match error {
            CreateTopUpError::TooManyPending(_) => too_many_pending(),
            CreateTopUpError::Store(error) => error.into(),
        })?;
    let (mut top_up, replayed) = match created {
        CreatedTopUp::New(top_up) => {
            // The one place a top-up is created.
            tracing::info!(top_up_id = %top_up.id, "top-up created");
            metrics::count(Metric::TopUpsCreated);
            (top_up, false)
        }
        CreatedTopUp::Existing(existing) if !existing.is_repeated_by(&asked.amount) => {
            return Err(ApiError::refused(
                ErrorCode::IdempotencyKeyReused,
                "This Idempotency-Key was used for another top-up (another amount or currency).",
            ));
        }
        CreatedTopUp::Existing(existing) => (existing, true),
    };
    if top_up.checkout.is_none() {
        let checkout = state
            .stripe
            .create_checkout_session(&top_up, &state.return_urls)
            .await
            .map_err(|error| {
                stripe_failure(
                    error,
                    &format!("top-up {}", top_up.id),
                    "The payment provider refused this top-up.",
                )
            })?;
        top_up = state.store.set_checkout(&top_up.id, &checkout).await?;
    }
    let mut response = answer(StatusCode::CREATED, &top_up);
    let location = fill(
        &<__path_get_top_up as utoipa::Path>::path(),
        &[top_up.id.as_str()],
    );
    if let Ok(location) = HeaderValue::from_str(&location) {
        response.headers_mut().insert(header::LOCATION, location);
    }
    if replayed {
        mark_replayed(&mut response);
    }
    Ok(response)
}

fn refused(refusal: TopUpRefusal, policy: &TopUpPolicy) -> ApiError {
    match refusal {
        TopUpRefusal::InvalidAmount => ApiError::refused(
            ErrorCode::InvalidAmount,
            format!(
                "'amount' must be a whole number of minor units from {} to {}.",
                policy.min_amount, policy.max_amount
            ),
        ),
        TopUpRefusal::UnsupportedCurrency => ApiError::refused(
            ErrorCode::UnsupportedCurrency,
            format!(
                "'currency' must be one of: {}.",
                policy.currencies.join(", ")
            ),
        ),
    }
}

/// The caller's top-up; anybody else's, or none, is the same 404 (whether it exists is not
/// told). One read.
#[utoipa::path(
    get,
    path = "/api/me/cash/top-ups/{topUpId}",
    operation_id = "getTopUp",
    tag = "Cash",
    summary = "Get one of the signed-in user's top-ups",
    description = "The top-up as it is now: `pending` (not paid yet), `completed` (paid and \
credited), `failed` (the payment failed) or `expired` (the Checkout Session expired unpaid). \
Another user's top-up, or none, is the same 404 `top_up_not_found`.",
    security(("sessionToken" = [])),
    params(TopUpPath),
    responses(
        (status = 200, description = "The top-up.", body = TopUpAnswer),
        (status = 404, description = "The user has no top-up with this id (`top_up_not_found`), \
or the id is not an id (`not_found`).",
            body = ErrorBody,
            examples(
                ("unknown" = (value = json!(doc::error_example(
                    ErrorCode::TopUpNotFound,
                    "You have no top-up with this id.",
                )))),
                ("notAnId" = (value = json!(doc::not_an_id()))),
            )),
        doc::SignedIn,
    ),
)]
pub async fn get_top_up<S: GetTopUp>(
    State(state): State<Arc<TopUpState<S>>>,
    Path(TopUpPath { top_up_id }): Path<TopUpPath>,
    Fan(identity): Fan,
) -> Result<Response, ApiError> {
    let top_up = state
        .store
        .get_top_up(&top_up_id)
        .await?
        .filter(|top_up| top_up.user_id == identity.user_id)
        .ok_or_else(|| {
            ApiError::refused(ErrorCode::TopUpNotFound, "You have no top-up with this id.")
        })?;
    Ok(answer(StatusCode::OK, &top_up))
}
