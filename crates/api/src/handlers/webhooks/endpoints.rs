//! The operators' endpoints (issue 46; docs/events.md, "Operating webhooks"), served by
//! `webhook-endpoints` and authorized by IAM: create (its secret shown in that answer only),
//! list, read, change (one conditional write at the revision read), delete and rotate the
//! secret (the previous one signs on for 24 hours). The deliveries' routes are in
//! [`super::operations`].

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::{EndpointsQueue, in_process};
use crate::http::error::{ApiError, ErrorCode};
use crate::http::extract::{FromJsonBody, Json, Path};
use crate::http::operator::{Operates, Operator, OperatorAuth};
use crate::http::request::json_object;
use crate::http::response::json_response;
use crate::http::routes::{LocalProcess, LocalState};
use crate::openapi::responses as doc;
use domain::events::EventType;
use domain::timestamp::Timestamp;
use domain::webhooks::endpoint::{
    Endpoint, EndpointChange, EndpointId, EndpointState, EndpointUrl, SecretText, Secrets,
    Subscription, UrlPolicy, normalised_description,
};
use store::webhooks::{ManageEndpoints, WebhookEndpoints};

/// The operators' webhook state: the store, the deliveries queue, the URLs allowed and how
/// operators are known.
pub struct EndpointsState<S> {
    pub store: S,
    pub queue: Arc<dyn EndpointsQueue>,
    pub url_policy: UrlPolicy,
    pub operators: OperatorAuth,
    pub max_body_bytes: usize,
}

crate::http::extract::handler_state!(EndpointsState: max_body_bytes);

impl<S: Send + Sync + 'static> Operates for EndpointsState<S> {
    fn operators(&self) -> &OperatorAuth {
        &self.operators
    }
}

/// local-api: deliveries sent in-process by the sender's own engine, to loopback receivers too.
impl<S> LocalState<S> for EndpointsState<S>
where
    S: store::webhooks::WebhookStore + Clone + Send + Sync + 'static,
{
    fn local(store: &S, process: &LocalProcess) -> Self {
        Self {
            store: store.clone(),
            queue: in_process::InProcessQueue::start(store.clone(), process.webhook_retry_scale),
            url_policy: UrlPolicy::AlsoLoopbackHttp,
            operators: OperatorAuth::LocalKey(process.operator_key.clone()),
            max_body_bytes: process.max_body_bytes,
        }
    }
}

/// An endpoint as operators read it: never its secrets.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = WebhookEndpoint)]
pub struct EndpointJson {
    #[schema(value_type = String, pattern = "^ep_[0-9A-HJKMNP-TV-Z]{26}$")]
    pub id: EndpointId,
    pub url: String,
    /// The types it receives; `null`: every type.
    pub event_types: Option<Vec<EventType>>,
    pub description: String,
    pub enabled: bool,
    /// Why it is disabled: `operator`, `gone` (it answered 410) or `failing` (3 days of failed
    /// attempts).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disabled_reason: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub disabled_at: Option<Timestamp>,
    /// When its current streak of failed attempts began.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub failing_since: Option<Timestamp>,
    /// Until when the previous secret still signs, after a rotation.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub previous_secret_until: Option<Timestamp>,
    /// The count of its writes: send it back as a change's `revision`.
    pub revision: u64,
}

impl EndpointJson {
    pub fn of(endpoint: &Endpoint) -> Self {
        let (disabled_reason, disabled_at) = match endpoint.state {
            EndpointState::Enabled => (None, None),
            EndpointState::Disabled { reason, at } => (Some(reason.into()), Some(at)),
        };
        Self {
            id: endpoint.id.clone(),
            url: endpoint.url.as_str().to_owned(),
            event_types: match &endpoint.subscription {
                Subscription::All => None,
                Subscription::Only(types) => Some(types.iter().copied().collect()),
            },
            description: endpoint.description.clone(),
            enabled: endpoint.state.is_enabled(),
            disabled_reason,
            disabled_at,
            failing_since: endpoint.failing_since,
            previous_secret_until: endpoint.secrets.previous.as_ref().map(|(_, until)| *until),
            revision: endpoint.revision,
        }
    }
}

/// An endpoint with its new secret: the one answer that shows it.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = WebhookEndpointWithSecret)]
pub struct WithSecret {
    #[serde(flatten)]
    pub endpoint: EndpointJson,
    /// The signing secret (`whsec_`, Standard Webhooks): shown here once, never again.
    #[schema(pattern = "^whsec_[A-Za-z0-9+/=]+$")]
    pub secret: String,
}

fn invalid_body(message: impl Into<std::borrow::Cow<'static, str>>) -> ApiError {
    ApiError::refused(ErrorCode::InvalidBody, message)
}

fn url(text: &str, policy: UrlPolicy) -> Result<EndpointUrl, ApiError> {
    EndpointUrl::parse(text, policy).map_err(|error| invalid_body(format!("'url': {error}.")))
}

fn description(text: &str) -> Result<String, ApiError> {
    normalised_description(text).map_err(|error| invalid_body(format!("'description': {error}.")))
}

/// `eventTypes` as a subscription: `null` every type, a list those (at least one).
fn subscription(types: Option<Vec<EventType>>) -> Result<Subscription, ApiError> {
    match types {
        None => Ok(Subscription::All),
        Some(types) if types.is_empty() => Err(invalid_body(
            "'eventTypes' names at least one type, or is null for every type.",
        )),
        Some(types) => Ok(Subscription::Only(types.into_iter().collect())),
    }
}

fn new_secret() -> Result<SecretText, ApiError> {
    SecretText::generate().map_err(|error| ApiError::Internal {
        detail: format!("no random secret: {error}"),
    })
}

pub(super) fn endpoint_not_found() -> ApiError {
    ApiError::refused(
        ErrorCode::EndpointNotFound,
        "No webhook endpoint of this id.",
    )
}

/// The endpoint named by the path.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(rename_all = "camelCase", parameter_in = Path)]
pub struct EndpointPath {
    /// The endpoint's `id`.
    #[param(
        value_type = String,
        pattern = "^ep_[0-9A-HJKMNP-TV-Z]{26}$",
        example = "ep_01JDZ8Q5V6M3T9W2X4Y7Z8A1BC"
    )]
    pub endpoint_id: EndpointId,
}

/// The endpoint of the path, or 404 `endpoint_not_found`.
pub(super) async fn read_endpoint(
    store: &impl WebhookEndpoints,
    id: &EndpointId,
) -> Result<Endpoint, ApiError> {
    store.endpoint(id).await?.ok_or_else(endpoint_not_found)
}

/// The body of `POST /api/webhooks/endpoints`.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = CreateWebhookEndpoint)]
pub struct CreateBody {
    /// An absolute `https` URL, at most 2,048 bytes, without credentials or fragment.
    url: String,
    /// The types it wants; absent or `null`: every type.
    #[serde(default)]
    event_types: Option<Vec<EventType>>,
    /// At most 200 characters, white space made single spaces.
    #[serde(default)]
    description: String,
}

impl FromJsonBody for CreateBody {
    fn from_json(body: &[u8]) -> Result<Self, ApiError> {
        json_object(
            body,
            "The body must be a JSON object of 'url', and optionally 'eventTypes' (a list of \
             event types, or null) and 'description', and nothing else.",
        )
    }
}

/// `POST /api/webhooks/endpoints`: a new endpoint and its secret.
#[utoipa::path(
    post,
    path = "/api/webhooks/endpoints",
    operation_id = "createWebhookEndpoint",
    tag = "Webhooks",
    summary = "Create a webhook endpoint (operators)",
    description = "A new endpoint, enabled, receiving the types named (every type when \
`eventTypes` is absent or null) from now on. The answer holds its signing secret (`whsec_`): \
the only time it is shown. Authorized by IAM.",
    security(("operatorIam" = [])),
    request_body = CreateBody,
    responses(
        (status = 201, description = "The endpoint and its secret.", body = WithSecret),
        (status = 400, response = doc::BadRequest),
        (status = 403, response = doc::OperatorRequired),
    ),
)]
pub async fn create_endpoint<S: ManageEndpoints + WebhookEndpoints>(
    State(state): State<Arc<EndpointsState<S>>>,
    _operator: Operator,
    Json(body): Json<CreateBody>,
) -> Result<Response, ApiError> {
    let secret = new_secret()?;
    let endpoint = Endpoint {
        id: EndpointId::generate(),
        url: url(&body.url, state.url_policy)?,
        subscription: subscription(body.event_types)?,
        description: description(&body.description)?,
        state: EndpointState::Enabled,
        secrets: Secrets {
            current: secret.clone(),
            previous: None,
        },
        failing_since: None,
        revision: 1,
    };
    if !state.store.create_endpoint(&endpoint).await? {
        return Err(ApiError::Internal {
            detail: "a new endpoint id was taken".into(),
        });
    }
    Ok(json_response(
        StatusCode::CREATED,
        &WithSecret {
            endpoint: EndpointJson::of(&endpoint),
            secret: secret.expose().to_owned(),
        },
    ))
}

/// Every endpoint.
#[derive(Serialize, ToSchema)]
#[schema(as = WebhookEndpoints)]
pub struct EndpointsJson {
    endpoints: Vec<EndpointJson>,
}

/// `GET /api/webhooks/endpoints`: every endpoint, without secrets.
#[utoipa::path(
    get,
    path = "/api/webhooks/endpoints",
    operation_id = "listWebhookEndpoints",
    tag = "Webhooks",
    summary = "Every webhook endpoint (operators)",
    description = "Every endpoint, enabled or not, by id; never a secret. Authorized by IAM.",
    security(("operatorIam" = [])),
    responses(
        (status = 200, description = "The endpoints.", body = EndpointsJson),
        (status = 403, response = doc::OperatorRequired),
    ),
)]
pub async fn list_endpoints<S: WebhookEndpoints>(
    State(state): State<Arc<EndpointsState<S>>>,
    _operator: Operator,
) -> Result<Response, ApiError> {
    let mut endpoints = state.store.endpoints().await?;
    endpoints.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(json_response(
        StatusCode::OK,
        &EndpointsJson {
            endpoints: endpoints.iter().map(EndpointJson::of).collect(),
        },
    ))
}

/// `GET /api/webhooks/endpoints/{endpointId}`: one endpoint, without secrets.
#[utoipa::path(
    get,
    path = "/api/webhooks/endpoints/{endpointId}",
    operation_id = "getWebhookEndpoint",
    tag = "Webhooks",
    summary = "One webhook endpoint (operators)",
    description = "The endpoint; never a secret. Authorized by IAM.",
    security(("operatorIam" = [])),
    params(EndpointPath),
    responses(
        (status = 200, description = "The endpoint.", body = EndpointJson),
        (status = 403, response = doc::OperatorRequired),
        (status = 404, response = doc::EndpointNotFound),
    ),
)]
pub async fn get_endpoint<S: WebhookEndpoints>(
    State(state): State<Arc<EndpointsState<S>>>,
    Path(EndpointPath { endpoint_id }): Path<EndpointPath>,
    _operator: Operator,
) -> Result<Response, ApiError> {
    let endpoint = read_endpoint(&state.store, &endpoint_id).await?;
    Ok(json_response(StatusCode::OK, &EndpointJson::of(&endpoint)))
}

/// Reads a member that may be `null`: `Some(None)`, unlike an absent one (`None`).
fn present<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(
    deserializer: D,
) -> Result<Option<T>, D::Error> {
    T::deserialize(deserializer).map(Some)
}

/// The body of `PATCH /api/webhooks/endpoints/{endpointId}`: each member given is changed.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = UpdateWebhookEndpoint)]
pub struct UpdateBody {
    url: Option<String>,
    /// A list of types, or `null` for every type.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<Vec<EventType>>)]
    event_types: Option<Option<Vec<EventType>>>,
    description: Option<String>,
    /// `false` disables it, `true` enables it (and ends its failing streak).
    enabled: Option<bool>,
    /// The revision the change was decided on (the endpoint's as read): 409
    /// `endpoint_changed` when it changed since. Absent: the revision this request reads.
    revision: Option<u64>,
}

impl FromJsonBody for UpdateBody {
    fn from_json(body: &[u8]) -> Result<Self, ApiError> {
        json_object(
            body,
            "The body must be a JSON object of any of 'url', 'eventTypes', 'description', \
             'enabled' and 'revision', and nothing else.",
        )
    }
}

fn endpoint_changed() -> ApiError {
    ApiError::refused(
        ErrorCode::EndpointChanged,
        "The endpoint changed since this revision: read it again, then change it.",
    )
}

/// Writes `next` (decided on `next.revision`): what was stored, 404 when it is gone, 409 when
/// another write came first.
async fn replace(
    store: &(impl ManageEndpoints + WebhookEndpoints),
    next: &Endpoint,
) -> Result<Endpoint, ApiError> {
    match store.replace_endpoint(next).await? {
        Some(stored) => Ok(stored),
        None => match store.endpoint(&next.id).await? {
            None => Err(endpoint_not_found()),
            Some(_) => Err(endpoint_changed()),
        },
    }
}

/// `PATCH /api/webhooks/endpoints/{endpointId}`: changes an endpoint's settings.
#[utoipa::path(
    patch,
    path = "/api/webhooks/endpoints/{endpointId}",
    operation_id = "updateWebhookEndpoint",
    tag = "Webhooks",
    summary = "Change, disable or enable a webhook endpoint (operators)",
    description = "Each of `url`, `eventTypes`, `description` and `enabled` given replaces its \
own, in one write conditioned on the endpoint's `revision` (the one sent, else the one this \
request reads): a change made meanwhile, by another operator or by a sender disabling it, is \
never overwritten (409 `endpoint_changed`: read it again). Authorized by IAM.",
    security(("operatorIam" = [])),
    params(EndpointPath),
    request_body = UpdateBody,
    responses(
        (status = 200, description = "The endpoint as changed.", body = EndpointJson),
        (status = 400, response = doc::BadRequest),
        (status = 403, response = doc::OperatorRequired),
        (status = 404, response = doc::EndpointNotFound),
        (status = 409, response = doc::EndpointChanged),
    ),
)]
pub async fn update_endpoint<S: ManageEndpoints + WebhookEndpoints>(
    State(state): State<Arc<EndpointsState<S>>>,
    Path(EndpointPath { endpoint_id }): Path<EndpointPath>,
    _operator: Operator,
    Json(body): Json<UpdateBody>,
) -> Result<Response, ApiError> {
    let change = EndpointChange {
        url: body
            .url
            .map(|text| url(&text, state.url_policy))
            .transpose()?,
        subscription: body.event_types.map(subscription).transpose()?,
        description: body.description.as_deref().map(description).transpose()?,
        enabled: body.enabled,
    };
    let current = read_endpoint(&state.store, &endpoint_id).await?;
    if body
        .revision
        .is_some_and(|revision| revision != current.revision)
    {
        return Err(endpoint_changed());
    }
    let stored = replace(&state.store, &current.changed(change, Timestamp::now())).await?;
    Ok(json_response(StatusCode::OK, &EndpointJson::of(&stored)))
}

/// `DELETE /api/webhooks/endpoints/{endpointId}`.
#[utoipa::path(
    delete,
    path = "/api/webhooks/endpoints/{endpointId}",
    operation_id = "deleteWebhookEndpoint",
    tag = "Webhooks",
    summary = "Delete a webhook endpoint (operators)",
    description = "The endpoint is gone: its queued deliveries are dropped when due; their \
records stay readable until they expire (30 days). Authorized by IAM.",
    security(("operatorIam" = [])),
    params(EndpointPath),
    responses(
        (status = 204, description = "Deleted."),
        (status = 403, response = doc::OperatorRequired),
        (status = 404, response = doc::EndpointNotFound),
    ),
)]
pub async fn delete_endpoint<S: ManageEndpoints>(
    State(state): State<Arc<EndpointsState<S>>>,
    Path(EndpointPath { endpoint_id }): Path<EndpointPath>,
    _operator: Operator,
) -> Result<StatusCode, ApiError> {
    if state.store.delete_endpoint(&endpoint_id).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(endpoint_not_found())
    }
}

/// `POST /api/webhooks/endpoints/{endpointId}/rotate`: a new secret.
#[utoipa::path(
    post,
    path = "/api/webhooks/endpoints/{endpointId}/rotate",
    operation_id = "rotateWebhookEndpointSecret",
    tag = "Webhooks",
    summary = "Rotate a webhook endpoint's secret (operators)",
    description = "A new signing secret, shown in this answer only. For 24 hours the previous \
one signs too (each delivery carries both signatures), so a receiver changes its secret \
without missing a delivery; a rotation during that time ends the older one's grace. Authorized \
by IAM.",
    security(("operatorIam" = [])),
    params(EndpointPath),
    responses(
        (status = 200, description = "The endpoint and its new secret.", body = WithSecret),
        (status = 403, response = doc::OperatorRequired),
        (status = 404, response = doc::EndpointNotFound),
        (status = 409, response = doc::EndpointChanged),
    ),
)]
pub async fn rotate_secret<S: ManageEndpoints + WebhookEndpoints>(
    State(state): State<Arc<EndpointsState<S>>>,
    Path(EndpointPath { endpoint_id }): Path<EndpointPath>,
    _operator: Operator,
) -> Result<Response, ApiError> {
    let current = read_endpoint(&state.store, &endpoint_id).await?;
    let secret = new_secret()?;
    let stored = replace(
        &state.store,
        &current.rotated(secret.clone(), Timestamp::now()),
    )
    .await?;
    Ok(json_response(
        StatusCode::OK,
        &WithSecret {
            endpoint: EndpointJson::of(&stored),
            secret: secret.expose().to_owned(),
        },
    ))
}
