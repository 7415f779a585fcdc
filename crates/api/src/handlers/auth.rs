//! The Auth group (issue 47, docs/sessions.md): a fan's session as the API sees it, a logout
//! that ends this session, every one or every other, an operator's revocation (IAM), and the
//! identity provider's own events (Standard Webhooks, as Privy and Dynamic sign them with Svix).
//! Every signed-in request of every function then refuses an ended session: the verifier reads
//! what was ended (`TokenVerifier::inspect`). One function (`auth`) serves the four; it reads and
//! writes `SESSIONS#` items only.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use crate::auth::TokenVerifier;
use crate::http::error::{ApiError, ErrorCode};
use crate::http::extract::{AnySession, FromJsonBody, Json, RawBody, handler_state};
use crate::http::operator::{Operates, Operator, OperatorAuth};
use crate::http::request::{invalid_json, json_object};
use crate::http::response::json_response;
use crate::http::routes::{LocalProcess, LocalState};
use crate::openapi::responses as doc;
use domain::ids::UserId;
use domain::sessions::{Ended, LogoutScope};
use domain::timestamp::{Timestamp, unix_now};
use domain::webhooks::{Received, SigningSecret, verify};
use store::sessions::ReviseRevocations;

/// The Auth group's state.
pub struct AuthState<S> {
    pub store: S,
    pub verifier: TokenVerifier,
    pub max_body_bytes: usize,
    pub operators: OperatorAuth,
    /// The identity provider's webhook secrets (`whsec_`; two during its rotation). None: its
    /// events are refused.
    pub provider_secrets: Vec<SigningSecret>,
}

handler_state!(AuthState: verifier, max_body_bytes);

impl<S: Send + Sync + 'static> Operates for AuthState<S> {
    fn operators(&self) -> &OperatorAuth {
        &self.operators
    }
}

impl<S: Send + Sync + Clone + 'static> LocalState<S> for AuthState<S> {
    fn local(store: &S, process: &LocalProcess) -> Self {
        Self {
            store: store.clone(),
            verifier: process.verifier(),
            max_body_bytes: process.max_body_bytes,
            operators: OperatorAuth::LocalKey(process.operator_key.clone()),
            provider_secrets: process.provider_secrets.clone(),
        }
    }
}

/// The session as the API sees it.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Session)]
struct SessionJson<'a> {
    #[schema(value_type = String)]
    user_id: &'a str,
    /// The provider's session id (`sid`), when the token carries one.
    session_id: Option<&'a str>,
    /// The token's `iat`, when it carries one.
    issued_at: Option<Timestamp>,
    expires_at: Option<Timestamp>,
    /// False once the session was ended: every other route refuses the token (401
    /// `session_revoked`).
    valid: bool,
    /// How it ended: `revoked` (a logout, an operator, the provider) or `accountDeleted`.
    #[schema(value_type = Option<String>)]
    ended: Option<&'static str>,
}

fn instant(seconds: i64) -> Option<Timestamp> {
    Timestamp::from_unix_nanos(i128::from(seconds) * 1_000_000_000)
}

/// `GET /api/auth/session`.
#[utoipa::path(
    get,
    path = "/api/auth/session",
    operation_id = "getSession",
    tag = "Auth",
    summary = "The caller's session as the API sees it",
    description = "The fan's id, the token's session id (`sid`) when the identity provider sends \
one, when it was issued and expires, and whether it is still valid: a session ended by a logout, \
an operator, the provider or the account's deletion is `valid: false` here and refused \
everywhere else.",
    security(("sessionToken" = [])),
    responses(
        (status = 200, description = "The session.", body = SessionJson),
        (status = 401, response = doc::Unauthorized),
    ),
)]
pub async fn get_session<S: Send + Sync + 'static>(
    State(_): State<Arc<AuthState<S>>>,
    AnySession(identity, ended): AnySession,
) -> Result<Response, ApiError> {
    let session = &identity.session;
    Ok(json_response(
        StatusCode::OK,
        &SessionJson {
            user_id: identity.user_id.as_str(),
            session_id: session.sid.as_deref(),
            issued_at: session.issued_at.and_then(instant),
            expires_at: instant(session.expires_at),
            valid: ended.is_none(),
            ended: ended.map(|ended| match ended {
                Ended::Revoked => "revoked",
                Ended::AccountDeleted => "accountDeleted",
            }),
        },
    ))
}

/// `{"scope": "current" | "all" | "others"}`.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = LogoutRequest)]
pub struct LogoutBody {
    /// Which sessions end (`current` when absent).
    scope: Option<LogoutScope>,
}

impl FromJsonBody for LogoutBody {
    fn from_json(body: &[u8]) -> Result<Self, ApiError> {
        json_object(
            body,
            "The body must be {\"scope\": \"current\" | \"all\" | \"others\"}.",
        )
    }
}

/// `POST /api/auth/logout`.
#[utoipa::path(
    post,
    path = "/api/auth/logout",
    operation_id = "logout",
    tag = "Auth",
    summary = "End this session, every session, or every other",
    description = "`current` (the default) ends this session until its token would have \
expired; `all` every session issued until now, this one included; `others` every one but this \
(the token must carry a session id, `sid`). From the next request on, on every function, an \
ended session's token is refused (401 `session_revoked`). A session already ended logs out \
again without error (RFC 7009's rule).",
    security(("sessionToken" = [])),
    request_body(content = Option<LogoutBody>, content_type = "application/json"),
    responses(
        (status = 204, description = "Done."),
        (status = 400, response = doc::BadRequest),
        (status = 401, response = doc::Unauthorized),
    ),
)]
pub async fn logout<S: ReviseRevocations + Send + Sync + 'static>(
    State(state): State<Arc<AuthState<S>>>,
    AnySession(identity, ended): AnySession,
    body: Option<Json<LogoutBody>>,
) -> Result<Response, ApiError> {
    let scope = body
        .and_then(|Json(body)| body.scope)
        .unwrap_or(LogoutScope::Current);
    if scope == LogoutScope::Others && identity.session.sid.is_none() {
        return Err(ApiError::refused(
            ErrorCode::InvalidBody,
            "'others' needs a token with a session id (sid); use 'all'.",
        ));
    }
    if ended.is_none() {
        let now = unix_now();
        let session = identity.session.clone();
        state
            .store
            .revise_revocations(&identity.user_id, move |revocations| {
                revocations.logout(scope, &session, now)
            })
            .await?;
    }
    tracing::info!(scope = ?scope, "logged out");
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `{"userId"}`: whose sessions an operator ends.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = RevokeSessionsRequest)]
pub struct RevokeBody {
    #[schema(value_type = String)]
    user_id: UserId,
}

impl FromJsonBody for RevokeBody {
    fn from_json(body: &[u8]) -> Result<Self, ApiError> {
        json_object(body, "The body must be {\"userId\": \"<the fan's id>\"}.")
    }
}

/// `POST /api/auth/revocations` (operators).
#[utoipa::path(
    post,
    path = "/api/auth/revocations",
    operation_id = "revokeSessions",
    tag = "Auth",
    summary = "End every session of a fan (operators)",
    description = "Every session of the fan issued until now ends: from the next request on, \
each of their tokens is refused on every function. Authorized by IAM (local-api: its operator \
key).",
    security(("operatorIam" = [])),
    request_body(content = RevokeBody, content_type = "application/json"),
    responses(
        (status = 204, description = "Done."),
        (status = 400, response = doc::BadRequest),
        (status = 403, response = doc::OperatorRequired),
    ),
)]
pub async fn revoke_sessions<S: ReviseRevocations + Send + Sync + 'static>(
    State(state): State<Arc<AuthState<S>>>,
    _operator: Operator,
    Json(RevokeBody { user_id }): Json<RevokeBody>,
) -> Result<Response, ApiError> {
    let now = unix_now();
    state
        .store
        .revise_revocations(&user_id, move |mut revocations| {
            revocations.revoke_all(now);
            revocations
        })
        .await?;
    tracing::info!("an operator revoked a fan's sessions");
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// What an identity provider's event asks of this API.
#[derive(Debug, PartialEq, Eq)]
enum ProviderAction {
    /// Its user was deleted: every token of the fan is refused.
    UserDeleted(UserId),
    /// One session ended (a `sid`), or every one (none).
    SessionRevoked(UserId, Option<String>),
    /// Nothing this API keeps.
    Ignored,
}

/// The first string at any of `paths` (each a list of keys) in `value`.
fn first_text<'a>(value: &'a Value, paths: &[&[&str]]) -> Option<&'a str> {
    paths.iter().find_map(|path| {
        path.iter()
            .try_fold(value, |at, key| at.get(key))
            .and_then(Value::as_str)
            .filter(|text| !text.is_empty())
    })
}

/// Reads a provider's event: its `type` (Privy's and Dynamic's names) and the user and session
/// it names, wherever their payloads put them (docs/sessions.md lists the shapes).
fn provider_action(event: &Value) -> Result<ProviderAction, ApiError> {
    let kind = first_text(event, &[&["type"], &["eventName"]]).unwrap_or_default();
    let user = || {
        first_text(
            event,
            &[
                &["data", "user_id"],
                &["data", "userId"],
                &["data", "user", "id"],
                &["user", "id"],
                &["user_id"],
            ],
        )
        .and_then(|id| UserId::parse(id).ok())
        .ok_or_else(|| ApiError::refused(ErrorCode::InvalidBody, "The event names no user."))
    };
    let sid = || {
        first_text(
            event,
            &[
                &["data", "session_id"],
                &["data", "sessionId"],
                &["data", "session", "id"],
            ],
        )
        .map(str::to_owned)
    };
    Ok(match kind {
        "user.deleted" => ProviderAction::UserDeleted(user()?),
        "user.session.revoked" | "session.revoked" | "user.sessions.revoked" => {
            ProviderAction::SessionRevoked(user()?, sid())
        }
        _ => ProviderAction::Ignored,
    })
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Result<&'a str, ApiError> {
    headers
        .get(name)
        .and_then(|value| value.to_str().ok())
        .ok_or_else(|| {
            ApiError::refused(
                ErrorCode::InvalidSignature,
                "The event is not signed (webhook-id, webhook-timestamp, webhook-signature).",
            )
        })
}

/// `POST /api/auth/provider-events`.
#[utoipa::path(
    post,
    path = "/api/auth/provider-events",
    operation_id = "receiveProviderEvent",
    tag = "Auth",
    summary = "The identity provider's events (its webhooks)",
    description = "Signed as Standard Webhooks (Svix: Privy and Dynamic) with the configured \
`whsec_` secret, at most 5 minutes old. `user.deleted` refuses every token of the fan from then \
on; `user.session.revoked` (or `session.revoked`) ends the session it names, or every session \
of the fan. Any other type is acknowledged and ignored. Each effect is idempotent: a repeated \
delivery changes nothing.",
    security(()),
    request_body(content = Value, content_type = "application/json"),
    responses(
        (status = 204, description = "Received (and applied, for the types above)."),
        (status = 400, response = doc::BadRequest),
    ),
)]
pub async fn provider_event<S: ReviseRevocations + Send + Sync + 'static>(
    State(state): State<Arc<AuthState<S>>>,
    headers: HeaderMap,
    RawBody(body): RawBody,
) -> Result<Response, ApiError> {
    let received = Received {
        id: header(&headers, "webhook-id")?,
        timestamp: header(&headers, "webhook-timestamp")?,
        signature: header(&headers, "webhook-signature")?,
    };
    verify(&state.provider_secrets, received, &body, unix_now()).map_err(|error| {
        tracing::info!(%error, "a provider event was refused");
        ApiError::refused(
            ErrorCode::InvalidSignature,
            "The event's signature does not verify.",
        )
    })?;
    let event: Value = serde_json::from_slice(&body).map_err(|_| invalid_json())?;
    let now = unix_now();
    let (user, change): (UserId, Box<dyn Fn(_) -> _ + Send + Sync>) = match provider_action(&event)?
    {
        ProviderAction::Ignored => return Ok(StatusCode::NO_CONTENT.into_response()),
        ProviderAction::UserDeleted(user) => (
            user,
            Box::new(move |mut revocations: domain::sessions::Revocations| {
                revocations.revoke_all(now);
                revocations.deleted = true;
                revocations
            }),
        ),
        ProviderAction::SessionRevoked(user, sid) => (
            user,
            Box::new(move |mut revocations: domain::sessions::Revocations| {
                match &sid {
                    // Until the longest a provider's token lives (a day): past it, its token
                    // has expired anyway.
                    Some(sid) => revocations.revoke_named(format!("sid:{sid}"), now + 86_400, now),
                    None => revocations.revoke_all(now),
                }
                revocations
            }),
        ),
    };
    state.store.revise_revocations(&user, change).await?;
    tracing::info!("a provider event was applied");
    Ok(StatusCode::NO_CONTENT.into_response())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn provider_events_are_read_from_privys_and_dynamics_shapes() {
        let fan = UserId::parse("did:privy:abc").unwrap();
        assert_eq!(
            provider_action(&json!({"type": "user.deleted", "data": {"user_id": "did:privy:abc"}}))
                .unwrap(),
            ProviderAction::UserDeleted(fan.clone())
        );
        assert_eq!(
            provider_action(&json!({"eventName": "user.session.revoked",
                "data": {"userId": "did:privy:abc", "sessionId": "s1"}}))
            .unwrap(),
            ProviderAction::SessionRevoked(fan, Some("s1".into()))
        );
        assert_eq!(
            provider_action(&json!({"type": "user.created"})).unwrap(),
            ProviderAction::Ignored
        );
        assert!(provider_action(&json!({"type": "user.deleted", "data": {}})).is_err());
    }
}
