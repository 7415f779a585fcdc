//! The extractors of the API's handlers: the signed-in fan, typed path parameters, the
//! `Idempotency-Key`, JSON bodies and raw bodies. Each refuses with the API's one error
//! ([`ApiError`]), so every rejection is the JSON error shape with its code; a handler's
//! checks run in the order of its parameters (path, token, key, body).

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{FromRequest, FromRequestParts, OptionalFromRequest, Request};
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

use crate::auth::{Identity, TokenVerifier};
use crate::http::error::{ApiError, ErrorCode};
use crate::http::request::{
    bearer_token, idempotency_key, require_json_content_type, single_query_param, within_limit,
};
use crate::ids::PackId;
use crate::metrics;

/// A handler state that verifies session tokens.
pub trait Verifies: Send + Sync + 'static {
    fn verifier(&self) -> &TokenVerifier;
}

/// A handler state that reads bodies up to a limit (`MAX_BODY_BYTES`).
pub trait LimitsBodies: Send + Sync + 'static {
    fn max_body_bytes(&self) -> usize;
}

/// The signed-in fan: the `Authorization: Bearer` token, verified (401 with `WWW-Authenticate`
/// otherwise, 503 when no signing key can be had).
#[derive(Debug)]
pub struct Fan(pub Identity);

impl<St: Verifies> FromRequestParts<Arc<St>> for Fan {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &Arc<St>) -> Result<Self, ApiError> {
        let token = bearer_token(&parts.headers)?;
        Ok(Self(state.verifier().verify(token).await?))
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

/// [`Path`] whose pack is the invocation's `packId` metrics property ([`crate::metrics`]), set
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
        let body = read_body(request.into_body()).await?;
        T::from_json(within_limit(&body, state.max_body_bytes())?).map(Self)
    }
}

impl<T: FromJsonBody, St: LimitsBodies> OptionalFromRequest<Arc<St>> for Json<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &Arc<St>) -> Result<Option<Self>, ApiError> {
        let (parts, body) = request.into_parts();
        let body = read_body(body).await?;
        // API Gateway sends no body for an empty one.
        if body.is_empty() {
            return Ok(None);
        }
        require_json_content_type(&parts.headers)?;
        T::from_json(within_limit(&body, state.max_body_bytes())?).map(|value| Some(Self(value)))
    }
}

/// The body's bytes as sent, at most the state's `max_body_bytes` (413).
#[derive(Debug)]
pub struct RawBody(pub Bytes);

impl<St: LimitsBodies> FromRequest<Arc<St>> for RawBody {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &Arc<St>) -> Result<Self, ApiError> {
        let body = read_body(request.into_body()).await?;
        within_limit(&body, state.max_body_bytes())?;
        Ok(Self(body))
    }
}

/// The whole body. Lambda hands it over in memory; a server in front that streams it (local-api)
/// bounds its size and time itself, and a refusal of its own (an [`ApiError`] as the body's
/// error, however deep in the chain) is answered as it is. Any other failure to read is a
/// malformed body.
async fn read_body(body: Body) -> Result<Bytes, ApiError> {
    axum::body::to_bytes(body, usize::MAX)
        .await
        .map_err(|error| {
            let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(&error);
            while let Some(error) = cause {
                if let Some(refusal) = error.downcast_ref::<ApiError>() {
                    return refusal.clone();
                }
                cause = error.source();
            }
            ApiError::refused(ErrorCode::InvalidBody, "The request body is malformed.")
        })
}
