//! `POST /api/web3-link`: links a web3 identity (the body's `payload`) to the signed-in user.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use utoipa::ToSchema;

use crate::auth::TokenVerifier;
use crate::http::error::{ApiError, ErrorBody, ErrorCode};
use crate::http::extract::{Fan, FromJsonBody, Json, handler_state};
use crate::http::refusals::wallet_limit_reached;
use crate::http::request::json_object;
use crate::http::response::json_response;
use crate::http::routes::{LocalProcess, LocalState};
use crate::openapi::responses as doc;
use crate::openapi::schemas::{always_true, truthy};
use domain::ids::WalletId;
use domain::links::{LinkUpsert, MAX_PAYLOAD_DEPTH, PayloadError, WEB3_PROVIDER, check_payload};
use domain::timestamp::Timestamp;
use domain::wallets::{WalletLimitReached, wallet_id};
use store::links::{LinkError, UpsertLink};

/// What the link handler needs.
pub struct LinkState<S> {
    pub store: S,
    pub verifier: TokenVerifier,
    pub max_body_bytes: usize,
}

handler_state!(LinkState: verifier, max_body_bytes);

impl<S: Send + Sync + Clone + 'static> LocalState<S> for LinkState<S> {
    fn local(store: &S, process: &LocalProcess) -> Self {
        Self {
            store: store.clone(),
            verifier: process.verifier(),
            max_body_bytes: process.max_body_bytes,
        }
    }
}

#[derive(Deserialize, ToSchema)]
#[schema(as = LinkRequest)]
struct LinkBody<'a> {
    #[serde(borrow)]
    #[schema(schema_with = truthy, required)]
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

/// The body's `payload`, as [`parse_link_body`] accepts it, kept as sent, and its canonical
/// JSON's wallet id.
pub struct LinkPayload(Box<RawValue>, WalletId);

impl FromJsonBody for LinkPayload {
    fn from_json(body: &[u8]) -> Result<Self, ApiError> {
        let payload = parse_link_body(body)?;
        // A payload `parse_link_body` accepts has a canonical form (JSON, at most
        // MAX_PAYLOAD_DEPTH deep); the refusal stays a clear 400 should the two ever disagree.
        let id = wallet_id(payload.get()).map_err(|error| {
            ApiError::refused(ErrorCode::InvalidPayload, format!("The payload: {error}."))
        })?;
        Ok(Self(payload.to_owned(), id))
    }
}

/// `{"success": true, "data": {"userId", "email"}}`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = LinkResult)]
struct LinkResponse<'a> {
    #[schema(schema_with = always_true)]
    success: bool,
    #[schema(inline)]
    data: LinkResponseData<'a>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct LinkResponseData<'a> {
    /// The session token's `sub`.
    #[schema(min_length = 1)]
    user_id: &'a str,
    /// The token's e-mail claim, or null when it has none.
    #[schema(required)]
    email: Option<&'a str>,
}

/// Checks, in order: route (404/405), session token (401, or 503 when no signing key can be
/// had), content type (415), body size (413), body and payload (400); then upserts the link and
/// its wallet, in one transaction (409 `wallet_limit_reached` for a 21st identity: nothing
/// written).
#[utoipa::path(
    post,
    path = "/api/web3-link",
    operation_id = "createWeb3Link",
    tag = "Auth",
    summary = "Link a web3 identity to the signed-in user",
    description = "Saves the body's `payload` (any JSON value that is truthy by JavaScript's \
rule: not `false`, `0`, `\"\"` or `null`) as the user's web3 link, exactly as sent. Linking again \
replaces the payload and keeps the first link time. The payload is also kept as one of the \
user's wallets (`GET /api/me/wallets`), identified by its canonical JSON (RFC 8785): the same \
identity linked again, however spelled, refreshes its wallet's `lastLinkedAt`; a new one adds a \
wallet, at most 20. The user is the session token's `sub`; \
`email` comes from the token's e-mail claim, or is null.",
    security(("sessionToken" = [])),
    request_body(
        content = LinkBody,
        description = "At most 64 KiB (configurable with `MAX_BODY_BYTES`).",
        examples(("wallet" = (value = json!({
            "payload": {"address": "0x52908400098527886E0F7030069857D2E4169EE7", "chainId": 1}
        })))),
    ),
    responses(
        (status = 200, description = "The link is saved.", body = LinkResponse,
            examples(("linked" = (value = json!({
                "success": true,
                "data": {"userId": "user_2NNEqL2nrIRdJ194ndJqAHwEfxC", "email": "fan@example.com"}
            }))))),
        (status = 400, response = doc::BadRequest),
        (status = 401, response = doc::Unauthorized),
        (status = 413, response = doc::PayloadTooLarge),
        (status = 409, description = "The payload is a new identity and the user holds 20 \
wallets already (`wallet_limit_reached`): nothing was saved, neither the link nor a wallet. \
Remove one (`DELETE /api/me/wallets/{walletId}`) first; linking a payload the user holds is \
never refused.",
            body = ErrorBody,
            example = json!(doc::example(wallet_limit_reached()))),
        (status = 415, response = doc::UnsupportedMediaType),
        (status = 500, response = doc::InternalError),
        (status = 503, response = doc::Unavailable),
    ),
)]
pub async fn web3_link<S: UpsertLink>(
    State(state): State<Arc<LinkState<S>>>,
    Fan(identity): Fan,
    Json(LinkPayload(payload, wallet_id)): Json<LinkPayload>,
) -> Result<Response, ApiError> {
    let link = LinkUpsert {
        user_id: &identity.user_id,
        email: identity.email.as_deref(),
        provider: WEB3_PROVIDER,
        payload: &payload,
        wallet_id,
        at: Timestamp::now(),
    };
    let write = state
        .store
        .upsert_link(&link)
        .await
        .map_err(|error| match error {
            LinkError::Refused(WalletLimitReached) => wallet_limit_reached(),
            LinkError::Store(error) => error.into(),
        })?;
    tracing::info!(payload_bytes = payload.get().len(), wallet = ?write, "web3 link saved");
    Ok(json_response(
        StatusCode::OK,
        &LinkResponse {
            success: true,
            data: LinkResponseData {
                user_id: identity.user_id.as_str(),
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
