//! `POST /api/webhooks/stripe` (the `stripe-webhook` function): Stripe's signed events settle
//! top-ups and card orders of products. Public (Stripe sends no token): the signature is the
//! only proof, and a request without a valid one changes nothing.
//!
//! Stripe delivers each event at least once, in no fixed order, and retries any answer but a
//! 2xx for three days: an event this API does not act on, or one about a top-up or order it does
//! not know, is answered 200 at once; a store failure is a 503, so that Stripe tries again. A
//! paid session that cannot be credited or granted (it does not match its top-up or order, the
//! ledger refuses the credit, or the order was closed before the payment came) is answered 200
//! too, since no retry would change it: it is counted (`TopUpsUnmatched`, `TopUpsUncredited`,
//! for orders too), alarmed on, and settled by hand (docs/operations.md).

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde::Serialize;

use crate::config::Secret;
use crate::http::error::{ApiError, ErrorBody, ErrorCode};
use crate::http::extract::{RawBody, handler_state};
use crate::http::request::invalid_json;
use crate::http::response::json_response;
use crate::http::routes::{LocalProcess, LocalState};
use crate::openapi::responses as doc;
use crate::openapi::schemas::always_true;
use domain::ids::{OrderId, UserId};
use domain::timestamp::Timestamp;
use domain::topups::event::{Action, Event, Session, action, check_order_session, check_session};
use domain::topups::signature;
use store::cash::CreditCashError;
use store::metrics::{self, Metric};
use store::products::{CloseOrder, CompleteOrder, CompleteOrderError, CompletedOrder, GetOrders};
use store::topups::{CompletedTopUp, GetTopUp, SettleTopUp};
use utoipa::ToSchema;

/// What the webhook handler needs.
pub struct WebhookState<S> {
    pub store: S,
    /// The endpoint's signing secret (`whsec_...`).
    pub secret: Secret,
    pub max_body_bytes: usize,
}

handler_state!(WebhookState: max_body_bytes);

impl<S: Send + Sync + Clone + 'static> LocalState<S> for WebhookState<S> {
    fn local(store: &S, process: &LocalProcess) -> Self {
        Self {
            store: store.clone(),
            secret: process.webhook_secret.clone(),
            max_body_bytes: process.max_body_bytes,
        }
    }
}

/// `{"received": true}`.
#[derive(Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct Received {
    #[schema(schema_with = always_true)]
    received: bool,
}

fn received() -> Response {
    json_response(StatusCode::OK, &Received { received: true })
}

/// Verifies the signature over the body as sent (400 `invalid_signature`), then acts on the
/// event by its type; 200 `{"received": true}` once handled.
#[utoipa::path(
    post,
    path = "/api/webhooks/stripe",
    operation_id = "stripeWebhook",
    tag = "Webhooks",
    summary = "Stripe's signed events (Checkout Sessions of top-ups and card orders)",
    description = "For Stripe only: no session token, the `Stripe-Signature` header is the proof. \
It must carry `t=<unix seconds>` within 300 s of now and a `v1` that is the hex HMAC-SHA256, keyed \
with the endpoint's signing secret, of `{t}.{body as sent}`; anything else is 400 \
`invalid_signature` and changes nothing.

`checkout.session.completed` (paid) and `checkout.session.async_payment_succeeded` complete the \
top-up named by `client_reference_id` and credit its amount once, when the session, \
`amount_total` and `currency` are the top-up's; `checkout.session.async_payment_failed` and \
`checkout.session.expired` mark it `failed` or `expired` (never a completed one). A session whose \
`client_reference_id` is `order:<orderId>` (metadata `orderId` and `userId`) pays for a card order \
of a product: paid, with the order's session, price and currency, it completes the order and \
grants it once; failed or expired, it closes the pending order and gives back its unit of stock \
and its count toward the fan's limit, once (a completed order is final). Any other event, or a \
top-up or order this deployment does not know, is answered 200 and ignored. A paid session that \
does not match its top-up or order, whose credit the ledger refuses, or whose order was closed \
before it was paid, is answered 200 (no retry would change it), credits and grants nothing, and \
is counted and alarmed on for the operator to settle. A store failure is a 503, so that Stripe \
retries.",
    security(),
    params(
        ("Stripe-Signature" = String, Header,
            description = "`t=<unix seconds>,v1=<hex HMAC-SHA256>` (more `v1`s while a secret \
rotates; `v0` ignored).",
            example = "t=1795237200,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd"),
    ),
    request_body(content = Event, description = "A Stripe event, verified byte for byte as sent."),
    responses(
        (status = 200, description = "The event was handled (or is ignored).", body = Received),
        (status = 400, description = "The signature does not hold (`invalid_signature`); a signed \
body that is not a Stripe event (`invalid_json`).",
            body = ErrorBody,
            example = json!(doc::error_example(
                ErrorCode::InvalidSignature,
                "The Stripe-Signature header does not sign this body.",
            ))),
        (status = 404, description = "No route (`not_found`).", body = ErrorBody),
        (status = 405, response = doc::MethodNotAllowed),
        (status = 413, response = doc::PayloadTooLarge),
        (status = 500, response = doc::InternalError),
        (status = 503, response = doc::Unavailable),
    ),
)]
pub async fn stripe_webhook<S>(
    State(state): State<Arc<WebhookState<S>>>,
    headers: HeaderMap,
    // lambda_http has already decoded API Gateway's base64 (`isBase64Encoded`): these are the
    // bytes Stripe signed.
    RawBody(body): RawBody,
) -> Result<Response, ApiError>
where
    S: GetTopUp + SettleTopUp + GetOrders + CompleteOrder + CloseOrder,
{
    let header = signature_header(&headers);
    signature::verify(
        header.as_deref(),
        &body,
        state.secret.expose(),
        Timestamp::now().unix_seconds(),
    )
    .map_err(|reason| {
        tracing::info!(reason = %reason, "webhook signature refused");
        ApiError::refused(
            ErrorCode::InvalidSignature,
            "The Stripe-Signature header does not sign this body.",
        )
    })?;
    let event: Event = serde_json::from_slice(&body).map_err(|_| invalid_json())?;
    handle(&state, &event).await?;
    Ok(received())
}

/// The `Stripe-Signature` header; sent more than once, its values joined with commas (as API
/// Gateway joins them).
fn signature_header(headers: &HeaderMap) -> Option<String> {
    let values: Vec<&str> = headers
        .get_all("stripe-signature")
        .iter()
        .filter_map(|value| value.to_str().ok())
        .collect();
    (!values.is_empty()).then(|| values.join(","))
}

async fn handle<S: GetTopUp + SettleTopUp + GetOrders + CompleteOrder + CloseOrder>(
    state: &WebhookState<S>,
    event: &Event,
) -> Result<(), ApiError> {
    let (event_id, kind) = (event.id.as_str(), event.kind.as_str());
    let session = match event.session() {
        Some(Ok(session)) => session,
        Some(Err(error)) => {
            tracing::warn!(event_id, kind, error = %error, "ignored: a session event without a readable session");
            return Ok(());
        }
        None => {
            tracing::info!(event_id, kind, "ignored: not an event this API acts on");
            return Ok(());
        }
    };
    let action = action(kind, session.payment_status.as_deref());
    match action {
        Action::Ignore => {
            tracing::info!(event_id, kind, "ignored: not an event this API acts on");
            return Ok(());
        }
        Action::AwaitPayment => {
            tracing::info!(
                event_id,
                kind,
                "session completed unpaid: waiting for its payment"
            );
            return Ok(());
        }
        Action::Complete | Action::Close(_) => {}
    }
    if let Some((user_id, order_id)) = session.order() {
        return settle_order(state, event, &session, action, (&user_id, &order_id)).await;
    }
    let Some(top_up_id) = session.top_up_id() else {
        tracing::info!(event_id, kind, "ignored: the session names no top-up");
        return Ok(());
    };
    let Some(top_up) = state.store.get_top_up(&top_up_id).await? else {
        tracing::info!(event_id, kind, top_up_id = %top_up_id, "ignored: a top-up this deployment does not know");
        return Ok(());
    };
    if let Err(mismatch) = check_session(&top_up, &session, action == Action::Complete) {
        if action == Action::Complete {
            // Paid, and not credited: a person settles it (docs/operations.md). 200: the event
            // and the top-up are both final, so Stripe's retries would only repeat this.
            metrics::count(Metric::TopUpsUnmatched);
            tracing::error!(event_id, kind, top_up_id = %top_up_id, mismatch = %mismatch, "a paid session does not match its top-up: not credited, settle it by hand");
        } else {
            tracing::warn!(event_id, kind, top_up_id = %top_up_id, mismatch = %mismatch, "a session event does not match its top-up: nothing changed");
        }
        return Ok(());
    }
    let Action::Close(status) = action else {
        return complete(state, event_id, &top_up).await;
    };
    let changed = state
        .store
        .close_top_up(&top_up, &session.id, status, Timestamp::now())
        .await?;
    tracing::info!(event_id, kind, top_up_id = %top_up_id, changed, "top-up closed unpaid");
    Ok(())
}

async fn complete<S: SettleTopUp>(
    state: &WebhookState<S>,
    event_id: &str,
    top_up: &domain::topups::TopUp,
) -> Result<(), ApiError> {
    match state.store.complete_top_up(top_up, Timestamp::now()).await {
        Ok(CompletedTopUp::Credited { .. }) => {
            // The one place a top-up is credited.
            tracing::info!(event_id, top_up_id = %top_up.id, "top-up credited");
            metrics::count(Metric::TopUpsCredited);
            Ok(())
        }
        Ok(CompletedTopUp::AlreadyCompleted) => {
            tracing::info!(event_id, top_up_id = %top_up.id, "top-up already completed: nothing changed");
            Ok(())
        }
        // An outage: 503, so that Stripe delivers it again.
        Err(CreditCashError::Store(error)) => Err(error.into()),
        // Paid, and refused by the ledger: a person settles it (docs/operations.md). 200, as
        // for a mismatch: a retry meets the same refusal for up to three days, while a 5xx
        // answered that long gets the endpoint reported, and at length disabled, by Stripe.
        Err(refusal) => {
            metrics::count(Metric::TopUpsUncredited);
            tracing::error!(event_id, top_up_id = %top_up.id, refusal = %refusal, "a paid top-up was not credited: settle it by hand");
            Ok(())
        }
    }
}

/// A card order's session event: completes the order (granting it once) or closes it (giving
/// back what it took once), as the event says.
async fn settle_order<S: GetOrders + CompleteOrder + CloseOrder>(
    state: &WebhookState<S>,
    event: &Event,
    session: &Session,
    action: Action,
    (user_id, order_id): (&UserId, &OrderId),
) -> Result<(), ApiError> {
    let (event_id, kind) = (event.id.as_str(), event.kind.as_str());
    let Some(order) = state.store.get_order(user_id, order_id).await? else {
        tracing::info!(event_id, kind, order_id = %order_id, "ignored: an order this deployment does not know");
        return Ok(());
    };
    if let Err(mismatch) = check_order_session(&order, session, action == Action::Complete) {
        if action == Action::Complete {
            metrics::count(Metric::TopUpsUnmatched);
            tracing::error!(event_id, kind, order_id = %order_id, mismatch = %mismatch, "a paid session does not match its order: not granted, settle it by hand");
        } else {
            tracing::warn!(event_id, kind, order_id = %order_id, mismatch = %mismatch, "a session event does not match its order: nothing changed");
        }
        return Ok(());
    }
    let Action::Close(status) = action else {
        return complete_order(state, event_id, &order).await;
    };
    let closed = state
        .store
        .close_order(&order, &session.id, status.of_order())
        .await?;
    tracing::info!(event_id, kind, order_id = %order_id, changed = closed.is_some(), "order closed unpaid");
    Ok(())
}

async fn complete_order<S: CompleteOrder>(
    state: &WebhookState<S>,
    event_id: &str,
    order: &domain::products::order::Order,
) -> Result<(), ApiError> {
    match state.store.complete_order(order, Timestamp::now()).await {
        Ok(CompletedOrder::Completed(_)) => {
            // The one place a card order is granted.
            tracing::info!(event_id, order_id = %order.id, "order completed and granted");
            Ok(())
        }
        Ok(CompletedOrder::AlreadyCompleted(_)) => {
            tracing::info!(event_id, order_id = %order.id, "order already completed: nothing changed");
            Ok(())
        }
        Err(CompleteOrderError::Store(error)) => Err(error.into()),
        // Paid after its close (an expiry delivered first), or gone: a person settles it, as a
        // refused top-up credit (200: a retry meets the same).
        Err(refusal) => {
            metrics::count(Metric::TopUpsUncredited);
            tracing::error!(event_id, order_id = %order.id, refusal = %refusal, "a paid order was not granted: settle it by hand");
            Ok(())
        }
    }
}
