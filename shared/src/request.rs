//! Parsing of the HTTP request: routing guard, bearer token, content type, body limit, query.

use lambda_http::http::{Method, header};
use lambda_http::{Request, RequestExt};

use crate::error::ApiError;

/// Default limit of a request body, in bytes.
pub const DEFAULT_MAX_BODY_BYTES: usize = 64 * 1024;

/// The longest `Authorization` header value looked at. Real session tokens are a few KiB at most.
pub const MAX_TOKEN_BYTES: usize = 8 * 1024;

/// One route: a method on an exact path.
#[derive(Debug, Clone)]
pub struct Route {
    pub method: Method,
    pub path: &'static str,
}

/// Every route of the API. A request for none of them gets 405 (with `Allow`) when its path is
/// known with another method, 404 otherwise.
pub const ROUTES: [Route; 2] = [LIST_PACKS, WEB3_LINK];

/// `GET /api/packs`
pub const LIST_PACKS: Route = Route {
    method: Method::GET,
    path: "/api/packs",
};
/// `POST /api/web3-link`
pub const WEB3_LINK: Route = Route {
    method: Method::POST,
    path: "/api/web3-link",
};

/// The path the client called, before any stage prefix, without a trailing slash.
pub fn request_path(request: &Request) -> &str {
    let path = request.raw_http_path();
    let path = if path.is_empty() {
        request.uri().path()
    } else {
        path
    };
    match path.trim_end_matches('/') {
        "" => "/",
        trimmed => trimmed,
    }
}

/// The error for a request that matches no route: 405 when the path is known, else 404.
pub fn unrouted(request: &Request) -> ApiError {
    let path = request_path(request);
    match ROUTES.iter().find(|route| route.path == path) {
        Some(route) => ApiError::MethodNotAllowed {
            allow: route.method.as_str().to_owned(),
        },
        None => ApiError::NotFound,
    }
}

impl Route {
    /// Ok when the request is for this route, else the error [`unrouted`] gives.
    pub fn check(&self, request: &Request) -> Result<(), ApiError> {
        if request_path(request) == self.path && request.method() == self.method {
            Ok(())
        } else {
            Err(unrouted(request))
        }
    }
}

/// The bearer token of the `Authorization` header. The scheme name is case-insensitive.
pub fn bearer_token(request: &Request) -> Result<&str, ApiError> {
    let invalid = |reason: &str| ApiError::InvalidToken {
        message: "The session token is invalid or expired.",
        reason: reason.into(),
    };
    let Some(value) = request.headers().get(header::AUTHORIZATION) else {
        return Err(ApiError::MissingToken);
    };
    if value.len() > MAX_TOKEN_BYTES {
        return Err(invalid("authorization header too long"));
    }
    let value = value
        .to_str()
        .map_err(|_| invalid("authorization header is not visible ASCII"))?
        .trim();
    let (scheme, token) = value.split_once(' ').unwrap_or((value, ""));
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(ApiError::MissingToken);
    }
    let token = token.trim_start_matches(' ');
    if token.is_empty() {
        return Err(ApiError::MissingToken);
    }
    Ok(token)
}

/// Requires `Content-Type: application/json`, parameters such as `charset` allowed.
pub fn require_json_content_type(request: &Request) -> Result<(), ApiError> {
    let media_type = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .map(|value| value.split(';').next().unwrap_or_default().trim());
    match media_type {
        Some(media_type) if media_type.eq_ignore_ascii_case("application/json") => Ok(()),
        _ => Err(ApiError::UnsupportedMediaType),
    }
}

/// The body bytes (API Gateway's base64 is already decoded), refused over `limit`.
pub fn body_bytes(request: &Request, limit: usize) -> Result<&[u8], ApiError> {
    let bytes: &[u8] = request.body().as_ref();
    if bytes.len() > limit {
        return Err(ApiError::PayloadTooLarge { limit });
    }
    Ok(bytes)
}

/// The single value of query parameter `name` (percent-decoded) from the raw query string; a
/// repeated parameter is a 400.
pub fn single_query_param(request: &Request, name: &str) -> Result<Option<String>, ApiError> {
    let query = request.uri().query().unwrap_or_default();
    let mut values = url::form_urlencoded::parse(query.as_bytes()).filter(|(key, _)| key == name);
    let first = values.next().map(|(_, value)| value.into_owned());
    if values.next().is_some() {
        return Err(ApiError::bad_request(
            "invalid_query",
            format!("The query parameter '{name}' must be given at most once."),
        ));
    }
    Ok(first)
}

#[cfg(test)]
mod tests {
    use super::*;
    use lambda_http::{Body, http};

    fn with_auth(value: &str) -> Request {
        http::Request::builder()
            .header(header::AUTHORIZATION, value)
            .body(Body::Empty)
            .unwrap()
    }

    #[test]
    fn bearer_scheme_is_case_insensitive() {
        for header in [
            "Bearer abc.def.ghi",
            "bearer abc.def.ghi",
            "BEARER  abc.def.ghi",
            " Bearer abc.def.ghi ",
        ] {
            assert_eq!(
                bearer_token(&with_auth(header)).unwrap(),
                "abc.def.ghi",
                "{header}"
            );
        }
    }

    #[test]
    fn missing_empty_or_other_scheme_is_missing_token() {
        assert_eq!(
            bearer_token(&Request::default()),
            Err(ApiError::MissingToken)
        );
        for header in ["Bearer", "Bearer ", "Basic dXNlcjpwYXNz", "Token abc", ""] {
            assert_eq!(
                bearer_token(&with_auth(header)),
                Err(ApiError::MissingToken),
                "{header:?}"
            );
        }
    }

    #[test]
    fn oversized_header_is_invalid_token() {
        let header = format!("Bearer {}", "a".repeat(MAX_TOKEN_BYTES));
        assert!(matches!(
            bearer_token(&with_auth(&header)),
            Err(ApiError::InvalidToken { .. })
        ));
    }

    fn with_content_type(value: Option<&str>) -> Request {
        let mut builder = http::Request::builder();
        if let Some(value) = value {
            builder = builder.header(header::CONTENT_TYPE, value);
        }
        builder.body(Body::Empty).unwrap()
    }

    #[test]
    fn content_type_accepts_json_with_parameters() {
        for value in [
            "application/json",
            "application/json; charset=utf-8",
            "Application/JSON;charset=UTF-8",
        ] {
            assert_eq!(
                require_json_content_type(&with_content_type(Some(value))),
                Ok(()),
                "{value}"
            );
        }
        for value in [
            None,
            Some("text/plain"),
            Some("application/jsonx"),
            Some("application/x-www-form-urlencoded"),
            Some(""),
        ] {
            assert_eq!(
                require_json_content_type(&with_content_type(value)),
                Err(ApiError::UnsupportedMediaType),
                "{value:?}"
            );
        }
    }

    #[test]
    fn body_limit_is_inclusive() {
        let request = http::Request::new(Body::Binary(vec![b'x'; 10]));
        assert_eq!(body_bytes(&request, 10).unwrap().len(), 10);
        assert_eq!(
            body_bytes(&request, 9),
            Err(ApiError::PayloadTooLarge { limit: 9 })
        );
    }
}
