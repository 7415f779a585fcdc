//! JSON responses.

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
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

/// How long the edge (CloudFront) and a browser may keep a public answer, and serve it stale
/// while fetching the next: one `Cache-Control` value per kind of public read, chosen in
/// docs/edge.md ("Freshness per route"). What a crowd's polling costs the origin is one request
/// per cache and `max-age`, whatever the crowd's size, so a short age is cheap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Freshness(&'static str);

impl Freshness {
    /// A pack and the packs' list: a `remaining` at most about 4 s older at the edge than at the
    /// origin (a start answers the truth whatever the page shows).
    pub const PACKS: Self = Self("public, max-age=2, stale-while-revalidate=2");
    /// A waiting room's status: its open, close and draw, which a crowd's pages wait on.
    pub const QUEUE: Self = Self("public, max-age=2, stale-while-revalidate=2");
    /// A closed line's entrants and its report: fixed once answered (before, 409, not kept).
    pub const QUEUE_RECORD: Self = Self("public, max-age=60, stale-while-revalidate=600");
    /// The catalogue: leagues and teams, which an operator's tool changes a few times a season.
    pub const CATALOG: Self = Self("public, max-age=60, stale-while-revalidate=600");
    /// A leaderboard: scores move with every opening; a board a few seconds behind is fair.
    pub const LEADERBOARD: Self = Self("public, max-age=10, stale-while-revalidate=30");
    /// A locker room: its fan sees an edit within about 10 s.
    pub const LOCKER_ROOM: Self = Self("public, max-age=10, stale-while-revalidate=60");
    /// The app's configuration: each instance reads it at most every 5 s too.
    pub const CONFIG: Self = Self("public, max-age=5, stale-while-revalidate=25");

    /// The `Cache-Control` value.
    pub const fn cache_control(self) -> &'static str {
        self.0
    }
}

/// What a route's answer may be kept as, read from its request before the handler takes it:
/// whether it carried a session token, the route's [`Freshness`] when it is a public read, and
/// then the request's `If-None-Match`.
pub struct Caching {
    signed: bool,
    freshness: Option<Freshness>,
    conditions: Vec<HeaderValue>,
}

impl Caching {
    pub fn of(request: &HeaderMap, freshness: Option<Freshness>) -> Self {
        let conditions = match freshness {
            Some(_) => request
                .get_all(header::IF_NONE_MATCH)
                .iter()
                .cloned()
                .collect(),
            None => Vec::new(),
        };
        Self {
            signed: request.contains_key(header::AUTHORIZATION),
            freshness,
            conditions,
        }
    }

    /// `response` as it may be kept: a public read's success with its `ETag` and `Cache-Control`
    /// (or `304 Not Modified` without the body when `If-None-Match` names that tag, or is `*`);
    /// then [`mark_caching`].
    pub async fn mark(self, response: Response) -> Response {
        let mut response = match self.freshness {
            Some(freshness) if response.status() == StatusCode::OK => {
                tagged(response, freshness, &self.conditions).await
            }
            _ => response,
        };
        mark_caching(&mut response, self.signed);
        response
    }
}

/// `response` with its `ETag`, the first 128 bits of its body's SHA-256 (the same body, the same
/// tag, on every instance, with nothing stored), and `freshness`; 304 when a `conditions` value
/// names the tag.
async fn tagged(response: Response, freshness: Freshness, conditions: &[HeaderValue]) -> Response {
    let (mut parts, body) = response.into_parts();
    // A handler's body is already whole in memory: this takes it, it copies nothing.
    let body = match axum::body::to_bytes(body, usize::MAX).await {
        Ok(body) => body,
        Err(error) => {
            return crate::http::error::ApiError::Internal {
                detail: format!("a public answer's body: {error}"),
            }
            .into_response();
        }
    };
    let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, &body);
    let tag = format!("\"{}\"", hex::encode(&digest.as_ref()[..16]));
    let matched = conditions
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(str::trim)
        .any(|candidate| candidate == "*" || candidate.trim_start_matches("W/") == tag);
    let headers = &mut parts.headers;
    headers.insert(
        header::ETAG,
        HeaderValue::from_str(&tag).expect("hex in quotes is a header value"),
    );
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(freshness.cache_control()),
    );
    if !matched {
        return Response::from_parts(parts, Body::from(body));
    }
    parts.status = StatusCode::NOT_MODIFIED;
    headers.remove(header::CONTENT_TYPE);
    headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::empty())
}

/// What the edge may keep of `response`, set on every answer of a route: an answer no handler
/// marked is kept by no cache (`no-store`: errors, writes, a fan's own reads), and an answer to
/// a request that carried a session token is `private` (the edge passes such requests to the
/// origin, and keeps none of their answers; docs/edge.md).
fn mark_caching(response: &mut Response, signed: bool) {
    let headers = response.headers_mut();
    let marked = match headers.get(header::CACHE_CONTROL) {
        None => Some(HeaderValue::from_static("no-store")),
        Some(value) if signed => value
            .to_str()
            .ok()
            .and_then(|value| value.strip_prefix("public"))
            .and_then(|rest| HeaderValue::try_from(format!("private{rest}")).ok()),
        Some(_) => None,
    };
    if let Some(value) = marked {
        headers.insert(header::CACHE_CONTROL, value);
    }
}

/// `Idempotent-Replayed: true` on `response`: the answer repeats an earlier one.
pub fn mark_replayed(response: &mut Response) {
    response
        .headers_mut()
        .insert("idempotent-replayed", HeaderValue::from_static("true"));
}

#[cfg(test)]
mod tests {
    use axum::http::{HeaderMap, StatusCode, header};

    /// The answer of a public read of `body` to a request with `headers`.
    async fn answered(headers: &HeaderMap, body: &str) -> axum::response::Response {
        let caching = super::Caching::of(headers, Some(super::Freshness::PACKS));
        caching
            .mark(super::json_text_response(StatusCode::OK, body.into()))
            .await
    }

    #[tokio::test]
    async fn a_tag_sent_back_is_not_modified_and_another_is_the_answer() {
        let answer = answered(&HeaderMap::new(), "{}").await;
        assert_eq!(answer.status(), StatusCode::OK);
        assert_eq!(
            answer.headers()[header::CACHE_CONTROL],
            super::Freshness::PACKS.cache_control()
        );
        let tag = answer.headers()[header::ETAG].clone();
        assert_eq!(tag.len(), 34, "{tag:?}");
        for sent in [
            tag.to_str().unwrap().to_owned(),
            format!("\"x\", W/{}", tag.to_str().unwrap()),
            "*".to_owned(),
        ] {
            let mut request = HeaderMap::new();
            request.insert(header::IF_NONE_MATCH, sent.parse().unwrap());
            let answer = answered(&request, "{}").await;
            assert_eq!(answer.status(), StatusCode::NOT_MODIFIED, "{sent}");
            assert_eq!(answer.headers()[header::ETAG], tag);
            assert!(!answer.headers().contains_key(header::CONTENT_TYPE));
        }
        let mut request = HeaderMap::new();
        request.insert(header::IF_NONE_MATCH, tag);
        assert_eq!(answered(&request, "[]").await.status(), StatusCode::OK);
    }

    #[test]
    fn an_unmarked_answer_is_not_stored_and_a_signed_one_is_private() {
        use axum::http::HeaderValue;
        let cached = |value: Option<&'static str>, signed| {
            let mut response = axum::response::Response::new(axum::body::Body::empty());
            if let Some(value) = value {
                response
                    .headers_mut()
                    .insert(header::CACHE_CONTROL, HeaderValue::from_static(value));
            }
            super::mark_caching(&mut response, signed);
            response.headers()[header::CACHE_CONTROL].clone()
        };
        let packs = super::Freshness::PACKS.cache_control();
        assert_eq!(cached(None, false), "no-store");
        assert_eq!(cached(None, true), "no-store");
        assert_eq!(cached(Some(packs), false), packs);
        assert_eq!(
            cached(Some(packs), true),
            "private, max-age=2, stale-while-revalidate=2"
        );
        assert_eq!(cached(Some("no-store"), true), "no-store");
    }
}
