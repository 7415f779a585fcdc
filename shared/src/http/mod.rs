//! The HTTP layer: routes, request parsing, JSON responses and the one error type, and
//! [`respond`], which turns a handler's outcome into a response logged with its request id.

pub mod error;
pub mod request;
pub mod response;
pub mod routes;

use lambda_http::{Body, Request, RequestExt, Response};
use tracing::Instrument;

use crate::http::error::ApiError;

/// A request id set by whatever serves the handlers outside Lambda (the local API).
#[derive(Debug, Clone)]
pub struct LocalRequestId(pub String);

/// The id to find a request by in the logs: API Gateway's request id, else Lambda's, else the
/// local server's.
pub fn request_id(request: &Request) -> String {
    let gateway = request
        .request_context_ref()
        .and_then(|context| match context {
            lambda_http::request::RequestContext::ApiGatewayV2(context) => {
                context.request_id.clone()
            }
            #[allow(unreachable_patterns)] // other event kinds are compiled out by features
            _ => None,
        });
    gateway
        .or_else(|| {
            request
                .lambda_context_ref()
                .map(|context| context.request_id.clone())
        })
        .or_else(|| {
            request
                .extensions()
                .get::<LocalRequestId>()
                .map(|id| id.0.clone())
        })
        .unwrap_or_else(|| "-".into())
}

/// Runs `work` in a span carrying the request id and renders its outcome.
pub async fn respond<F>(request: &Request, work: F) -> Response<Body>
where
    F: Future<Output = Result<Response<Body>, ApiError>>,
{
    let span = tracing::info_span!("request", request_id = %request_id(request));
    async {
        match work.await {
            Ok(response) => response,
            Err(error) => {
                if error.is_server_fault() {
                    tracing::error!(status = error.status().as_u16(), code = %error.code(), detail = %error, "request failed");
                } else {
                    tracing::info!(status = error.status().as_u16(), code = %error.code(), detail = %error, "request refused");
                }
                error.into_response()
            }
        }
    }
    .instrument(span)
    .await
}
