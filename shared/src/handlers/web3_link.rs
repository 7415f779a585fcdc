//! `POST /api/web3-link`: links a web3 identity (the body's `payload`) to the signed-in user.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::auth::TokenVerifier;
use crate::http::error::{ApiError, ErrorCode};
use crate::http::extract::{Fan, FromJsonBody, Json, LimitsBodies, Verifies};
use crate::http::request::json_object;
use crate::http::response::json_response;
use crate::links::{LinkUpsert, MAX_PAYLOAD_DEPTH, PayloadError, WEB3_PROVIDER, check_payload};
use crate::store::links::UpsertLink;
use crate::timestamp::Timestamp;

/// What the link handler needs.
pub struct LinkState<S> {
    pub store: S,
    pub verifier: TokenVerifier,
    pub max_body_bytes: usize,
}

impl<S: Send + Sync + 'static> Verifies for LinkState<S> {
    fn verifier(&self) -> &TokenVerifier {
        &self.verifier
    }
}

impl<S: Send + Sync + 'static> LimitsBodies for LinkState<S> {
    fn max_body_bytes(&self) -> usize {
        self.max_body_bytes
    }
}

#[derive(Deserialize)]
struct LinkBody<'a> {
    #[serde(borrow)]
    payload: Option<&'a RawValue>,
}

/// Reads `{"payload": <any JSON>}`: a JSON object (other members are ignored, a repeated
/// `payload` is refused) whose payload passes [`check_payload`]. Returns the payload's exact text.
pub fn parse_link_body(body: &[u8]) -> Result<&RawValue, ApiError> {
    let LinkBody { payload } = json_object(
        body,
        "The request body must be a JSON object with a single 'payload' member.",
    )?;
    check_payload(payload).map_err(|error| match error {
        PayloadError::TooDeep => ApiError::refused(
            ErrorCode::InvalidPayload,
            format!("The payload is nested deeper than {MAX_PAYLOAD_DEPTH} levels."),
        ),
        PayloadError::NotTruthy => ApiError::refused(
            ErrorCode::InvalidPayload,
            "The body's 'payload' member is required and must be truthy (not false, 0, \"\" or null).",
        ),
    })
}

/// The body's `payload`, as [`parse_link_body`] accepts it, kept as sent.
pub struct LinkPayload(Box<RawValue>);

impl FromJsonBody for LinkPayload {
    fn from_json(body: &[u8]) -> Result<Self, ApiError> {
        parse_link_body(body).map(|payload| Self(payload.to_owned()))
    }
}

/// `{"success": true, "data": {"userId", "email"}}`.
#[derive(Debug, Serialize)]
struct LinkResponse<'a> {
    success: bool,
    data: LinkResponseData<'a>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct LinkResponseData<'a> {
    user_id: &'a str,
    email: Option<&'a str>,
}

/// Checks, in order: route (404/405), session token (401, or 503 when no signing key can be
/// had), content type (415), body size (413), body and payload (400); then upserts the link.
#[utoipa::path(
    post,
    path = "/api/web3-link",
    operation_id = "web3_link",
    tag = "links"
)]
pub async fn web3_link<S: UpsertLink>(
    State(state): State<Arc<LinkState<S>>>,
    Fan(identity): Fan,
    Json(LinkPayload(payload)): Json<LinkPayload>,
) -> Result<Response, ApiError> {
    let link = LinkUpsert {
        user_id: &identity.user_id,
        email: identity.email.as_deref(),
        provider: WEB3_PROVIDER,
        payload: &payload,
        at: Timestamp::now(),
    };
    state.store.upsert_link(&link).await?;
    tracing::info!(payload_bytes = payload.get().len(), "web3 link saved");
    Ok(json_response(
        StatusCode::OK,
        &LinkResponse {
            success: true,
            data: LinkResponseData {
                user_id: &identity.user_id,
                email: identity.email.as_deref(),
            },
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(body: &str) -> &'static str {
        match parse_link_body(body.as_bytes()) {
            Ok(_) => "ok",
            Err(error) => error.code().as_str(),
        }
    }

    #[test]
    fn truthy_payload_is_returned_exactly() {
        for (body, payload) in [
            (
                r#"{"payload": {"address": "0xabc"}}"#,
                r#"{"address": "0xabc"}"#,
            ),
            (
                r#"{"payload":1.000000000000000000000000000001}"#,
                "1.000000000000000000000000000001",
            ),
            (r#"{"payload":1e400,"other":true}"#, "1e400"),
            (r#"  {"payload": "0"}  "#, r#""0""#),
            (r#"{"payload":[]}"#, "[]"),
        ] {
            assert_eq!(parse_link_body(body.as_bytes()).unwrap().get(), payload);
        }
    }

    #[test]
    fn falsy_or_missing_payload_is_invalid_payload() {
        for body in [
            r#"{}"#,
            r#"{"payload":null}"#,
            r#"{"payload":false}"#,
            r#"{"payload":""}"#,
            r#"{"payload":0}"#,
            r#"{"payload":-0.0e3}"#,
            r#"{"Payload":1}"#,
        ] {
            assert_eq!(code(body), "invalid_payload", "{body}");
        }
    }

    #[test]
    fn malformed_and_non_object_bodies() {
        for body in [
            "",
            "{",
            r#"{"payload":1"#,
            r#"{"payload":1} x"#,
            "nul",
            r#"{"payload":tru}"#,
        ] {
            assert_eq!(code(body), "invalid_json", "{body}");
        }
        for body in [
            "[1]",
            r#"[{"a":1}]"#,
            "1",
            r#""payload""#,
            "null",
            r#"{"payload":1,"payload":2}"#,
        ] {
            assert_eq!(code(body), "invalid_body", "{body}");
        }
    }
}
