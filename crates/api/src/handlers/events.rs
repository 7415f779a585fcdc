//! The events' feeds (issue 46, docs/events.md): `GET /api/me/events`, a fan's own events (their
//! activity feed), and, for operators (IAM), `GET /api/events` (every event, by time) and
//! `GET /api/events/{eventId}`. Each event is its stored envelope, the bytes every webhook
//! delivery of it carries, never serialised again. One function (`events`) serves the three: it
//! reads `EVENTS#` items only.

use std::sync::Arc;

use axum::extract::{FromRequestParts, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::Response;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::auth::TokenVerifier;
use crate::http::error::{ApiError, ErrorCode};
use crate::http::extract::{Fan, Path, QueryParams};
use crate::http::operator::{Operates, Operator, OperatorAuth};
use crate::http::paging::{invalid_query, limit};
use crate::http::response::json_text_response;
use crate::http::routes::{LocalProcess, LocalState};
use crate::openapi::responses as doc;
use crate::views::events::EventJson;
use domain::events::{EventId, StoredEvent, Subject};
use domain::timestamp::Timestamp;
use store::events::{EventCursor, GetEvent, ListEvents, ListSubjectEvents, MAX_PAGE};

/// Events a page holds when `limit` is not given.
pub const DEFAULT_EVENTS_LIMIT: usize = 50;

/// How far back `GET /api/events` starts when neither `after` nor `since` is given.
const DEFAULT_SINCE_SECONDS: i64 = 3_600;

/// The feeds' state: the store, the fans' token verifier and how operators are known.
pub struct EventsState<S> {
    pub store: S,
    pub verifier: TokenVerifier,
    pub operators: OperatorAuth,
}

crate::http::extract::handler_state!(EventsState: verifier);

impl<S: Send + Sync + 'static> Operates for EventsState<S> {
    fn operators(&self) -> &OperatorAuth {
        &self.operators
    }
}

impl<S: Send + Sync + Clone + 'static> LocalState<S> for EventsState<S> {
    fn local(store: &S, process: &LocalProcess) -> Self {
        Self {
            store: store.clone(),
            verifier: process.verifier(),
            operators: OperatorAuth::LocalKey(process.operator_key.clone()),
        }
    }
}

/// `{"events": [<envelope>...], <rest>}`: the envelopes' stored bytes, as they are.
fn page_text(events: &[StoredEvent], rest: &str) -> String {
    let mut text = String::from("{\"events\":[");
    for (at, event) in events.iter().enumerate() {
        if at > 0 {
            text.push(',');
        }
        text.push_str(&event.body);
    }
    text.push_str("],");
    text.push_str(rest);
    text.push('}');
    text
}

/// A page of the caller's events.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = MyEventsPage)]
#[allow(dead_code)] // The document's schema of the page the handler writes as text.
struct MyEventsPage {
    events: Vec<EventJson>,
    /// The `after` of the next page: the last sequence given (or the `after` sent, when none).
    next_after: u64,
}

/// `?after=&limit=` of the fan's feed.
#[derive(Debug, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct MyEventsParams {
    /// The last sequence already read (0: from the first).
    #[param(minimum = 0, default = 0)]
    pub after: Option<u64>,
    /// Events per page.
    #[param(minimum = 1, maximum = 100, default = json!(DEFAULT_EVENTS_LIMIT))]
    pub limit: Option<u32>,
}

impl<St: Send + Sync> FromRequestParts<St> for MyEventsParams {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &St) -> Result<Self, ApiError> {
        let query = QueryParams::of(parts);
        let after = query
            .single("after")?
            .map(|text| {
                (text.len() <= 20 && text.bytes().all(|b| b.is_ascii_digit()))
                    .then(|| text.parse::<u64>().ok())
                    .flatten()
                    .ok_or_else(|| {
                        invalid_query("The 'after' parameter must be a sequence (a whole number).")
                    })
            })
            .transpose()?;
        let limit = limit(&query, DEFAULT_EVENTS_LIMIT)?;
        Ok(Self {
            after,
            limit: u32::try_from(limit).ok(),
        })
    }
}

/// `GET /api/me/events?after=&limit=`: the caller's events in sequence order.
#[utoipa::path(
    get,
    path = "/api/me/events",
    operation_id = "listMyEvents",
    tag = "Me",
    summary = "The signed-in user's events (their activity feed)",
    description = "Every event whose subject is the caller (their purchases, Cash, top-ups, \
places in lines, claims, profile and wallets), in `sequence` order from `after`, kept 30 days: \
the same ids and bodies as the webhooks. Poll with the page's `nextAfter`; a gap in the \
sequences a consumer saw is caught up from here.",
    security(("sessionToken" = [])),
    params(MyEventsParams),
    responses(
        (status = 200, description = "A page of the caller's events.", body = MyEventsPage),
        (status = 400, response = doc::BadRequest),
        doc::SignedIn,
    ),
)]
pub async fn my_events<S: ListSubjectEvents>(
    State(state): State<Arc<EventsState<S>>>,
    Fan(identity): Fan,
    params: MyEventsParams,
) -> Result<Response, ApiError> {
    let after = params.after.unwrap_or(0);
    let limit = params.limit.map_or(DEFAULT_EVENTS_LIMIT, |l| l as usize);
    let events = state
        .store
        .subject_events(&Subject::fan(&identity.user_id), after, limit.min(MAX_PAGE))
        .await?;
    let next = events.last().map_or(after, |event| event.sequence);
    Ok(json_text_response(
        StatusCode::OK,
        page_text(&events, &format!("\"nextAfter\":{next}")),
    ))
}

/// A page of every subject's events.
#[derive(Serialize, ToSchema)]
#[schema(as = EventsPage)]
#[allow(dead_code)] // The document's schema of the page the handler writes as text.
struct EventsPage {
    events: Vec<EventJson>,
    /// The next page's path and query. A page short of `limit` ended an hour: the next starts
    /// the next hour, or, the hour not over, stays after this page's last event (poll it).
    next: String,
}

/// `?after=` or `?since=`, and `limit=`, of the operators' feed.
#[derive(Debug, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct EventsParams {
    /// Start after this event (ids sort by time).
    #[param(value_type = Option<String>, pattern = "^evt_[0-7][0-9A-HJKMNP-TV-Z]{25}$")]
    pub after: Option<EventId>,
    /// Start at this instant (RFC 3339, UTC), when `after` is not given; an hour ago by default.
    #[param(value_type = Option<String>, format = DateTime)]
    pub since: Option<Timestamp>,
    /// Events per page.
    #[param(minimum = 1, maximum = 100, default = json!(DEFAULT_EVENTS_LIMIT))]
    pub limit: Option<u32>,
}

impl<St: Send + Sync> FromRequestParts<St> for EventsParams {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &St) -> Result<Self, ApiError> {
        let query = QueryParams::of(parts);
        let after = query
            .single("after")?
            .map(|text| {
                EventId::parse(text)
                    .map_err(|_| invalid_query("The 'after' parameter must be an event id."))
            })
            .transpose()?;
        let since = query
            .single("since")?
            .map(|text| {
                Timestamp::parse(&text).map_err(|_| {
                    invalid_query("The 'since' parameter must be an RFC 3339 UTC instant.")
                })
            })
            .transpose()?;
        if after.is_some() && since.is_some() {
            return Err(invalid_query("Give 'after' or 'since', not both."));
        }
        let limit = limit(&query, DEFAULT_EVENTS_LIMIT)?;
        Ok(Self {
            after,
            since,
            limit: u32::try_from(limit).ok(),
        })
    }
}

/// `GET /api/events?after=|since=&limit=`: every event, by time (operators).
#[utoipa::path(
    get,
    path = "/api/events",
    operation_id = "listEvents",
    tag = "Webhooks",
    summary = "Every event, by time (operators)",
    description = "Every subject's events in id (time) order, from `after` or `since`, one hour \
of events at most per page, kept 30 days: the same ids and bodies as the webhooks. Authorized \
by IAM (SigV4; local-api: its printed operator key as a bearer token). The index it reads is \
eventually consistent: re-read the last seconds to be sure of the newest.",
    security(("operatorIam" = [])),
    params(EventsParams),
    responses(
        (status = 200, description = "A page of events.", body = EventsPage),
        (status = 400, response = doc::BadRequest),
        (status = 403, response = doc::OperatorRequired),
    ),
)]
pub async fn list_events<S: ListEvents>(
    State(state): State<Arc<EventsState<S>>>,
    _operator: Operator,
    params: EventsParams,
) -> Result<Response, ApiError> {
    let now = Timestamp::now();
    let from = match (params.after, params.since) {
        (Some(after), _) => EventCursor::After(after),
        (None, Some(since)) => EventCursor::Since(since),
        (None, None) => EventCursor::Since(now.plus_seconds(-DEFAULT_SINCE_SECONDS).unwrap_or(now)),
    };
    let limit = params.limit.map_or(DEFAULT_EVENTS_LIMIT, |l| l as usize);
    let page = state.store.events_from(&from, limit, now).await?;
    let next = match &page.next {
        EventCursor::After(id) => format!("/api/events?after={id}&limit={limit}"),
        EventCursor::Since(at) => format!("/api/events?since={at}&limit={limit}"),
    };
    let next = serde_json::to_string(&next).expect("a string serialises");
    Ok(json_text_response(
        StatusCode::OK,
        page_text(&page.events, &format!("\"next\":{next}")),
    ))
}

/// The event named by the path.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(rename_all = "camelCase", parameter_in = Path)]
pub struct EventPath {
    /// The event's `id`.
    #[param(
        value_type = String,
        pattern = "^evt_[0-7][0-9A-HJKMNP-TV-Z]{25}$",
        example = "evt_01JDZ8Q5V6M3T9W2X4Y7Z8A1BC"
    )]
    pub event_id: EventId,
}

/// `GET /api/events/{eventId}`: one event (operators).
#[utoipa::path(
    get,
    path = "/api/events/{eventId}",
    operation_id = "getEvent",
    tag = "Webhooks",
    summary = "One event (operators)",
    description = "The event's envelope, as its webhooks carry it, for 30 days. Authorized by \
IAM, as `GET /api/events`.",
    security(("operatorIam" = [])),
    params(EventPath),
    responses(
        (status = 200, description = "The event.", body = EventJson),
        (status = 403, response = doc::OperatorRequired),
        (status = 404, response = doc::EventNotFound),
    ),
)]
pub async fn get_event<S: GetEvent>(
    State(state): State<Arc<EventsState<S>>>,
    Path(EventPath { event_id }): Path<EventPath>,
    _operator: Operator,
) -> Result<Response, ApiError> {
    match state.store.get_event(&event_id).await? {
        Some(event) => Ok(json_text_response(StatusCode::OK, event.body)),
        None => Err(ApiError::refused(
            ErrorCode::EventNotFound,
            "No event of this id (events are kept 30 days).",
        )),
    }
}
