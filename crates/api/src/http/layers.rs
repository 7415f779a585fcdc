//! What every router runs in, in the functions and in local-api: a span carrying the request id
//! (so that every log line of a request has it), and the deadline budget of a Lambda invocation.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, SystemTime};

use axum::Router;
use axum::http::Request;
use axum::response::{IntoResponse, Response};
use lambda_http::RequestExt;
use tower::Service;
use tracing::Instrument;

use crate::http::app_config::ConfigCache;
use crate::http::error::ApiError;
use crate::http::limit::Limiter;
use crate::http::request::LocalRequest;

/// The id to find a request by in the logs: API Gateway's request id, else Lambda's, else the
/// local server's (`local-<n>`), else `-`. Borrowed and written when displayed: the request's
/// span records it on every request, with no copy.
pub enum RequestId<'a> {
    /// API Gateway's or Lambda's.
    Given(&'a str),
    Local(u64),
    Unknown,
}

impl std::fmt::Display for RequestId<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RequestId::Given(id) => f.write_str(id),
            RequestId::Local(id) => {
                f.write_str("local-")?;
                f.write_str(itoa::Buffer::new().format(*id))
            }
            RequestId::Unknown => f.write_str("-"),
        }
    }
}

/// `request`'s [`RequestId`].
pub fn request_id<B>(request: &axum::http::Request<B>) -> RequestId<'_> {
    let gateway = request
        .request_context_ref()
        .and_then(|context| match context {
            lambda_http::request::RequestContext::ApiGatewayV2(context) => {
                context.request_id.as_deref()
            }
            #[allow(unreachable_patterns)] // other event kinds are compiled out by features
            _ => None,
        });
    gateway
        .or_else(|| {
            request
                .lambda_context_ref()
                .map(|context| context.request_id.as_str())
        })
        .map(RequestId::Given)
        .or_else(|| {
            request
                .extensions()
                .get::<LocalRequest>()
                .map(|local| RequestId::Local(local.id))
        })
        .unwrap_or(RequestId::Unknown)
}

/// How long before the function's deadline a request still unanswered is given up with a 503.
pub const DEADLINE_MARGIN: Duration = Duration::from_secs(1);

/// The time `request` may take: until [`DEADLINE_MARGIN`] before the Lambda invocation's
/// deadline. Unbounded outside Lambda (the local API), and when the deadline is not in the future:
/// Lambda never hands over an event past its deadline, but `cargo lambda watch` sends a fixed
/// `600000` (in 1970).
fn budget<B>(request: &Request<B>) -> Option<Duration> {
    let deadline = request.lambda_context_ref()?.deadline();
    let left = deadline.duration_since(SystemTime::now()).ok()?;
    Some(left.saturating_sub(DEADLINE_MARGIN))
}

/// `router` in the layers of the API: the request's span, inside it the deadline, and the rate
/// limits of `limiter` for its routes ([`crate::http::limit::Limited`]; `None`: not limited).
pub fn api_layers(router: Router, limiter: Option<Arc<Limiter>>) -> ApiLayers {
    ApiLayers {
        router,
        limiter,
        config: None,
    }
}

/// A router in the layers of the API ([`api_layers`]). One service around the whole router,
/// not axum's `from_fn` on each route: that boxes the request's future, clones the route and
/// boxes it again as `Next`, on every request; this boxes the one future of the request.
#[derive(Clone)]
pub struct ApiLayers {
    router: Router,
    limiter: Option<Arc<Limiter>>,
    config: Option<Arc<ConfigCache>>,
}

impl ApiLayers {
    /// The layers with the app configuration's gate on every route ([`crate::http::app_config`])
    /// and the configuration for the handlers that answer it (`GET /api/config`).
    pub fn with_config(mut self, config: Arc<ConfigCache>) -> Self {
        self.config = Some(config);
        self
    }
}

impl<B> Service<Request<B>> for ApiLayers
where
    B: axum::body::HttpBody<Data = axum::body::Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Service::<Request<B>>::poll_ready(&mut self.router, cx)
    }

    /// Runs the request in a span carrying its id, within its deadline: a request that would
    /// outlive its invocation (a DynamoDB slow on each of many calls: every call is bounded, a
    /// start before a sold-out answer makes up to about 30) is answered 503 before the deadline,
    /// as JSON, where Lambda's timeout would leave API Gateway to answer its own 500. Every write
    /// is atomic and idempotent by key, so the retry the 503 asks for is safe.
    fn call(&mut self, mut request: Request<B>) -> Self::Future {
        if let Some(limiter) = &self.limiter {
            request.extensions_mut().insert(limiter.clone());
        }
        if let Some(config) = &self.config {
            request.extensions_mut().insert(config.clone());
        }
        let span = tracing::info_span!("request", request_id = %request_id(&request));
        let budget = budget(&request);
        let answer = span.in_scope(|| self.router.call(request));
        Box::pin(
            async move {
                let Some(budget) = budget else {
                    return answer.await;
                };
                Ok(tokio::time::timeout(budget, answer)
                    .await
                    .unwrap_or_else(|_| Ok(too_slow()))
                    .unwrap_or_else(|never: Infallible| match never {}))
            }
            .instrument(span),
        )
    }
}

/// The 503 of a request still unanswered [`DEADLINE_MARGIN`] before its deadline.
fn too_slow() -> Response {
    ApiError::Unavailable {
        what: "dependencies",
        detail: format!("too slow: no answer {DEADLINE_MARGIN:?} before the invocation's deadline"),
    }
    .into_response()
}
