//! The fan's top-ups (the `cash-top-ups` function): `POST /api/me/cash/top-ups` asks for one and
//! opens its Stripe Checkout Session; `GET /api/me/cash/top-ups/{topUpId}` reads one.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use serde::{Deserialize, Serialize};

use crate::auth::TokenVerifier;
use crate::http::error::{ApiError, ErrorCode};
use crate::http::extract::{Fan, FromJsonBody, IdempotencyKey, Json, LimitsBodies, Path, Verifies};
use crate::http::request::json_object;
use crate::http::response::{json_response, mark_replayed};
use crate::http::routes::fill;
use crate::ids::TopUpId;
use crate::metrics::{self, Metric};
use crate::store::DynamoStore;
use crate::store::topups::{CreateTopUp, CreatedTopUp, GetTopUp, SetCheckout};
use crate::timestamp::Timestamp;
use crate::topups::stripe::{ReturnUrls, StripeClient, StripeError};
use crate::topups::{TopUp, TopUpPolicy, TopUpRefusal, TopUpStatus, top_up_id};

/// What the top-up handlers need.
pub struct TopUpState<S> {
    pub store: S,
    pub verifier: TokenVerifier,
    pub max_body_bytes: usize,
    pub policy: TopUpPolicy,
    pub stripe: StripeClient,
    pub return_urls: ReturnUrls,
}

impl<S: Send + Sync + 'static> Verifies for TopUpState<S> {
    fn verifier(&self) -> &TokenVerifier {
        &self.verifier
    }
}

impl<S: Send + Sync + 'static> LimitsBodies for TopUpState<S> {
    fn max_body_bytes(&self) -> usize {
        self.max_body_bytes
    }
}

/// `/api/me/cash/top-ups/{topUpId}`
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TopUpPath {
    pub top_up_id: TopUpId,
}

impl TopUpState<DynamoStore> {
    /// The state from the environment (`TABLE_NAME`, `AUTH_*`, `MAX_BODY_BYTES`, `TOPUP_*`,
    /// `STRIPE_API_BASE`, `STRIPE_SECRET_KEY`), warmed. Exits with a clear message when
    /// configuration is missing.
    pub async fn from_env() -> Self {
        use crate::config::{self, Env, StripeApi};
        use crate::runtime::{require, store_from_env, verifier_from_env, warm};
        let (store, dynamodb) = store_from_env();
        let state = Self {
            store,
            verifier: verifier_from_env(),
            max_body_bytes: require(config::max_body_bytes(&Env)),
            policy: require(config::top_up_policy(&Env)),
            stripe: StripeClient::new(&require(StripeApi::from_source(&Env))),
            return_urls: require(config::top_up_return_urls(&Env)),
        };
        warm(&dynamodb, Some(&state.verifier)).await;
        state
    }
}

/// A top-up as the API shows it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TopUpJson<'a> {
    id: &'a str,
    amount: u64,
    currency: &'a str,
    status: TopUpStatus,
    checkout_url: Option<&'a str>,
    created_at: Timestamp,
    completed_at: Option<Timestamp>,
}

/// `{"topUp": ...}`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TopUpAnswer<'a> {
    top_up: TopUpJson<'a>,
}

fn answer(status: StatusCode, top_up: &TopUp) -> Response {
    json_response(
        status,
        &TopUpAnswer {
            top_up: TopUpJson {
                id: &top_up.id,
                amount: top_up.amount.amount,
                currency: &top_up.amount.currency,
                status: top_up.status,
                checkout_url: top_up.checkout.as_ref().map(|c| c.url.as_str()),
                created_at: top_up.created_at,
                completed_at: top_up.completed_at,
            },
        },
    )
}

/// `{"amount": <minor units>, "currency": "USD"}`, checked against the policy by the handler.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopUpBody {
    amount: serde_json::Number,
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
/// 400), amount and currency (400); writes the pending top-up (one conditional put), opens its
/// Checkout Session at Stripe, stores it (one conditional update). 201 with `Location`. A repeat
/// of the key answers the same top-up as it is now, with `Idempotent-Replayed: true` (and
/// finishes it first when an earlier try could not reach Stripe); with another amount or
/// currency it is 422.
#[utoipa::path(
    post,
    path = "/api/me/cash/top-ups",
    operation_id = "create_top_up",
    tag = "top-ups"
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
    let (mut top_up, replayed) = match state.store.create_top_up(&asked).await? {
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
            .map_err(|error| stripe_failure(error, &top_up))?;
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

/// Stripe unreachable, slow, 5xx or 429: 503 (retry with the same key); any other refusal: 502.
/// The detail (for the log) holds Stripe's status, type and code, never the key.
fn stripe_failure(error: StripeError, top_up: &TopUp) -> ApiError {
    match error {
        StripeError::Unavailable(detail) => ApiError::Unavailable {
            what: "stripe",
            detail: format!("top-up {}: {detail}", top_up.id),
        },
        StripeError::Refused(detail) => {
            tracing::error!(top_up_id = %top_up.id, detail = %detail, "Stripe refused a Checkout Session");
            ApiError::refused(
                ErrorCode::PaymentProviderError,
                "The payment provider refused this top-up.",
            )
        }
    }
}

/// The caller's top-up; anybody else's, or none, is the same 404 (whether it exists is not
/// told). One read.
#[utoipa::path(
    get,
    path = "/api/me/cash/top-ups/{topUpId}",
    operation_id = "get_top_up",
    tag = "top-ups"
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
