//! The extractors of the API's handlers: the signed-in fan, typed path parameters, the
//! `Idempotency-Key`, JSON bodies and raw bodies. Each refuses with the API's one error
//! ([`ApiError`]), so every rejection is the JSON error shape with its code; a handler's
//! checks run in the order of its parameters (path, token, key, body).

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{FromRequest, FromRequestParts, OptionalFromRequest, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, header};
use bytes::BytesMut;
use http_body_util::BodyExt;
use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::auth::{Identity, TokenVerifier};
use crate::http::error::{ApiError, ErrorCode};
use crate::http::limit::Limiting;
use crate::http::request::{
    bearer_token, idempotency_key, require_json_content_type, single_query_param, within_limit,
};
use domain::ids::{PackId, ProductId, PurchaseId};
use store::metrics;

/// A handler state that verifies session tokens.
pub trait Verifies: Send + Sync + 'static {
    fn verifier(&self) -> &TokenVerifier;
}

/// A handler state that reads bodies up to a limit (`MAX_BODY_BYTES`).
pub trait LimitsBodies: Send + Sync + 'static {
    fn max_body_bytes(&self) -> usize;
}

/// Implements [`Verifies`] (from a `verifier` field) and [`LimitsBodies`] (from a
/// `max_body_bytes` field) for a handler state generic over its store:
/// `handler_state!(ProfileState: verifier, max_body_bytes);`.
macro_rules! handler_state {
    ($state:ident: $($field:ident),+) => { $( $crate::http::extract::handler_state!(@ $state $field); )+ };
    (@ $state:ident verifier) => {
        impl<S: Send + Sync + 'static> $crate::http::extract::Verifies for $state<S> {
            fn verifier(&self) -> &$crate::auth::TokenVerifier {
                &self.verifier
            }
        }
    };
    (@ $state:ident max_body_bytes) => {
        impl<S: Send + Sync + 'static> $crate::http::extract::LimitsBodies for $state<S> {
            fn max_body_bytes(&self) -> usize {
                self.max_body_bytes
            }
        }
    };
}
pub(crate) use handler_state;

/// The signed-in fan: the `Authorization: Bearer` token, verified (401 with `WWW-Authenticate`
/// otherwise, 503 when no signing key can be had); on a rate-limited route, counted on the
/// fan's window (429 `rate_limited` when it is full).
#[derive(Debug)]
pub struct Fan(pub Identity);

impl<St: Verifies> FromRequestParts<Arc<St>> for Fan {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &Arc<St>) -> Result<Self, ApiError> {
        let token = bearer_token(&parts.headers)?;
        let identity = state.verifier().verify(token).await?;
        // A limited route counts the request on the fan once the token is verified
        // (`crate::http::limit`).
        if let Some(limiting) = parts.extensions.get::<Limiting>() {
            limiting.fan(&identity.user_id).await?;
        }
        Ok(Self(identity))
    }
}

/// Typed path parameters (`Path<PackPath>`): a value that is not an id names no resource, so
/// it is the API's 404 `not_found`, as an unknown path is.
#[derive(Debug)]
pub struct Path<T>(pub T);

impl<T, St> FromRequestParts<St> for Path<T>
where
    T: DeserializeOwned + Send,
    St: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &St) -> Result<Self, ApiError> {
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Path(value)| Self(value))
            .map_err(|_| ApiError::not_found())
    }
}

/// Path parameters that name a pack.
pub trait NamesPack {
    fn pack_id(&self) -> &PackId;
}

/// [`Path`] whose pack is the invocation's `packId` metrics property ([`store::metrics`]), set
/// as soon as the path is read: the purchase funnel's lines count by pack, refused requests
/// (a 401 included) too.
#[derive(Debug)]
pub struct PackMetered<T>(pub T);

impl<T, St> FromRequestParts<St> for PackMetered<T>
where
    T: DeserializeOwned + NamesPack + Send,
    St: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &St) -> Result<Self, ApiError> {
        let Path(value) = Path::<T>::from_request_parts(parts, state).await?;
        metrics::property("packId", value.pack_id().as_str());
        Ok(Self(value))
    }
}

/// `/api/packs/{packId}...`
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(rename_all = "camelCase", parameter_in = Path)]
pub struct PackPath {
    /// The pack's `id`. A path segment that is not an id once percent-decoded (1-64 characters
    /// of `A-Z`, `a-z`, `0-9`, `_` and `-`) names no resource: 404 `not_found`.
    #[param(value_type = String, pattern = "^[A-Za-z0-9_-]{1,64}$", example = "nba-rookie-2026")]
    pub pack_id: PackId,
}

impl NamesPack for PackPath {
    fn pack_id(&self) -> &PackId {
        &self.pack_id
    }
}

/// `/api/packs/{packId}/purchases/{purchaseId}...`
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(rename_all = "camelCase", parameter_in = Path)]
pub struct PurchasePath {
    /// The pack's `id`. A path segment that is not an id once percent-decoded (1-64 characters
    /// of `A-Z`, `a-z`, `0-9`, `_` and `-`) names no resource: 404 `not_found`.
    #[param(value_type = String, pattern = "^[A-Za-z0-9_-]{1,64}$", example = "nba-rookie-2026")]
    pub pack_id: PackId,
    /// The purchase's `id` (from the start's `Location` or body). A path segment that is not an
    /// id once percent-decoded names no resource: 404 `not_found`.
    #[param(
        value_type = String,
        pattern = "^[A-Za-z0-9_-]{1,64}$",
        example = "aziCO-GO8fL4JY8pIvr5KQ"
    )]
    pub purchase_id: PurchaseId,
}

impl NamesPack for PurchasePath {
    fn pack_id(&self) -> &PackId {
        &self.pack_id
    }
}

/// A purchase's URL: the path of its GET ([`PurchasePath`]), and the `Location` of a start.
pub const PURCHASE_PATH: &str = "/api/packs/{packId}/purchases/{purchaseId}";

/// The `Idempotency-Key` header: required, 1-255 visible ASCII characters, sent once (400
/// `missing_idempotency_key` / `invalid_idempotency_key`).
#[derive(Debug)]
pub struct IdempotencyKey(pub String);

impl<St: Send + Sync> FromRequestParts<St> for IdempotencyKey {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &St) -> Result<Self, ApiError> {
        idempotency_key(&parts.headers).map(|key| Self(key.to_owned()))
    }
}

/// The query string's parameters, each taken at most once (a repeated one is 400
/// `invalid_query`): what the typed query filters are read from, in their own order.
pub struct QueryParams<'a>(Option<&'a str>);

impl<'a> QueryParams<'a> {
    pub fn of(parts: &'a Parts) -> Self {
        Self(parts.uri.query())
    }

    /// The value of `name`, percent-decoded, when given once.
    pub fn single(&self, name: &str) -> Result<Option<String>, ApiError> {
        single_query_param(self.0, name)
    }
}

/// A JSON object body read into `T`: `Content-Type: application/json` (415), at most the
/// state's `max_body_bytes` (413), then `T`'s own reading (400 `invalid_json`, `invalid_body`
/// or the field's code). As `Option<Json<T>>`, no body at all is `None`, checked first.
#[derive(Debug)]
pub struct Json<T>(pub T);

/// A request body of JSON, read from its bytes (which it may borrow while it checks them).
pub trait FromJsonBody: Sized {
    fn from_json(body: &[u8]) -> Result<Self, ApiError>;
}

impl<T: FromJsonBody, St: LimitsBodies> FromRequest<Arc<St>> for Json<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &Arc<St>) -> Result<Self, ApiError> {
        require_json_content_type(request.headers())?;
        let (parts, body) = request.into_parts();
        let body = read_body(&parts.headers, body, state.max_body_bytes()).await?;
        T::from_json(&body).map(Self)
    }
}

impl<T: FromJsonBody, St: LimitsBodies> OptionalFromRequest<Arc<St>> for Json<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &Arc<St>) -> Result<Option<Self>, ApiError> {
        let (parts, body) = request.into_parts();
        let body = read_body(&parts.headers, body, state.max_body_bytes()).await?;
        // API Gateway sends no body for an empty one.
        if body.is_empty() {
            return Ok(None);
        }
        require_json_content_type(&parts.headers)?;
        T::from_json(&body).map(|value| Some(Self(value)))
    }
}

/// The body's bytes as sent, at most the state's `max_body_bytes` (413).
#[derive(Debug)]
pub struct RawBody(pub Bytes);

impl<St: LimitsBodies> FromRequest<Arc<St>> for RawBody {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &Arc<St>) -> Result<Self, ApiError> {
        let (parts, body) = request.into_parts();
        read_body(&parts.headers, body, state.max_body_bytes())
            .await
            .map(Self)
    }
}

/// The whole body, at most `limit` bytes (else 413 `payload_too_large`). A `Content-Length` over
/// the limit is refused before any of the body is read; a body without one (chunked) is read
/// until it ends or passes the limit, and no more than `limit + 1` of its bytes are ever kept,
/// however much the client sends: a route's limit is what a request may cost the process in
/// memory, not only what its handler accepts.
///
/// Lambda hands the body over in memory; a server in front that streams it (local-api) bounds
/// its time itself, and a refusal of its own (an [`ApiError`] as the body's error, however deep
/// in the chain) is answered as it is. Any other failure to read is a malformed body.
pub async fn read_body(headers: &HeaderMap, body: Body, limit: usize) -> Result<Bytes, ApiError> {
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|length| length > limit as u64) {
        return Err(ApiError::PayloadTooLarge { limit });
    }
    let mut body = body;
    let mut kept = BytesMut::new();
    while kept.len() <= limit {
        let Some(frame) = body.frame().await else {
            break;
        };
        let Ok(data) = frame.map_err(refusal)?.into_data() else {
            continue;
        };
        let room = limit + 1 - kept.len();
        kept.extend_from_slice(&data[..data.len().min(room)]);
    }
    within_limit(&kept, limit)?;
    Ok(kept.freeze())
}

/// What a failure to read the body answers.
fn refusal(error: axum::Error) -> ApiError {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(&error);
    while let Some(error) = cause {
        if let Some(refusal) = error.downcast_ref::<ApiError>() {
            return refusal.clone();
        }
        cause = error.source();
    }
    ApiError::refused(ErrorCode::InvalidBody, "The request body is malformed.")
}

/// The caller's verified token, its session ended or not: what the session, logout and account
/// deletion routes read (a logout of an ended session is done already, not refused; a deleted
/// account's repeat is answered its deletion).
pub struct AnySession(pub Identity, pub Option<domain::sessions::Ended>);

impl<St: Verifies> FromRequestParts<Arc<St>> for AnySession {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &Arc<St>) -> Result<Self, ApiError> {
        let token = bearer_token(&parts.headers)?;
        let (identity, ended) = state.verifier().inspect(token).await?;
        Ok(Self(identity, ended))
    }
}

#[cfg(test)]
mod tests {
    use std::pin::Pin;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::{Context, Poll};

    use axum::http::HeaderValue;
    use hyper::body::Frame;

    use super::*;

    /// A body of `frames` frames of `size` bytes (endless when `None`), counting what is taken.
    struct Counted {
        size: usize,
        frames: Option<usize>,
        taken: Arc<AtomicUsize>,
    }

    impl hyper::body::Body for Counted {
        type Data = Bytes;
        type Error = std::convert::Infallible;

        fn poll_frame(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
            if let Some(left) = self.frames.as_mut() {
                if *left == 0 {
                    return Poll::Ready(None);
                }
                *left -= 1;
            }
            self.taken.fetch_add(self.size, Ordering::Relaxed);
            Poll::Ready(Some(Ok(Frame::data(Bytes::from(vec![b'x'; self.size])))))
        }
    }

    fn counted(size: usize, frames: Option<usize>) -> (Body, Arc<AtomicUsize>) {
        let taken = Arc::new(AtomicUsize::default());
        let body = Body::new(Counted {
            size,
            frames,
            taken: taken.clone(),
        });
        (body, taken)
    }

    fn declaring(length: usize) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::CONTENT_LENGTH, HeaderValue::from(length));
        headers
    }

    #[tokio::test]
    async fn a_declared_length_over_the_limit_is_refused_before_any_byte_is_read() {
        let (body, taken) = counted(1000, None);
        let refused = read_body(&declaring(4501), body, 4500).await;
        assert_eq!(
            refused.unwrap_err(),
            ApiError::PayloadTooLarge { limit: 4500 }
        );
        assert_eq!(taken.load(Ordering::Relaxed), 0);
    }

    #[tokio::test]
    async fn a_body_without_a_length_is_read_no_further_than_past_the_limit() {
        let (body, taken) = counted(1000, None);
        let refused = read_body(&HeaderMap::new(), body, 4500).await;
        assert_eq!(
            refused.unwrap_err(),
            ApiError::PayloadTooLarge { limit: 4500 }
        );
        // Five frames: the fifth is the first past the limit; the endless rest is never asked for.
        assert_eq!(taken.load(Ordering::Relaxed), 5000);
    }

    #[tokio::test]
    async fn a_body_at_the_limit_is_read_whole() {
        let (body, _) = counted(1500, Some(3));
        let read = read_body(&declaring(4500), body, 4500).await.unwrap();
        assert_eq!(read.len(), 4500);
        let (body, _) = counted(1500, Some(3));
        assert_eq!(
            read_body(&HeaderMap::new(), body, 4499).await.unwrap_err(),
            ApiError::PayloadTooLarge { limit: 4499 }
        );
    }
}

/// `/api/products/{productId}`
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(rename_all = "camelCase", parameter_in = Path)]
pub struct ProductPath {
    /// The product's `id`. A path segment that is not an id once percent-decoded is 404
    /// `not_found`.
    #[param(value_type = String, pattern = "^[A-Za-z0-9_-]{1,64}$", example = "frame-gold")]
    pub product_id: ProductId,
}
