//! The error answers several operations share, as reusable responses (`components/responses`,
//! referenced from the operations' `#[utoipa::path]` as `response = ...`), and the examples of
//! an operation's own refusals.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use utoipa::openapi::response::Response;
use utoipa::openapi::{Ref, RefOr};
use utoipa::{IntoResponses, ToResponse};

use crate::http::error::{ApiError, ErrorBody, ErrorCode};

/// The body the API answers for `error` (its code and its public message): what an example of
/// it shows.
pub fn example(error: ApiError) -> Value {
    json!({
        "success": false,
        "error": {"code": error.code().as_str(), "message": error.public_message()},
    })
}

/// The body of a refusal with `code` and `message`.
pub fn error_example(code: ErrorCode, message: &'static str) -> Value {
    example(ApiError::refused(code, message))
}

/// Bad input. Codes: `invalid_json`, `invalid_body`, `invalid_payload`, `invalid_limit`,
/// `invalid_cursor`, `invalid_query`; `malformed_request` for a request that is not well-formed
/// HTTP/1.1 (the local API).
#[derive(ToResponse)]
#[response(example = json!(error_example(
    ErrorCode::InvalidPayload,
    "The body's 'payload' member is required and must be truthy (not false, 0, \"\" or null).",
)))]
pub struct BadRequest(pub ErrorBody<'static>);

/// The session token is missing (`missing_token`) or invalid or expired (`invalid_token`).
#[derive(ToResponse)]
#[response(
    headers((
        "WWW-Authenticate" = String,
        description = "`Bearer realm=\"fan-api\"`, with `error=\"invalid_token\"` when a token was refused."
    )),
    example = json!(error_example(ErrorCode::InvalidToken, "The session token is invalid.")),
)]
pub struct Unauthorized(pub ErrorBody<'static>);

/// The user has no purchase with this id for this pack (`purchase_not_found`: another user's,
/// another pack's or none); or an id is not an id (`not_found`).
#[derive(ToResponse)]
#[response(examples(
    ("unknown" = (value = json!(error_example(
        ErrorCode::PurchaseNotFound,
        "You have no purchase with this id for this pack.",
    )))),
    ("notAnId" = (value = json!(not_an_id()))),
))]
pub struct PurchaseNotFound(pub ErrorBody<'static>);

/// No quest has this id (`quest_not_found`); or the id is not an id (`not_found`).
#[derive(ToResponse)]
#[response(examples(
    ("unknown" = (value = json!(error_example(ErrorCode::QuestNotFound, "No quest has this id.")))),
    ("notAnId" = (value = json!(not_an_id()))),
))]
pub struct QuestNotFound(pub ErrorBody<'static>);

/// The body is over the limit (`payload_too_large`).
#[derive(ToResponse)]
pub struct PayloadTooLarge(pub ErrorBody<'static>);

/// The body is not sent as `application/json` (`unsupported_media_type`).
#[derive(ToResponse)]
pub struct UnsupportedMediaType(pub ErrorBody<'static>);

/// The path exists but not with this method (`method_not_allowed`).
#[derive(ToResponse)]
#[response(
    headers(("Allow" = String, description = "The methods the path accepts.")),
    example = json!(error_example(ErrorCode::MethodNotAllowed, "This path only accepts GET.")),
)]
pub struct MethodNotAllowed(pub ErrorBody<'static>);

/// This version of the app may no longer call (`app_version_unsupported`): its platform's
/// forced minimum (`GET /api/config`) is above the `X-App-Version` sent. Update from the store
/// page in `Link` (and the message).
#[derive(ToResponse)]
#[response(
    headers(("Link" = String, description = "`<store page>; rel=\"update\"`.")),
    example = json!(example(ApiError::AppVersionUnsupported {
        store_url: "https://apps.apple.com/app/id000000000".into(),
    })),
)]
pub struct AppVersionUnsupported(pub ErrorBody<'static>);

/// An unexpected failure (`internal_error`); details are in the service's logs only.
#[derive(ToResponse)]
pub struct InternalError(pub ErrorBody<'static>);

/// A dependency (the database, the identity provider's keys) is unavailable
/// (`service_unavailable`), or, for a write, the service is in maintenance (`maintenance`:
/// `Retry-After` is the planned window's end, or a minute; reads are served).
#[derive(ToResponse)]
#[response(headers(("Retry-After" = u32, description = "Seconds to wait before retrying.")))]
pub struct Unavailable(pub ErrorBody<'static>);

/// Over a rate limit of the fan or of the address (`rate_limited`, docs/rate-limits.md). Every
/// answer of a limited route carries `RateLimit-Policy` and `RateLimit`
/// (draft-ietf-httpapi-ratelimit-headers-11). API Gateway's own throttle of a whole route is a
/// 429 too, before the function: `{"message":"Too Many Requests"}`, not this shape, no
/// `Retry-After`: retry it with exponential backoff.
#[derive(ToResponse)]
#[response(
    headers(
        ("Retry-After" = u32, description = "Seconds to wait: never before the refusing window \
ends, plus 0-3 s of jitter."),
        ("RateLimit-Policy" = String, description = "The quotas met, one item per counter: \
`\"addr-start\";q=200;w=10, \"fan-start\";q=10;w=10` (`q` requests per `w` seconds)."),
        ("RateLimit" = String, description = "What is left of each: `\"fan-start\";r=0;t=7` \
(`r` requests left, `t` seconds until the window ends)."),
    ),
    example = json!(error_example(ErrorCode::RateLimited, "Too many requests: retry after the seconds in 'Retry-After'.")),
)]
pub struct RateLimited(pub ErrorBody<'static>);

/// The human check at a drop's door refused (`human_check_failed`): no `Human-Check` token, or
/// one siteverify did not pass for this door (another action or hostname, solved too long ago or
/// before the door opened) or used before. Nothing was written: solve the widget again
/// (`turnstile.reset()`) and send the new token.
#[derive(ToResponse)]
#[response(example = json!(example(crate::http::human_check::human_check_failed())))]
pub struct HumanCheckFailed(pub ErrorBody<'static>);

/// An operators' route called without IAM authorization (`operator_required`): sign the request
/// with SigV4 as an identity allowed `execute-api:Invoke` on it (local-api: its operator key).
#[derive(ToResponse)]
#[response(example = json!(error_example(
    ErrorCode::OperatorRequired,
    "This route is for the API's operators, authorized by IAM.",
)))]
pub struct OperatorRequired(pub ErrorBody<'static>);

/// No event has this id, or it is older than 30 days (`event_not_found`); or the id is not an
/// event id (`not_found`).
#[derive(ToResponse)]
#[response(examples(
    ("unknown" = (value = json!(error_example(
        ErrorCode::EventNotFound,
        "No event of this id (events are kept 30 days).",
    )))),
    ("notAnId" = (value = json!(not_an_id()))),
))]
pub struct EventNotFound(pub ErrorBody<'static>);

/// No webhook endpoint has this id (`endpoint_not_found`); or the id is not an endpoint id
/// (`not_found`).
#[derive(ToResponse)]
#[response(examples(
    ("unknown" = (value = json!(error_example(
        ErrorCode::EndpointNotFound,
        "No webhook endpoint of this id.",
    )))),
    ("notAnId" = (value = json!(not_an_id()))),
))]
pub struct EndpointNotFound(pub ErrorBody<'static>);

/// No webhook delivery has this id (`delivery_not_found`), or its event is no longer in the
/// feed (`event_not_found`); or the id is not a delivery id (`not_found`).
#[derive(ToResponse)]
#[response(examples(
    ("unknown" = (value = json!(error_example(
        ErrorCode::DeliveryNotFound,
        "No webhook delivery of this id.",
    )))),
    ("eventExpired" = (value = json!(error_example(
        ErrorCode::EventNotFound,
        "The delivery's event is not in the feed (expired after 30 days, or a test event).",
    )))),
    ("notAnId" = (value = json!(not_an_id()))),
))]
pub struct DeliveryNotFound(pub ErrorBody<'static>);

/// The endpoint changed since the revision the change was decided on (`endpoint_changed`).
#[derive(ToResponse)]
#[response(example = json!(error_example(
    ErrorCode::EndpointChanged,
    "The endpoint changed since this revision: read it again, then change it.",
)))]
pub struct EndpointChanged(pub ErrorBody<'static>);

/// The endpoint is disabled: nothing is queued to it (`endpoint_disabled`).
#[derive(ToResponse)]
#[response(example = json!(error_example(
    ErrorCode::EndpointDisabled,
    "The endpoint is disabled: enable it first (PATCH with 'enabled': true).",
)))]
pub struct EndpointDisabled(pub ErrorBody<'static>);

/// A path whose parameter is not an id: it names no resource (`not_found`).
pub fn not_an_id() -> Value {
    example(ApiError::not_found())
}

/// A body that is not JSON (`invalid_json`).
pub fn invalid_json() -> Value {
    example(crate::http::request::invalid_json())
}

/// What every operation of the signed-in fan may answer besides its own answers: 401, 405, 500
/// and 503, each the shared response (`responses(..., doc::SignedIn)`).
pub struct SignedIn;

impl IntoResponses for SignedIn {
    fn responses() -> BTreeMap<String, RefOr<Response>> {
        [
            ("401", Unauthorized::response().0),
            ("405", MethodNotAllowed::response().0),
            ("500", InternalError::response().0),
            ("503", Unavailable::response().0),
        ]
        .into_iter()
        .map(|(status, name)| (status.to_owned(), RefOr::Ref(Ref::from_response_name(name))))
        .collect()
    }
}
