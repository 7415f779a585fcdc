//! JSON responses.

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use serde::Serialize;

/// A response with `status`, `content-type: application/json` and `value` serialised as its body.
pub fn json_response<T: Serialize + ?Sized>(status: StatusCode, value: &T) -> Response {
    // Serialising our own response types cannot fail: they hold only strings, numbers, maps with
    // string keys and already-validated raw JSON.
    json_text_response(
        status,
        serde_json::to_string(value).expect("response types always serialise"),
    )
}

/// A response with `status`, `content-type: application/json` and `text`, which is JSON.
pub fn json_text_response(status: StatusCode, text: String) -> Response {
    let mut response = Response::new(Body::from(text));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// How long a cache in front (a CDN, an API cache) may keep a public answer: a crowd refreshing
/// a pack during a drop then costs the origin one request per cache per 5 s, and what a fan sees
/// is at most 5 s older than the `remaining` summary, itself at most about 30 s behind the
/// supply (BENCHMARKS.md, capacity): well inside the minute a fan's figure may lag.
pub const PUBLIC_MAX_AGE_SECONDS: u32 = 5;

/// `response` marked cacheable by shared caches for [`PUBLIC_MAX_AGE_SECONDS`].
pub fn publicly_cached(mut response: Response) -> Response {
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(PUBLIC_CACHE_CONTROL),
    );
    response
}

/// `Idempotent-Replayed: true` on `response`: the answer repeats an earlier one.
pub fn mark_replayed(response: &mut Response) {
    response
        .headers_mut()
        .insert("idempotent-replayed", HeaderValue::from_static("true"));
}

/// [`PUBLIC_MAX_AGE_SECONDS`] spelt as a header (a test checks they agree).
const PUBLIC_CACHE_CONTROL: &str = "public, max-age=5";

#[cfg(test)]
mod tests {
    #[test]
    fn the_cache_header_spells_the_max_age() {
        assert_eq!(
            super::PUBLIC_CACHE_CONTROL,
            format!("public, max-age={}", super::PUBLIC_MAX_AGE_SECONDS)
        );
    }
}
