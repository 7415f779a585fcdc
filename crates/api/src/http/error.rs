//! The one error type of the API: every failure maps to a status, a stable snake_case code and a
//! human sentence, rendered as `{"success": false, "error": {"code", "message"}}`.
//!
//! Internal detail (SDK errors, Debug output) is carried for the logs only and never rendered.

use std::borrow::Cow;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use crate::http::response::json_text_response;

/// The realm announced in `WWW-Authenticate`.
pub const AUTH_REALM: &str = "fan-api";

/// Seconds a client is asked to wait after a 503.
pub const RETRY_AFTER_SECONDS: u32 = 1;

/// Every error code of the API, each with its one status. Clients branch on the code, written
/// once here: its text is the variant's name in snake_case (strum for the API, utoipa for the
/// OpenAPI document; a test checks that both agree).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, strum::EnumIter, strum::IntoStaticStr, utoipa::ToSchema,
)]
#[strum(serialize_all = "snake_case")]
#[schema(rename_all = "snake_case")]
pub enum ErrorCode {
    InvalidJson,
    InvalidBody,
    InvalidPayload,
    InvalidLimit,
    InvalidCursor,
    InvalidQuery,
    MissingIdempotencyKey,
    InvalidIdempotencyKey,
    InvalidClientSeed,
    UnsupportedPaymentMethod,
    MissingToken,
    InvalidToken,
    InsufficientFunds,
    NotFound,
    PackNotFound,
    PurchaseNotFound,
    MethodNotAllowed,
    NotOnSale,
    SoldOut,
    PurchaseLimitReached,
    UnpaidHoldsLimit,
    PurchaseNotCompleted,
    ReservationExpired,
    PayloadTooLarge,
    UnsupportedMediaType,
    IdempotencyKeyReused,
    MalformedRequest,
    HeadersTooLarge,
    InternalError,
    ServiceUnavailable,
    InvalidAmount,
    UnsupportedCurrency,
    TopUpNotFound,
    PaymentProviderError,
    InvalidSignature,
    LeagueNotFound,
    TeamNotFound,
    DisplayNameTaken,
    ItemNotOwned,
    LockerRoomNotFound,
    WalletLimitReached,
    WalletNotFound,
    TooManyPendingTopUps,
    QuestNotFound,
    QuestNotCompleted,
    QuestEnded,
    QueueNotFound,
    QueueEntryNotFound,
    QueueNotOpen,
    QueueClosed,
    QueueNotClosed,
    QueueNotFinished,
    QueueAdmissionRequired,
    RateLimited,
    HumanCheckFailed,
    AppVersionUnsupported,
    Maintenance,
    EdgeRequired,
    OperatorRequired,
    EventNotFound,
    SessionRevoked,
    EndpointNotFound,
    DeliveryNotFound,
    EndpointChanged,
    EndpointDisabled,
    ConfirmationRequired,
    ProductNotFound,
    OrderNotFound,
    CosmeticNotOwned,
}

impl ErrorCode {
    /// Every code, in declaration order (documentation checks).
    pub fn all() -> impl Iterator<Item = ErrorCode> {
        <Self as strum::IntoEnumIterator>::iter()
    }

    /// The stable snake_case code.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Whether the code is also answered at 422 ([`ApiError::Unprocessable`]): a resource's
    /// not-found code when the body, not the path, names the missing resource
    /// (`favoriteTeamId`).
    pub const fn also_unprocessable(self) -> bool {
        matches!(self, Self::TeamNotFound)
    }

    pub const fn status(self) -> StatusCode {
        match self {
            Self::InvalidJson
            | Self::InvalidBody
            | Self::InvalidPayload
            | Self::InvalidLimit
            | Self::InvalidCursor
            | Self::InvalidQuery
            | Self::MissingIdempotencyKey
            | Self::InvalidIdempotencyKey
            | Self::InvalidClientSeed
            | Self::UnsupportedPaymentMethod
            | Self::MalformedRequest => StatusCode::BAD_REQUEST,
            Self::HeadersTooLarge => StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            Self::MissingToken | Self::InvalidToken | Self::SessionRevoked => {
                StatusCode::UNAUTHORIZED
            }
            Self::InsufficientFunds => StatusCode::PAYMENT_REQUIRED,
            Self::NotFound | Self::PackNotFound | Self::PurchaseNotFound => StatusCode::NOT_FOUND,
            Self::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Self::NotOnSale
            | Self::SoldOut
            | Self::PurchaseLimitReached
            | Self::UnpaidHoldsLimit
            | Self::PurchaseNotCompleted => StatusCode::CONFLICT,
            Self::ReservationExpired => StatusCode::GONE,
            Self::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Self::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::IdempotencyKeyReused => StatusCode::UNPROCESSABLE_ENTITY,
            Self::InternalError => StatusCode::INTERNAL_SERVER_ERROR,
            Self::ServiceUnavailable => StatusCode::SERVICE_UNAVAILABLE,
            Self::InvalidAmount | Self::UnsupportedCurrency | Self::InvalidSignature => {
                StatusCode::BAD_REQUEST
            }
            Self::TopUpNotFound
            | Self::LeagueNotFound
            | Self::TeamNotFound
            | Self::WalletNotFound => StatusCode::NOT_FOUND,
            Self::WalletLimitReached => StatusCode::CONFLICT,
            Self::PaymentProviderError => StatusCode::BAD_GATEWAY,
            Self::DisplayNameTaken => StatusCode::CONFLICT,
            Self::LockerRoomNotFound => StatusCode::NOT_FOUND,
            Self::ItemNotOwned => StatusCode::UNPROCESSABLE_ENTITY,
            Self::TooManyPendingTopUps => StatusCode::CONFLICT,
            Self::QuestNotFound => StatusCode::NOT_FOUND,
            Self::QuestNotCompleted => StatusCode::CONFLICT,
            Self::QuestEnded => StatusCode::GONE,
            Self::QueueNotFound | Self::QueueEntryNotFound => StatusCode::NOT_FOUND,
            Self::QueueNotOpen
            | Self::QueueClosed
            | Self::QueueNotClosed
            | Self::QueueNotFinished => StatusCode::CONFLICT,
            Self::QueueAdmissionRequired => StatusCode::FORBIDDEN,
            Self::RateLimited => StatusCode::TOO_MANY_REQUESTS,
            Self::HumanCheckFailed => StatusCode::FORBIDDEN,
            Self::AppVersionUnsupported => StatusCode::UPGRADE_REQUIRED,
            Self::Maintenance => StatusCode::SERVICE_UNAVAILABLE,
            Self::EdgeRequired | Self::OperatorRequired => StatusCode::FORBIDDEN,
            Self::EventNotFound | Self::EndpointNotFound | Self::DeliveryNotFound => {
                StatusCode::NOT_FOUND
            }
            Self::EndpointChanged | Self::EndpointDisabled | Self::ConfirmationRequired => {
                StatusCode::CONFLICT
            }
            Self::ProductNotFound | Self::OrderNotFound => StatusCode::NOT_FOUND,
            Self::CosmeticNotOwned => StatusCode::UNPROCESSABLE_ENTITY,
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApiError {
    /// A request refused with `code` (its status) and a sentence safe to show.
    #[error("refused ({code}): {message}")]
    Refused {
        code: ErrorCode,
        message: Cow<'static, str>,
    },
    /// 422: the body names a resource that does not exist (a `favoriteTeamId` naming no team):
    /// that resource's not-found `code`, but 422, not its 404: the request's own path was found,
    /// and a client retrying it unchanged gets the same answer.
    #[error("unprocessable ({code}): {message}")]
    Unprocessable {
        code: ErrorCode,
        message: Cow<'static, str>,
    },
    /// 401: no session token was sent.
    #[error("missing session token")]
    MissingToken,
    /// 401: the session token was refused. `message` is safe to show; `reason` is for the logs.
    #[error("invalid session token: {reason}")]
    InvalidToken {
        message: &'static str,
        reason: String,
    },
    /// 401: the token is valid but its session was ended (a logout, an operator, the identity
    /// provider, the account's deletion: `deleted`).
    #[error("session ended (account deleted: {deleted})")]
    SessionEnded { deleted: bool },
    /// 405: the path exists but not with this method; `allow` lists its methods.
    #[error("method not allowed")]
    MethodNotAllowed { allow: String },
    /// 413: the body is larger than the limit.
    #[error("body over {limit} bytes")]
    PayloadTooLarge { limit: usize },
    /// 503: a dependency (DynamoDB, the JWKS endpoint) cannot be reached or throttles.
    #[error("{what} unavailable: {detail}")]
    Unavailable { what: &'static str, detail: String },
    /// 429: over a rate limit (`domain::ratelimit`); `retry_after` seconds is never before the
    /// refusing window's end.
    #[error("rate limited ({class})")]
    RateLimited {
        class: &'static str,
        retry_after: u32,
    },
    /// 500: anything else. `detail` goes to the logs only.
    #[error("internal error: {detail}")]
    Internal { detail: String },
    /// 426: the app (`X-App-Version`) is below its platform's forced minimum; its fan updates
    /// from `store_url` (the operator's, an `https` URL: in the message and in `Link`).
    #[error("app version unsupported")]
    AppVersionUnsupported { store_url: String },
    /// 503: writes are in maintenance; `retry_after` seconds (the window's end, or a minute).
    #[error("maintenance")]
    Maintenance { retry_after: u32 },
}

/// A storage failure is a 503 when the store is unavailable (the client retries with its
/// Idempotency-Key), else a 500; its whole cause chain goes to the log line, never to the client.
impl From<store::StoreError> for ApiError {
    fn from(error: store::StoreError) -> Self {
        let detail = error.detail();
        match error {
            store::StoreError::Unavailable { .. } => ApiError::Unavailable {
                what: "dynamodb",
                detail,
            },
            store::StoreError::Internal { .. } => ApiError::Internal { detail },
        }
    }
}

/// The body of every error answer.
#[derive(Serialize, utoipa::ToSchema)]
// `deny_unknown_fields` for the schema only (`additionalProperties: false`).
#[serde(deny_unknown_fields)]
#[schema(as = Error)]
pub struct ErrorBody<'a> {
    #[schema(schema_with = crate::openapi::schemas::always_false)]
    success: bool,
    #[schema(inline)]
    error: ErrorDetail<'a>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct ErrorDetail<'a> {
    /// Stable snake_case code.
    #[schema(value_type = ErrorCode)]
    code: &'a str,
    /// A sentence for a person; never internal detail.
    #[schema(min_length = 1)]
    message: &'a str,
}

impl ApiError {
    /// A refusal with `code` and a sentence for the client.
    pub fn refused(code: ErrorCode, message: impl Into<Cow<'static, str>>) -> Self {
        Self::Refused {
            code,
            message: message.into(),
        }
    }

    /// 422 with `code`, a resource's not-found code that may be answered so
    /// ([`ErrorCode::also_unprocessable`]): the body names a resource that does not exist.
    pub fn unprocessable(code: ErrorCode, message: impl Into<Cow<'static, str>>) -> Self {
        debug_assert!(code.also_unprocessable(), "{code} is not answered at 422");
        Self::Unprocessable {
            code,
            message: message.into(),
        }
    }

    /// 404 `not_found`: no route for this path.
    pub fn not_found() -> Self {
        Self::refused(ErrorCode::NotFound, "No route matches this path.")
    }

    /// 415 `unsupported_media_type`.
    pub fn unsupported_media_type() -> Self {
        Self::refused(
            ErrorCode::UnsupportedMediaType,
            "The request body must be sent with 'Content-Type: application/json'.",
        )
    }

    pub fn code(&self) -> ErrorCode {
        match self {
            Self::Refused { code, .. } | Self::Unprocessable { code, .. } => *code,
            Self::MissingToken => ErrorCode::MissingToken,
            Self::InvalidToken { .. } => ErrorCode::InvalidToken,
            Self::SessionEnded { .. } => ErrorCode::SessionRevoked,
            Self::MethodNotAllowed { .. } => ErrorCode::MethodNotAllowed,
            Self::PayloadTooLarge { .. } => ErrorCode::PayloadTooLarge,
            Self::Unavailable { .. } => ErrorCode::ServiceUnavailable,
            Self::RateLimited { .. } => ErrorCode::RateLimited,
            Self::Internal { .. } => ErrorCode::InternalError,
            Self::AppVersionUnsupported { .. } => ErrorCode::AppVersionUnsupported,
            Self::Maintenance { .. } => ErrorCode::Maintenance,
        }
    }

    pub fn status(&self) -> StatusCode {
        match self {
            Self::Unprocessable { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            _ => self.code().status(),
        }
    }

    /// The sentence shown to the client: never internal detail.
    pub fn public_message(&self) -> Cow<'static, str> {
        match self {
            Self::Refused { message, .. } | Self::Unprocessable { message, .. } => message.clone(),
            Self::MissingToken => {
                "A session token is required: send 'Authorization: Bearer <token>'.".into()
            }
            Self::InvalidToken { message, .. } => (*message).into(),
            Self::SessionEnded { deleted: false } => {
                "This session was ended (signed out): sign in again.".into()
            }
            Self::SessionEnded { deleted: true } => "This account was deleted.".into(),
            Self::MethodNotAllowed { allow } => format!("This path only accepts {allow}.").into(),
            Self::PayloadTooLarge { limit } => {
                format!("The request body is larger than {limit} bytes.").into()
            }
            Self::Unavailable { .. } => {
                "The service is temporarily unavailable; retry shortly.".into()
            }
            Self::RateLimited { .. } => {
                "Too many requests: retry after the seconds in 'Retry-After'.".into()
            }
            Self::Internal { .. } => "An internal error occurred.".into(),
            Self::AppVersionUnsupported { store_url } => format!(
                "This version of the app is no longer supported: update it from {store_url}."
            )
            .into(),
            Self::Maintenance { .. } => {
                "The service is in maintenance: changes are paused; retry after the seconds in \
                 'Retry-After'."
                    .into()
            }
        }
    }

    /// Whether this failure is ours (logged as an error) rather than the client's.
    pub fn is_server_fault(&self) -> bool {
        self.status().is_server_error()
    }

    /// The JSON body: `{"success": false, "error": {"code", "message"}}`.
    pub fn body(&self) -> String {
        let message = self.public_message();
        let body = ErrorBody {
            success: false,
            error: ErrorDetail {
                code: self.code().as_str(),
                message: &message,
            },
        };
        // Two strings: serialising cannot fail.
        serde_json::to_string(&body).expect("an error body always serialises")
    }
}

/// Every failure of a request becomes its JSON answer here, whichever layer refused it (an
/// extractor, a handler, the router's fallback, the deadline), and is logged once, in the
/// request's span: a server fault at error level, a refusal at info. Only the code and the
/// detail meant for the logs are written: never the request's token, body or e-mail.
impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        if self.is_server_fault() {
            tracing::error!(status = status.as_u16(), code = %self.code(), detail = %self, "request failed");
        } else {
            tracing::info!(status = status.as_u16(), code = %self.code(), detail = %self, "request refused");
        }
        let mut response = json_text_response(status, self.body());
        let headers = response.headers_mut();
        // A refusal is about this request: no cache (the edge, a browser) may answer another
        // with it, whichever layer refused it.
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        match &self {
            Self::MissingToken => {
                headers.insert(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static(r#"Bearer realm="fan-api""#),
                );
            }
            Self::InvalidToken { .. } => {
                headers.insert(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static(
                        r#"Bearer realm="fan-api", error="invalid_token", error_description="The session token is invalid or expired""#,
                    ),
                );
            }
            Self::SessionEnded { .. } => {
                headers.insert(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static(
                        r#"Bearer realm="fan-api", error="invalid_token", error_description="The session was ended""#,
                    ),
                );
            }
            Self::MethodNotAllowed { allow } => {
                if let Ok(value) = HeaderValue::from_str(allow) {
                    headers.insert(header::ALLOW, value);
                }
            }
            Self::Unavailable { .. } => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECONDS));
            }
            Self::RateLimited { retry_after, .. } | Self::Maintenance { retry_after } => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from(*retry_after));
            }
            Self::AppVersionUnsupported { store_url } => {
                // A normalised https URL: no character a header cannot carry.
                if let Ok(value) = HeaderValue::from_str(&format!("<{store_url}>; rel=\"update\""))
                {
                    headers.insert(header::LINK, value);
                }
            }
            _ => {}
        }
        response
    }
}

#[cfg(test)]
mod tests;
