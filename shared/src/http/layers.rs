//! What every router runs in, in the functions and in local-api: a span carrying the request id
//! (so that every log line of a request has it), and the deadline budget of a Lambda invocation.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use axum::Router;
use axum::extract::{Request, State};
use axum::middleware::{Next, from_fn_with_state};
use axum::response::{IntoResponse, Response};
use lambda_http::RequestExt;
use tracing::Instrument;

use crate::http::error::ApiError;
use crate::http::limit::Limiter;

/// A request id set by whatever serves the handlers outside Lambda (the local API): its number,
/// written `local-<n>` only when a log line needs it.
#[derive(Debug, Clone, Copy)]
pub struct LocalRequestId(pub u64);

/// The id to find a request by in the logs: API Gateway's request id, else Lambda's, else the
/// local server's.
pub fn request_id<B>(request: &axum::http::Request<B>) -> String {
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
                .map(|id| format!("local-{}", id.0))
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

/// `router` in the layers of the API: the request's span, inside it the deadline, and the rate
/// limits of `limiter` for its routes' [`crate::http::limit::limit`] layers (`None`: not
/// limited). One middleware, not three: each layer of axum boxes the request's future and
/// clones the service behind it, on every request.
pub fn api_layers(router: Router, limiter: Option<Arc<Limiter>>) -> Router {
    router.layer(from_fn_with_state(limiter, in_span_within_deadline))
}

/// Runs the request in a span carrying its id, within its deadline: a request that would outlive
/// its invocation (a DynamoDB slow on each of many calls: every call is bounded, a start before a
/// sold-out answer makes up to about 30) is answered 503 before the deadline, as JSON, where
/// Lambda's timeout would leave API Gateway to answer its own 500. Every write is atomic and
/// idempotent by key, so the retry the 503 asks for is safe.
async fn in_span_within_deadline(
    State(limiter): State<Option<Arc<Limiter>>>,
    mut request: Request,
    next: Next,
) -> Response {
    if let Some(limiter) = limiter {
        request.extensions_mut().insert(limiter);
    }
    let span = tracing::info_span!("request", request_id = %request_id(&request));
    let budget = budget(&request);
    let answer = async move {
        match budget {
            Some(budget) => tokio::time::timeout(budget, next.run(request))
                .await
                .unwrap_or_else(|_| {
                    ApiError::Unavailable {
                        what: "dependencies",
                        detail: format!(
                            "too slow: no answer {DEADLINE_MARGIN:?} before the invocation's \
                             deadline"
                        ),
                    }
                    .into_response()
                }),
            None => next.run(request).await,
        }
    };
    answer.instrument(span).await
}
