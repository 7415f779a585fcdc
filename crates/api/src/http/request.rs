//! Parsing of the request's parts: bearer token, content type, body limit, query, headers, source
//! address. The extractors ([`crate::http::extract`]) apply them; they are plain functions of the
//! headers and bytes so that tests and benchmarks call them alone.

use axum::http::{HeaderMap, header};
use lambda_http::RequestExt;

use crate::http::error::{ApiError, ErrorCode};
use domain::ratelimit::{CounterKey, Scope, counter_key};

/// Default limit of a request body, in bytes.
pub const DEFAULT_MAX_BODY_BYTES: usize = 64 * 1024;

/// The longest `Authorization` header value looked at. Real session tokens are a few KiB at most.
pub const MAX_TOKEN_BYTES: usize = 8 * 1024;

/// The bearer token of the `Authorization` header. The scheme name is case-insensitive.
pub fn bearer_token(headers: &HeaderMap) -> Result<&str, ApiError> {
    let invalid = |reason: &str| ApiError::InvalidToken {
        message: "The session token is invalid or expired.",
        reason: reason.into(),
    };
    let Some(value) = headers.get(header::AUTHORIZATION) else {
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
pub fn require_json_content_type(headers: &HeaderMap) -> Result<(), ApiError> {
    let media_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .map(|value| value.split(';').next().unwrap_or_default().trim());
    match media_type {
        Some(media_type) if media_type.eq_ignore_ascii_case("application/json") => Ok(()),
        _ => Err(ApiError::unsupported_media_type()),
    }
}

/// `bytes`, refused over `limit`.
pub fn within_limit(bytes: &[u8], limit: usize) -> Result<&[u8], ApiError> {
    if bytes.len() > limit {
        return Err(ApiError::PayloadTooLarge { limit });
    }
    Ok(bytes)
}

/// The single value of query parameter `name` (percent-decoded) of the raw query string; a
/// repeated parameter is a 400.
pub fn single_query_param(query: Option<&str>, name: &str) -> Result<Option<String>, ApiError> {
    let query = query.unwrap_or_default();
    let mut values = url::form_urlencoded::parse(query.as_bytes()).filter(|(key, _)| key == name);
    let first = values.next().map(|(_, value)| value.into_owned());
    if values.next().is_some() {
        return Err(ApiError::refused(
            ErrorCode::InvalidQuery,
            format!("The query parameter '{name}' must be given at most once."),
        ));
    }
    Ok(first)
}

/// The longest accepted `Idempotency-Key`.
pub const MAX_IDEMPOTENCY_KEY_LEN: usize = 255;

/// `missing_idempotency_key`'s message. Neutral: the header serves a purchase start, a top-up
/// and a quest claim alike.
pub const MISSING_IDEMPOTENCY_KEY: &str = "An 'Idempotency-Key' header is required: a unique string for this request, sent again unchanged on a retry so that it takes effect once.";
/// `invalid_idempotency_key`'s message.
pub const INVALID_IDEMPOTENCY_KEY: &str =
    "The 'Idempotency-Key' header must be sent once, as 1-255 visible ASCII characters.";

/// The `Idempotency-Key` header: required, 1-255 visible ASCII characters (0x21-0x7E), once.
pub fn idempotency_key(headers: &HeaderMap) -> Result<&str, ApiError> {
    let mut values = headers.get_all("idempotency-key").iter();
    let Some(value) = values.next() else {
        return Err(ApiError::refused(
            ErrorCode::MissingIdempotencyKey,
            MISSING_IDEMPOTENCY_KEY,
        ));
    };
    let bytes = value.as_bytes();
    let valid = values.next().is_none()
        && (1..=MAX_IDEMPOTENCY_KEY_LEN).contains(&bytes.len())
        && bytes.iter().all(|b| (0x21..=0x7e).contains(b));
    if !valid {
        return Err(ApiError::refused(
            ErrorCode::InvalidIdempotencyKey,
            INVALID_IDEMPOTENCY_KEY,
        ));
    }
    // Visible ASCII is valid UTF-8.
    Ok(std::str::from_utf8(bytes).unwrap_or_default())
}

/// Reads a JSON object body into `T` (whose fields say what is allowed): malformed JSON, or a
/// body that is not UTF-8 anywhere (serde checks only the strings it keeps), is `invalid_json`;
/// a value that is not such an object, a repeated or unknown member is `invalid_body` with
/// `shape`.
pub fn json_object<'a, T: serde::Deserialize<'a>>(
    body: &'a [u8],
    shape: &'static str,
) -> Result<T, ApiError> {
    let body = std::str::from_utf8(body).map_err(|_| invalid_json())?;
    let first = body
        .bytes()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'));
    match serde_json::from_str::<T>(body) {
        Ok(value) if first == Some(b'{') => Ok(value),
        Err(error) if error.is_syntax() || error.is_eof() => Err(invalid_json()),
        _ => Err(ApiError::refused(ErrorCode::InvalidBody, shape)),
    }
}

pub fn invalid_json() -> ApiError {
    ApiError::refused(
        ErrorCode::InvalidJson,
        "The request body is not valid JSON.",
    )
}

/// A request as the server of the handlers outside Lambda (the local API) hands it: its number
/// for the logs (written `local-<n>`, as Lambda's request id is), and its connection's peer. One
/// extension, not two: each is a box and a map entry on every request.
#[derive(Debug, Clone, Copy)]
pub struct LocalRequest {
    pub id: u64,
    pub peer: LocalPeer,
}

/// The peer address of a request's connection: its source address, as API Gateway's `sourceIp`
/// is in Lambda, with the key its rate limits count it under, hashed once for the connection's
/// requests.
#[derive(Debug, Clone, Copy)]
pub struct LocalPeer {
    address: std::net::IpAddr,
    key: CounterKey,
}

impl LocalPeer {
    pub fn new(address: std::net::IpAddr) -> Self {
        Self {
            address,
            key: counter_key(Scope::Address, &address_text(address)),
        }
    }
}

/// The address the request came from: API Gateway's `requestContext.http.sourceIp` (the TCP
/// peer it saw), else the local server's peer. Never a header such as `X-Forwarded-For`, which
/// the client writes.
pub fn source_address<B>(request: &axum::http::Request<B>) -> Option<String> {
    gateway_source(request).or_else(|| {
        request
            .extensions()
            .get::<LocalRequest>()
            .map(|local| address_text(local.peer.address))
    })
}

/// The key the request's [`source_address`] is counted under ([`Scope::Address`]).
pub fn source_key<B>(request: &axum::http::Request<B>) -> Option<CounterKey> {
    match gateway_source(request) {
        Some(address) => Some(counter_key(Scope::Address, &address)),
        None => request
            .extensions()
            .get::<LocalRequest>()
            .map(|local| local.peer.key),
    }
}

/// API Gateway's `requestContext.http.sourceIp`.
fn gateway_source<B>(request: &axum::http::Request<B>) -> Option<String> {
    request
        .request_context_ref()
        .and_then(|context| match context {
            lambda_http::request::RequestContext::ApiGatewayV2(context) => {
                context.http.source_ip.clone()
            }
            #[allow(unreachable_patterns)] // other event kinds are compiled out by features
            _ => None,
        })
}

/// An address as `Display` writes it, an IPv4 one without the formatting machinery: local-api
/// counts every request on its peer's address, and `to_string` was a thirtieth of its work on a
/// read (BENCHMARKS.md).
fn address_text(address: std::net::IpAddr) -> String {
    let std::net::IpAddr::V4(v4) = address else {
        return address.to_string();
    };
    let mut text = String::with_capacity(15);
    let mut digits = itoa::Buffer::new();
    for (index, octet) in v4.octets().into_iter().enumerate() {
        if index > 0 {
            text.push('.');
        }
        text.push_str(digits.format(octet));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn with_auth(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::AUTHORIZATION, HeaderValue::from_str(value).unwrap());
        headers
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
        assert_eq!(bearer_token(&HeaderMap::new()), Err(ApiError::MissingToken));
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

    fn with_content_type(value: Option<&str>) -> HeaderMap {
        let mut headers = HeaderMap::new();
        if let Some(value) = value {
            headers.insert(header::CONTENT_TYPE, HeaderValue::from_str(value).unwrap());
        }
        headers
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
                Err(ApiError::unsupported_media_type()),
                "{value:?}"
            );
        }
    }

    #[test]
    fn body_limit_is_inclusive() {
        let body = [b'x'; 10];
        assert_eq!(within_limit(&body, 10).unwrap().len(), 10);
        assert_eq!(
            within_limit(&body, 9),
            Err(ApiError::PayloadTooLarge { limit: 9 })
        );
    }

    #[test]
    fn an_address_is_written_as_display_writes_it() {
        for address in [
            "203.0.113.7",
            "0.0.0.0",
            "255.255.255.255",
            "10.0.0.1",
            "::1",
            "2001:db8::7",
        ] {
            let address: std::net::IpAddr = address.parse().unwrap();
            assert_eq!(address_text(address), address.to_string());
        }
    }
}
