//! JSON responses.

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
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

/// `response` kept by no cache (`Cache-Control: no-store`): an answer about this instant.
pub fn not_stored(mut response: Response) -> Response {
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// A public JSON answer (`text`) with its `ETag`, cacheable as [`publicly_cached`]; `304 Not
/// Modified` without the body when the request's `If-None-Match` names that tag (or is `*`).
/// The tag is the first 128 bits of the body's SHA-256: the same body, the same tag, on every
/// instance, with nothing stored.
pub fn tagged(request: &HeaderMap, text: String) -> Response {
    let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, text.as_bytes());
    let tag = format!("\"{}\"", hex::encode(&digest.as_ref()[..16]));
    let matched = request
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(|candidate| candidate.trim())
        .any(|candidate| candidate == "*" || candidate.trim_start_matches("W/") == tag);
    let mut response = if matched {
        let mut response = Response::new(Body::empty());
        *response.status_mut() = StatusCode::NOT_MODIFIED;
        response
    } else {
        json_text_response(StatusCode::OK, text)
    };
    let tag = HeaderValue::from_str(&tag).expect("hex in quotes is a header value");
    response.headers_mut().insert(header::ETAG, tag);
    publicly_cached(response)
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
    use axum::http::{HeaderMap, StatusCode, header};

    #[test]
    fn a_tag_sent_back_is_not_modified_and_another_is_the_answer() {
        let answer = super::tagged(&HeaderMap::new(), "{}".into());
        assert_eq!(answer.status(), StatusCode::OK);
        let tag = answer.headers()[header::ETAG].clone();
        assert_eq!(tag.len(), 34, "{tag:?}");
        for sent in [
            tag.to_str().unwrap().to_owned(),
            format!("\"x\", W/{}", tag.to_str().unwrap()),
            "*".to_owned(),
        ] {
            let mut request = HeaderMap::new();
            request.insert(header::IF_NONE_MATCH, sent.parse().unwrap());
            let answer = super::tagged(&request, "{}".into());
            assert_eq!(answer.status(), StatusCode::NOT_MODIFIED, "{sent}");
            assert_eq!(answer.headers()[header::ETAG], tag);
        }
        let mut request = HeaderMap::new();
        request.insert(header::IF_NONE_MATCH, tag);
        assert_eq!(
            super::tagged(&request, "[]".into()).status(),
            StatusCode::OK
        );
    }
    #[test]
    fn the_cache_header_spells_the_max_age() {
        assert_eq!(
            super::PUBLIC_CACHE_CONTROL,
            format!("public, max-age={}", super::PUBLIC_MAX_AGE_SECONDS)
        );
    }
}
