//! The HTTP layer: routes, request parsing, JSON responses and the one error type, and
//! [`respond`], which turns a handler's outcome into a response logged with its request id.

pub mod error;
pub mod request;
pub mod response;
pub mod routes;

use std::time::{Duration, SystemTime};

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

/// How long before the function's deadline a request still unanswered is given up with a 503.
pub const DEADLINE_MARGIN: Duration = Duration::from_secs(1);

/// The time `request` may take: until [`DEADLINE_MARGIN`] before the Lambda invocation's
/// deadline. Unbounded outside Lambda (the local API), and when the deadline is not in the future:
/// Lambda never hands over an event past its deadline, but `cargo lambda watch` sends a fixed
/// `600000` (in 1970).
fn budget(request: &Request) -> Option<Duration> {
    let deadline = request.lambda_context_ref()?.deadline();
    let left = deadline.duration_since(SystemTime::now()).ok()?;
    Some(left.saturating_sub(DEADLINE_MARGIN))
}

/// Runs `work` in a span carrying the request id and renders its outcome. A request that would
/// outlive its invocation (a DynamoDB slow on each of many calls: every call is bounded, a start
/// before a sold-out answer makes up to about 30) is answered 503 before the deadline, as JSON,
/// where Lambda's timeout would leave API Gateway to answer its own 500. Every write is atomic
/// and idempotent by key, so the retry the 503 asks for is safe.
pub async fn respond<F>(request: &Request, work: F) -> Response<Body>
where
    F: Future<Output = Result<Response<Body>, ApiError>>,
{
    let span = tracing::info_span!("request", request_id = %request_id(request));
    let budget = budget(request);
    async {
        let outcome = match budget {
            Some(budget) => tokio::time::timeout(budget, work)
                .await
                .unwrap_or_else(|_| {
                    Err(ApiError::Unavailable {
                        what: "dependencies",
                        detail: format!(
                            "too slow: no answer {DEADLINE_MARGIN:?} before the invocation's deadline"
                        ),
                    })
                }),
            None => work.await,
        };
        match outcome {
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
