//! The one error type of the API: every failure maps to a status, a stable snake_case code and a
//! human sentence, rendered as `{"success": false, "error": {"code", "message"}}`.
//!
//! Internal detail (SDK errors, Debug output) is carried for the logs only and never rendered.

use lambda_http::http::{HeaderValue, StatusCode, header};
use lambda_http::{Body, Response};
use serde::Serialize;

use crate::response::json_response;

/// The realm announced in `WWW-Authenticate`.
pub const AUTH_REALM: &str = "fan-api";

/// Seconds a client is asked to wait after a 503.
pub const RETRY_AFTER_SECONDS: u32 = 1;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApiError {
    /// 400: the request is malformed or breaks a rule.
    #[error("bad request ({code}): {message}")]
    BadRequest { code: &'static str, message: String },
    /// 401: no session token was sent.
    #[error("missing session token")]
    MissingToken,
    /// 401: the session token was refused. `message` is safe to show; `reason` is for the logs.
    #[error("invalid session token: {reason}")]
    InvalidToken {
        message: &'static str,
        reason: String,
    },
    /// 404: no route for this path.
    #[error("route not found")]
    NotFound,
    /// 405: the path exists but not with this method.
    #[error("method not allowed")]
    MethodNotAllowed { allow: String },
    /// 413: the body is larger than the limit.
    #[error("body over {limit} bytes")]
    PayloadTooLarge { limit: usize },
    /// 415: the body is not `application/json`.
    #[error("unsupported media type")]
    UnsupportedMediaType,
    /// 503: a dependency (DynamoDB, the JWKS endpoint) cannot be reached or throttles.
    #[error("{what} unavailable: {detail}")]
    Unavailable { what: &'static str, detail: String },
    /// 500: anything else. `detail` goes to the logs only.
    #[error("internal error: {detail}")]
    Internal { detail: String },
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    success: bool,
    error: ErrorDetail<'a>,
}

#[derive(Serialize)]
struct ErrorDetail<'a> {
    code: &'a str,
    message: &'a str,
}

impl ApiError {
    pub fn bad_request(code: &'static str, message: impl Into<String>) -> Self {
        Self::BadRequest {
            code,
            message: message.into(),
        }
    }

    pub fn status(&self) -> StatusCode {
        match self {
            Self::BadRequest { .. } => StatusCode::BAD_REQUEST,
            Self::MissingToken | Self::InvalidToken { .. } => StatusCode::UNAUTHORIZED,
            Self::NotFound => StatusCode::NOT_FOUND,
            Self::MethodNotAllowed { .. } => StatusCode::METHOD_NOT_ALLOWED,
            Self::PayloadTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            Self::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::Unavailable { .. } => StatusCode::SERVICE_UNAVAILABLE,
            Self::Internal { .. } => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The stable snake_case code clients can branch on.
    pub fn code(&self) -> &'static str {
        match self {
            Self::BadRequest { code, .. } => code,
            Self::MissingToken => "missing_token",
            Self::InvalidToken { .. } => "invalid_token",
            Self::NotFound => "not_found",
            Self::MethodNotAllowed { .. } => "method_not_allowed",
            Self::PayloadTooLarge { .. } => "payload_too_large",
            Self::UnsupportedMediaType => "unsupported_media_type",
            Self::Unavailable { .. } => "service_unavailable",
            Self::Internal { .. } => "internal_error",
        }
    }

    /// The sentence shown to the client: never internal detail.
    pub fn public_message(&self) -> String {
        match self {
            Self::BadRequest { message, .. } => message.clone(),
            Self::MissingToken => {
                "A session token is required: send 'Authorization: Bearer <token>'.".into()
            }
            Self::InvalidToken { message, .. } => (*message).into(),
            Self::NotFound => "No route matches this path.".into(),
            Self::MethodNotAllowed { allow } => format!("This path only accepts {allow}."),
            Self::PayloadTooLarge { limit } => {
                format!("The request body is larger than {limit} bytes.")
            }
            Self::UnsupportedMediaType => {
                "The request body must be sent with 'Content-Type: application/json'.".into()
            }
            Self::Unavailable { .. } => {
                "The service is temporarily unavailable; retry shortly.".into()
            }
            Self::Internal { .. } => "An internal error occurred.".into(),
        }
    }

    /// Whether this failure is ours (logged as an error) rather than the client's.
    pub fn is_server_fault(&self) -> bool {
        self.status().is_server_error()
    }

    /// Renders the JSON error response, with `WWW-Authenticate`, `Allow` or `Retry-After` where
    /// the status calls for it.
    pub fn into_response(self) -> Response<Body> {
        let message = self.public_message();
        let body = ErrorBody {
            success: false,
            error: ErrorDetail {
                code: self.code(),
                message: &message,
            },
        };
        let mut response = json_response(self.status(), &body);
        let headers = response.headers_mut();
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
            Self::MethodNotAllowed { allow } => {
                if let Ok(value) = HeaderValue::from_str(allow) {
                    headers.insert(header::ALLOW, value);
                }
            }
            Self::Unavailable { .. } => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECONDS));
            }
            _ => {}
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body_json(response: &Response<Body>) -> serde_json::Value {
        serde_json::from_slice(response.body().as_ref()).expect("error body is JSON")
    }

    #[test]
    fn every_variant_maps_to_its_status_code_and_json_body() {
        let cases = [
            (
                ApiError::bad_request("invalid_json", "bad"),
                400,
                "invalid_json",
            ),
            (ApiError::MissingToken, 401, "missing_token"),
            (
                ApiError::InvalidToken {
                    message: "m",
                    reason: "r".into(),
                },
                401,
                "invalid_token",
            ),
            (ApiError::NotFound, 404, "not_found"),
            (
                ApiError::MethodNotAllowed {
                    allow: "GET".into(),
                },
                405,
                "method_not_allowed",
            ),
            (
                ApiError::PayloadTooLarge { limit: 10 },
                413,
                "payload_too_large",
            ),
            (
                ApiError::UnsupportedMediaType,
                415,
                "unsupported_media_type",
            ),
            (
                ApiError::Unavailable {
                    what: "dynamodb",
                    detail: "x".into(),
                },
                503,
                "service_unavailable",
            ),
            (
                ApiError::Internal { detail: "x".into() },
                500,
                "internal_error",
            ),
        ];
        for (error, status, code) in cases {
            let response = error.into_response();
            assert_eq!(response.status().as_u16(), status, "{code}");
            assert_eq!(response.headers()[header::CONTENT_TYPE], "application/json");
            let body = body_json(&response);
            assert_eq!(body["success"], false);
            assert_eq!(body["error"]["code"], code);
            assert!(
                body["error"]["message"]
                    .as_str()
                    .is_some_and(|m| !m.is_empty())
            );
            assert_eq!(
                body.as_object().unwrap().len(),
                2,
                "no other top-level members"
            );
        }
    }

    #[test]
    fn internal_detail_never_reaches_the_body() {
        let secret = "DispatchFailure(ConnectorError { kind: Io, source: hyper::Error })";
        for error in [
            ApiError::Internal {
                detail: secret.into(),
            },
            ApiError::Unavailable {
                what: "dynamodb",
                detail: secret.into(),
            },
            ApiError::InvalidToken {
                message: "The session token is invalid.",
                reason: secret.into(),
            },
        ] {
            let text = String::from_utf8(error.into_response().body().to_vec()).unwrap();
            assert!(!text.contains("Dispatch"), "{text}");
            assert!(!text.contains("hyper"), "{text}");
        }
    }

    #[test]
    fn status_specific_headers_are_set() {
        let r = ApiError::MissingToken.into_response();
        assert_eq!(
            r.headers()[header::WWW_AUTHENTICATE],
            r#"Bearer realm="fan-api""#
        );
        let r = ApiError::InvalidToken {
            message: "m",
            reason: "r".into(),
        }
        .into_response();
        assert!(
            r.headers()[header::WWW_AUTHENTICATE]
                .to_str()
                .unwrap()
                .contains(r#"error="invalid_token""#)
        );
        let r = ApiError::Unavailable {
            what: "dynamodb",
            detail: String::new(),
        }
        .into_response();
        assert_eq!(r.headers()[header::RETRY_AFTER], "1");
        let r = ApiError::MethodNotAllowed {
            allow: "POST".into(),
        }
        .into_response();
        assert_eq!(r.headers()[header::ALLOW], "POST");
    }
}
