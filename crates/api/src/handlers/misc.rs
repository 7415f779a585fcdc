//! The Misc group (the `misc` function): `GET /api/health` (is it up), `GET /api/time` (the
//! server's clock, for countdowns) and `GET /api/config` (what the app needs at start). None of
//! them waits on the store: the configuration is the instance's copy
//! ([`crate::http::app_config::ConfigCache`]), read at most once per few seconds.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use serde::Serialize;
use utoipa::ToSchema;

use crate::http::app_config::HeldConfig;
use crate::http::error::ApiError;
use crate::http::response::{json_response, json_text_response};
use crate::http::routes::{LocalProcess, LocalState};
use crate::openapi::responses as doc;
use domain::app_config::{AppConfig, Update};
use domain::timestamp::Timestamp;

/// The Misc function's state: what it says of itself.
#[derive(Debug, Clone, Copy)]
pub struct MiscState {
    /// The release it runs (`releaseId`): the commit it was built from, `FAN_API_RELEASE` at
    /// build time, `dev` when unset.
    pub release: &'static str,
}

impl Default for MiscState {
    fn default() -> Self {
        Self {
            release: option_env!("FAN_API_RELEASE").unwrap_or("dev"),
        }
    }
}

impl<S> LocalState<S> for MiscState {
    fn local(_: &S, _: &LocalProcess) -> Self {
        Self::default()
    }
}

/// `pass` or `warn` (the IETF health-check draft's; `fail` is for the operators' deep check).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum HealthStatus {
    Pass,
    Warn,
}

/// `GET /api/health` (`application/health+json`).
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Health)]
struct HealthJson {
    status: HealthStatus,
    /// The API's version.
    #[schema(example = "1")]
    version: &'static str,
    /// The release this instance runs.
    #[schema(example = "3f9c2e1")]
    release_id: &'static str,
    /// Why the status is `warn`, when it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(example = "writes are paused for maintenance")]
    output: Option<&'static str>,
}

/// `GET /api/health`: the instance answers, with what it knows without asking the store.
#[utoipa::path(
    get,
    path = "/api/health",
    operation_id = "getHealth",
    tag = "Misc",
    summary = "Whether the API is up",
    description = "Answered by the instance without a store call (`Cache-Control: no-store`), in \
the IETF health-check format: `pass`, or `warn` while writes are in maintenance (reads are \
served). A deep check of the table and the dependencies is for operators (`ops deep-health`, \
docs/operations.md), not public.",
    responses(
        (status = 200, description = "Up.", content_type = "application/health+json",
            body = HealthJson,
            headers(("Cache-Control" = String, description = "`no-store`.")),
            example = json!({"status": "pass", "version": "1", "releaseId": "3f9c2e1"})),
        (status = 405, response = doc::MethodNotAllowed),
    ),
    security(),
)]
pub async fn get_health(
    axum::extract::State(state): axum::extract::State<Arc<MiscState>>,
    held: HeldConfig,
) -> Response {
    let maintenance = held
        .peek()
        .is_some_and(|current| current.config.maintenance_at(Timestamp::now()).is_some());
    let mut response = json_response(
        StatusCode::OK,
        &HealthJson {
            status: if maintenance {
                HealthStatus::Warn
            } else {
                HealthStatus::Pass
            },
            version: API_VERSION,
            release_id: state.release,
            output: maintenance.then_some("writes are paused for maintenance"),
        },
    );
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/health+json"),
    );
    // No Cache-Control of its own: the route's wrapper marks an answer no route declares
    // public `no-store` (crate::http::response::Caching).
    response
}

/// The major version of the API's contract (`info.version` of the document).
const API_VERSION: &str = "1";

/// `GET /api/time`.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = ServerTime)]
struct TimeJson {
    /// The server's time, RFC 3339 in UTC with milliseconds.
    #[schema(example = "2026-11-29T18:30:00.250Z", format = DateTime)]
    now: String,
    /// The same instant in milliseconds since the Unix epoch.
    #[schema(example = 1_795_977_000_250_i64)]
    unix_ms: i64,
}

/// `GET /api/time`: the server's clock, for a countdown.
#[utoipa::path(
    get,
    path = "/api/time",
    operation_id = "getServerTime",
    tag = "Misc",
    summary = "The server's time",
    description = "The server's clock (`Cache-Control: no-store`). A client counting down to a \
sale's start or a queue's close goes by the `...InMs` fields that every answer naming such an \
instant carries, measured when the answer was made; this is for a clock of its own.",
    responses(
        (status = 200, description = "The server's time.", body = TimeJson,
            headers(("Cache-Control" = String, description = "`no-store`.")),
            example = json!({"now": "2026-11-29T18:30:00.250Z", "unixMs": 1_795_977_000_250_i64})),
        (status = 405, response = doc::MethodNotAllowed),
    ),
    security(),
)]
pub async fn get_time() -> Response {
    let now = Timestamp::now();
    json_response(
        StatusCode::OK,
        &TimeJson {
            now: now.rfc3339_millis(),
            unix_ms: now.unix_millis(),
        },
    )
}

/// `GET /api/config`.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = AppConfig)]
struct ConfigJson<'a> {
    /// Counts the operator's changes (0: never set; the defaults).
    revision: u64,
    /// The oldest app version each platform (`ios`, `android`, `web`) may call with
    /// (`X-App-Version`); a platform not named has none.
    minimum_versions: BTreeMap<&'static str, MinimumVersionJson<'a>>,
    /// Feature flags by name.
    flags: &'a BTreeMap<String, bool>,
    maintenance: MaintenanceJson,
}

/// A platform's oldest supported version.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = MinimumVersion)]
struct MinimumVersionJson<'a> {
    #[schema(example = "2.3.0", pattern = r"^\d{1,6}\.\d{1,6}\.\d{1,6}$")]
    version: String,
    /// `forced`: older apps get 426 `app_version_unsupported`; `flexible`: they are served and
    /// ask their fan to update.
    update: UpdateJson,
    #[schema(format = "uri", example = "https://apps.apple.com/app/id000000000")]
    store_url: &'a str,
}

/// What an app below the minimum must do.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
#[schema(as = Update)]
enum UpdateJson {
    Forced,
    Flexible,
}

impl From<Update> for UpdateJson {
    fn from(update: Update) -> Self {
        match update {
            Update::Forced => Self::Forced,
            Update::Flexible => Self::Flexible,
        }
    }
}

/// Maintenance: `active` when writes are refused now (503 `maintenance`), and the planned
/// window, if any.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct MaintenanceJson {
    active: bool,
    window: Option<WindowJson>,
}

/// A planned maintenance: writes are refused from `startsAt` until `endsAt`.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct WindowJson {
    #[schema(value_type = String, format = DateTime, example = "2026-12-01T03:00:00Z")]
    starts_at: Timestamp,
    #[schema(value_type = String, format = DateTime, example = "2026-12-01T03:30:00Z")]
    ends_at: Timestamp,
}

fn config_json(config: &AppConfig, revision: u64, now: Timestamp) -> ConfigJson<'_> {
    ConfigJson {
        revision,
        minimum_versions: config
            .minimum_versions
            .iter()
            .map(|(platform, minimum)| {
                let json = MinimumVersionJson {
                    version: minimum.version.to_string(),
                    update: minimum.update.into(),
                    store_url: &minimum.store_url,
                };
                (platform.as_str(), json)
            })
            .collect(),
        flags: &config.flags,
        maintenance: MaintenanceJson {
            active: config.maintenance_at(now).is_some(),
            window: config.maintenance.window.map(|window| WindowJson {
                starts_at: window.starts_at,
                ends_at: window.ends_at,
            }),
        },
    }
}

/// `GET /api/config`: what the app needs at start.
#[utoipa::path(
    get,
    path = "/api/config",
    operation_id = "getAppConfig",
    tag = "Misc",
    summary = "The app's configuration",
    description = "The oldest app version each platform (`ios`, `android`, `web`) may call with \
and whether updating is forced (older apps get 426 `app_version_unsupported` on every route) or \
flexible, the feature flags, and maintenance (while `active`, every write answers 503 \
`maintenance` with `Retry-After`; reads are served). Set by the operator without a deploy; an \
instance reads it at most every 5 s. Public and cacheable: `ETag`, and `If-None-Match` answers \
304.",
    responses(
        (status = 200, description = "The configuration.", body = ConfigJson,
            example = json!({"revision": 3,
                "minimumVersions": {"ios": {"version": "2.3.0", "update": "forced",
                    "storeUrl": "https://apps.apple.com/app/id000000000"}},
                "flags": {"lockerRooms": true},
                "maintenance": {"active": false, "window": null}})),
        (status = 405, response = doc::MethodNotAllowed),
        (status = 500, response = doc::InternalError),
    ),
    security(),
)]
pub async fn get_config(held: HeldConfig) -> Result<Response, ApiError> {
    let current = held.current().await;
    let body = serde_json::to_string(&config_json(
        &current.config,
        current.revision,
        Timestamp::now(),
    ))
    .map_err(|e| ApiError::Internal {
        detail: format!("configuration answer: {e}"),
    })?;
    Ok(json_text_response(StatusCode::OK, body))
}
