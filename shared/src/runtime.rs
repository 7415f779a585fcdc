//! What every Lambda function's `main` does: logging, configuration that fails fast, and the
//! Lambda runtime loop around a handler: [`serve`] for HTTP requests (API Gateway), and
//! [`serve_events`] for plain events (a schedule), both logging in the Lambda JSON format with
//! the invocation's request id.

use std::convert::Infallible;
use std::future::Future;

use lambda_http::{Body, Request, Response, service_fn};
use lambda_runtime::LambdaEvent;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tracing::Instrument;

use crate::config::ConfigError;

/// The configured value, or a clear message and exit code 1: Lambda reports the failed init.
/// Written once, to standard error, which Lambda keeps with the init failure.
pub fn require<T>(result: Result<T, ConfigError>) -> T {
    result.unwrap_or_else(|error| {
        eprintln!("configuration error: {error}");
        std::process::exit(1)
    })
}

/// Serves `handler` over `state` (built once, kept for the life of the process) until Lambda
/// stops the process.
pub async fn serve<S, F, Fut>(state: S, handler: F) -> Result<(), lambda_http::Error>
where
    S: Send + Sync + 'static,
    F: Fn(&'static S, Request) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Response<Body>> + Send,
{
    let state: &'static S = Box::leak(Box::new(state));
    let handler = &handler;
    lambda_http::run(service_fn(move |request| async move {
        Ok::<_, Infallible>(handler(state, request).await)
    }))
    .await
}

/// Serves plain events of type `E` (a schedule's, for example) with `handler` over `state`,
/// each in a span carrying Lambda's request id. A handler's error is reported to Lambda as the
/// invocation's failure (and logged).
pub async fn serve_events<S, E, R, F, Fut>(
    state: S,
    handler: F,
) -> Result<(), lambda_runtime::Error>
where
    S: Send + Sync + 'static,
    E: DeserializeOwned + Send + 'static,
    R: Serialize + Send + 'static,
    F: Fn(&'static S, E) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R, lambda_runtime::Error>> + Send,
{
    let state: &'static S = Box::leak(Box::new(state));
    let handler = &handler;
    lambda_runtime::run(lambda_runtime::service_fn(
        move |event: LambdaEvent<E>| async move {
            let span = tracing::info_span!("event", request_id = %event.context.request_id);
            let result = handler(state, event.payload).instrument(span.clone()).await;
            if let Err(error) = &result {
                span.in_scope(|| tracing::error!(error = %error, "event failed"));
            }
            result
        },
    ))
    .await
}
