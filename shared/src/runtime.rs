//! What every Lambda function's `main` does: logging, configuration that fails fast, and the
//! Lambda runtime loop around a handler.

use std::convert::Infallible;
use std::future::Future;

use lambda_http::{Body, Request, Response, service_fn};

use crate::config::ConfigError;

/// The configured value, or a clear message and exit code 1: Lambda reports the failed init.
pub fn require<T>(result: Result<T, ConfigError>) -> T {
    result.unwrap_or_else(|error| {
        tracing::error!(error = %error, "configuration error");
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
