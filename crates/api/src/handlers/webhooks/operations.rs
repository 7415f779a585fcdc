//! The operators' deliveries (issue 46; docs/events.md, "Operating webhooks"): a test event, an
//! endpoint's deliveries and their attempts, a delivery retried now, and a time range of the
//! feed replayed to one endpoint. Each queues through the same deliveries queue the dispatcher
//! uses, so the sender makes, signs and records every attempt alike.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use futures_util::future::try_join_all;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::endpoints::{EndpointPath, EndpointsState, read_endpoint};
use super::{DeliveryMessage, QUEUE_BATCH, Queued};
use crate::http::error::{ApiError, ErrorCode};
use crate::http::extract::{FromJsonBody, Json, Path};
use crate::http::operator::Operator;
use crate::http::request::json_object;
use crate::http::response::json_response;
use crate::openapi::responses as doc;
use domain::events::{API_VERSION, EventId, RETENTION_SECONDS, StoredEvent};
use domain::timestamp::Timestamp;
use domain::webhooks::delivery::{AttemptResult, Delivery, DeliveryId};
use domain::webhooks::endpoint::Endpoint;
use store::events::{EventCursor, GetEvent, ListEvents, MAX_PAGE};
use store::webhooks::{DeliveryRecord, WebhookDeliveries, WebhookEndpoints};

/// The most events one replay request queues, and the most hours of the feed it reads: a
/// longer range is continued from the answer's `next`.
pub const REPLAY_MAX_EVENTS: usize = MAX_PAGE;
pub const REPLAY_MAX_READS: usize = 24;

/// The deliveries an endpoint's listing holds.
pub const DELIVERIES_LISTED: usize = 50;

/// An endpoint that is not enabled gets nothing queued (its sender would drop it).
fn enabled(endpoint: Endpoint) -> Result<Endpoint, ApiError> {
    if endpoint.state.is_enabled() {
        Ok(endpoint)
    } else {
        Err(ApiError::refused(
            ErrorCode::EndpointDisabled,
            "The endpoint is disabled: enable it first (PATCH with 'enabled': true).",
        ))
    }
}

/// Queues each of `deliveries` (their bodies beside), due now, ten to a call; 503 when the
/// queue took not all (queuing one again is harmless: an attempt is recorded once).
async fn queue_now(
    state: &EndpointsState<impl Send + Sync>,
    deliveries: Vec<(Delivery, String)>,
) -> Result<(), ApiError> {
    let queued: Vec<Queued> = deliveries
        .into_iter()
        .map(|(delivery, body)| Queued {
            message: DeliveryMessage { delivery, body },
            delay: Duration::ZERO,
        })
        .collect();
    for batch in queued.chunks(QUEUE_BATCH) {
        let failed =
            state
                .queue
                .send_batch(batch)
                .await
                .map_err(|error| ApiError::Unavailable {
                    what: "sqs",
                    detail: error.to_string(),
                })?;
        if !failed.is_empty() {
            return Err(ApiError::Unavailable {
                what: "sqs",
                detail: format!("{} deliveries not taken", failed.len()),
            });
        }
    }
    Ok(())
}

/// The next attempt of delivering `event` to `endpoint`: one after those recorded.
fn next_attempt(record: Option<&DeliveryRecord>, event: &EventId, endpoint: &Endpoint) -> Delivery {
    Delivery {
        event_id: event.clone(),
        endpoint_id: endpoint.id.clone(),
        attempt: record
            .map_or(1, |record| record.attempts.len() + 1)
            .try_into()
            .unwrap_or(u32::MAX),
        due: Timestamp::now(),
    }
}

/// A queued delivery's id.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = QueuedDelivery)]
pub struct QueuedJson {
    #[schema(value_type = String)]
    delivery_id: DeliveryId,
}

/// `POST /api/webhooks/endpoints/{endpointId}/test`: a test event to the endpoint.
#[utoipa::path(
    post,
    path = "/api/webhooks/endpoints/{endpointId}/test",
    operation_id = "testWebhookEndpoint",
    tag = "Webhooks",
    summary = "Send a test event to a webhook endpoint (operators)",
    description = "Queues a `webhook.test` event (subject `{\"kind\": \"endpoint\", \"id\": \
<endpointId>}`, `sequence` 0, `data` `{\"endpointId\"}`) to the endpoint, delivered, signed, \
retried and recorded as any event. It is not in the feed, so it cannot be retried by hand. \
Authorized by IAM.",
    security(("operatorIam" = [])),
    params(EndpointPath),
    responses(
        (status = 202, description = "The test delivery, queued.", body = QueuedJson),
        (status = 403, response = doc::OperatorRequired),
        (status = 404, response = doc::EndpointNotFound),
        (status = 409, response = doc::EndpointDisabled),
    ),
)]
pub async fn test_endpoint<S: WebhookEndpoints>(
    State(state): State<Arc<EndpointsState<S>>>,
    Path(EndpointPath { endpoint_id }): Path<EndpointPath>,
    _operator: Operator,
) -> Result<Response, ApiError> {
    let endpoint = enabled(read_endpoint(&state.store, &endpoint_id).await?)?;
    let now = Timestamp::now();
    let id = EventId::new(now);
    let body = serde_json::json!({
        "id": id,
        "type": "webhook.test",
        "occurredAt": now.rfc3339_millis(),
        "subject": {"kind": "endpoint", "id": endpoint.id},
        "sequence": 0,
        "apiVersion": API_VERSION,
        "data": {"endpointId": endpoint.id},
    })
    .to_string();
    let delivery = next_attempt(None, &id, &endpoint);
    let delivery_id = delivery.id();
    queue_now(&state, vec![(delivery, body)]).await?;
    Ok(json_response(
        StatusCode::ACCEPTED,
        &QueuedJson { delivery_id },
    ))
}

/// One attempt as recorded.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = WebhookAttempt)]
struct AttemptJson {
    number: u32,
    #[schema(value_type = String, format = DateTime)]
    at: Timestamp,
    /// The answer's status, when one came.
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<u16>,
    /// Why none came: `timeout`, `refused_address`, `refused_scheme`, `dns`, `connection`, `tls`.
    #[serde(skip_serializing_if = "Option::is_none")]
    failure: Option<&'static str>,
    latency_ms: u64,
    /// The answer's first 1 KB, as text.
    excerpt: String,
}

/// A delivery and its attempts.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = WebhookDelivery)]
struct DeliveryJson {
    #[schema(value_type = String)]
    id: DeliveryId,
    #[schema(value_type = String)]
    event_id: EventId,
    /// `retrying`, `delivered`, `failed` or `abandoned`.
    status: &'static str,
    attempts: Vec<AttemptJson>,
}

impl DeliveryJson {
    fn of(record: &DeliveryRecord) -> Self {
        Self {
            id: record.id.clone(),
            event_id: record.event_id.clone(),
            status: record.status.as_str(),
            attempts: record
                .attempts
                .iter()
                .map(|attempt| {
                    let (status, failure) = match attempt.result {
                        AttemptResult::Status(code) => (Some(code), None),
                        AttemptResult::Failed(failure) => (None, Some(failure.into())),
                    };
                    AttemptJson {
                        number: attempt.number,
                        at: attempt.at,
                        status,
                        failure,
                        latency_ms: attempt.latency_ms,
                        excerpt: attempt.excerpt.clone(),
                    }
                })
                .collect(),
        }
    }
}

/// An endpoint's newest deliveries.
#[derive(Serialize, ToSchema)]
#[schema(as = WebhookDeliveries)]
struct DeliveriesJson {
    deliveries: Vec<DeliveryJson>,
}

/// `GET /api/webhooks/endpoints/{endpointId}/deliveries`: its deliveries and their attempts.
#[utoipa::path(
    get,
    path = "/api/webhooks/endpoints/{endpointId}/deliveries",
    operation_id = "listWebhookDeliveries",
    tag = "Webhooks",
    summary = "A webhook endpoint's deliveries and their attempts (operators)",
    description = "The endpoint's 50 newest deliveries (by event), each with every attempt: \
when, the answer's status or why none came, its latency and the answer's first 1 KB. Kept 30 \
days. Authorized by IAM.",
    security(("operatorIam" = [])),
    params(EndpointPath),
    responses(
        (status = 200, description = "The deliveries.", body = DeliveriesJson),
        (status = 403, response = doc::OperatorRequired),
        (status = 404, response = doc::EndpointNotFound),
    ),
)]
pub async fn list_deliveries<S: WebhookEndpoints + WebhookDeliveries>(
    State(state): State<Arc<EndpointsState<S>>>,
    Path(EndpointPath { endpoint_id }): Path<EndpointPath>,
    _operator: Operator,
) -> Result<Response, ApiError> {
    read_endpoint(&state.store, &endpoint_id).await?;
    let deliveries = state
        .store
        .endpoint_deliveries(&endpoint_id, DELIVERIES_LISTED)
        .await?;
    Ok(json_response(
        StatusCode::OK,
        &DeliveriesJson {
            deliveries: deliveries.iter().map(DeliveryJson::of).collect(),
        },
    ))
}

/// The delivery named by the path.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(rename_all = "camelCase", parameter_in = Path)]
pub struct DeliveryPath {
    /// The delivery's `id`.
    #[param(
        value_type = String,
        example = "dlv_01JDZ8Q5V6M3T9W2X4Y7Z8A1BC_01JDZ8Q5V6M3T9W2X4Y7Z8A1BD"
    )]
    pub delivery_id: DeliveryId,
}

/// `POST /api/webhooks/deliveries/{deliveryId}/retry`: one more attempt, now.
#[utoipa::path(
    post,
    path = "/api/webhooks/deliveries/{deliveryId}/retry",
    operation_id = "retryWebhookDelivery",
    tag = "Webhooks",
    summary = "Retry a webhook delivery now (operators)",
    description = "Queues the delivery's next attempt, due now, whatever its status: its event \
as the feed holds it (404 `event_not_found` once it expired, or for a test event). A \
scheduled retry of it that comes later finds its attempt made and is dropped. Authorized by \
IAM.",
    security(("operatorIam" = [])),
    params(DeliveryPath),
    responses(
        (status = 202, description = "Queued.", body = QueuedJson),
        (status = 403, response = doc::OperatorRequired),
        (status = 404, response = doc::DeliveryNotFound),
        (status = 409, response = doc::EndpointDisabled),
    ),
)]
pub async fn retry_delivery<S: WebhookEndpoints + WebhookDeliveries + GetEvent>(
    State(state): State<Arc<EndpointsState<S>>>,
    Path(DeliveryPath { delivery_id }): Path<DeliveryPath>,
    _operator: Operator,
) -> Result<Response, ApiError> {
    let record = state.store.delivery(&delivery_id).await?.ok_or_else(|| {
        ApiError::refused(
            ErrorCode::DeliveryNotFound,
            "No webhook delivery of this id.",
        )
    })?;
    let endpoint = enabled(read_endpoint(&state.store, &record.endpoint_id).await?)?;
    let event = state
        .store
        .get_event(&record.event_id)
        .await?
        .ok_or_else(|| {
            ApiError::refused(
                ErrorCode::EventNotFound,
                "The delivery's event is not in the feed (expired after 30 days, or a test event).",
            )
        })?;
    let delivery = next_attempt(Some(&record), &event.id, &endpoint);
    queue_now(&state, vec![(delivery, event.body)]).await?;
    Ok(json_response(
        StatusCode::ACCEPTED,
        &QueuedJson { delivery_id },
    ))
}

/// The body of a replay: `[since, until)`, continued after `after`.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = ReplayWebhookEvents)]
pub struct ReplayBody {
    /// The range's start (RFC 3339 UTC, within the last 30 days).
    #[schema(value_type = String, format = DateTime)]
    since: Timestamp,
    /// The range's end, excluded (not in the future).
    #[schema(value_type = String, format = DateTime)]
    until: Timestamp,
    /// Continue after this event (a previous answer's `next`).
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    after: Option<EventId>,
}

impl FromJsonBody for ReplayBody {
    fn from_json(body: &[u8]) -> Result<Self, ApiError> {
        json_object(
            body,
            "The body must be a JSON object of 'since' and 'until' (RFC 3339 UTC instants), \
             and optionally 'after' (an event id), and nothing else.",
        )
    }
}

/// What a replay request queued, and where to continue.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = WebhookReplay)]
struct ReplayJson {
    /// The deliveries queued by this request.
    queued: usize,
    /// The body of the request that continues the range; `null`: the range is done.
    next: Option<serde_json::Value>,
}

/// The range's events after `from`, at most [`REPLAY_MAX_EVENTS`] in at most
/// [`REPLAY_MAX_READS`] reads of the feed; and the cursor to continue from, `None` when the
/// range is done.
async fn range_events(
    store: &impl ListEvents,
    mut from: EventCursor,
    until: Timestamp,
    now: Timestamp,
) -> Result<(Vec<StoredEvent>, Option<EventCursor>), ApiError> {
    let mut events = Vec::new();
    for _ in 0..REPLAY_MAX_READS {
        let room = REPLAY_MAX_EVENTS - events.len();
        let page = store.events_from(&from, room, now).await?;
        let full = page.events.len() == room;
        for event in page.events {
            if event.occurred_at >= until {
                return Ok((events, None));
            }
            events.push(event);
        }
        let done = match &page.next {
            EventCursor::Since(at) => *at >= until || *at > now,
            // A short page after an event: the feed has nothing newer yet.
            EventCursor::After(_) => !full && page.next == from,
        };
        if done {
            return Ok((events, None));
        }
        from = page.next;
        if events.len() == REPLAY_MAX_EVENTS {
            break;
        }
    }
    Ok((events, Some(from)))
}

/// `POST /api/webhooks/endpoints/{endpointId}/replay`: a range of the feed, to one endpoint.
#[utoipa::path(
    post,
    path = "/api/webhooks/endpoints/{endpointId}/replay",
    operation_id = "replayWebhookEvents",
    tag = "Webhooks",
    summary = "Replay a time range's events to one webhook endpoint (operators)",
    description = "Queues to this endpoint alone every event of `[since, until)` it subscribes \
to, in time order, each as its delivery's next attempt (the same delivery id as when it was \
first sent). One request queues at most 100 events from at most 24 hours of the feed; `next` \
is then the body that continues (POST it again), `null` once the range is done. Authorized by \
IAM.",
    security(("operatorIam" = [])),
    params(EndpointPath),
    request_body = ReplayBody,
    responses(
        (status = 202, description = "Queued, and where to continue.", body = ReplayJson),
        (status = 400, response = doc::BadRequest),
        (status = 403, response = doc::OperatorRequired),
        (status = 404, response = doc::EndpointNotFound),
        (status = 409, response = doc::EndpointDisabled),
    ),
)]
pub async fn replay_events<S: WebhookEndpoints + WebhookDeliveries + ListEvents>(
    State(state): State<Arc<EndpointsState<S>>>,
    Path(EndpointPath { endpoint_id }): Path<EndpointPath>,
    _operator: Operator,
    Json(body): Json<ReplayBody>,
) -> Result<Response, ApiError> {
    let now = Timestamp::now();
    let oldest = now.plus_seconds(-RETENTION_SECONDS).unwrap_or(now);
    if !(oldest <= body.since && body.since < body.until && body.until <= now) {
        return Err(ApiError::refused(
            ErrorCode::InvalidBody,
            "'since' must be within the last 30 days and before 'until', and 'until' not in \
             the future.",
        ));
    }
    let endpoint = enabled(read_endpoint(&state.store, &endpoint_id).await?)?;
    let from = match body.after {
        Some(after) => EventCursor::After(after),
        None => EventCursor::Since(body.since),
    };
    let (events, next) = range_events(&state.store, from, body.until, now).await?;
    let wanted: Vec<StoredEvent> = events
        .into_iter()
        .filter(|event| endpoint.subscription.wants(event.event_type))
        .collect();
    let ids: Vec<DeliveryId> = wanted
        .iter()
        .map(|event| DeliveryId::of(&event.id, &endpoint.id))
        .collect();
    let records = try_join_all(ids.iter().map(|id| state.store.delivery(id))).await?;
    let queued = wanted.len();
    let deliveries = wanted
        .into_iter()
        .zip(records)
        .map(|(event, record)| {
            (
                next_attempt(record.as_ref(), &event.id, &endpoint),
                event.body,
            )
        })
        .collect();
    queue_now(&state, deliveries).await?;
    let next = next.map(|cursor| {
        let (since, after) = match cursor {
            EventCursor::After(id) => (body.since, Some(id)),
            EventCursor::Since(at) => (at, None),
        };
        serde_json::json!({"since": since, "until": body.until, "after": after})
    });
    Ok(json_response(
        StatusCode::ACCEPTED,
        &ReplayJson { queued, next },
    ))
}
