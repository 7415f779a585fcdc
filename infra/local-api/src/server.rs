//! The local HTTP server: routes requests exactly as the API Gateway of `template.yaml` does
//! (`POST /api/web3-link` to the link handler, everything else to the list handler, which is
//! the `$default` route), plus the local identity provider's JWKS and the OpenAPI document.
//! No handler logic lives here: requests and responses are only converted.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use lambda_http::http::{Method, StatusCode};
use serde_json::Value;
use shared::error::ApiError;
use shared::handlers::LocalRequestId;
use shared::handlers::list_packs::{ListPacksState, list_packs};
use shared::handlers::web3_link::{LinkState, web3_link};
use shared::request::WEB3_LINK;
use shared::response::json_response;
use shared::store::{ListActivePacks, UpsertLink};

/// API Gateway's own cap on a request body; the handlers apply the API's smaller limit.
const GATEWAY_MAX_BODY: usize = 10 * 1024 * 1024;
/// The largest request line and headers read (API Gateway's HTTP API allows about 10 KiB).
const MAX_HEAD_BYTES: usize = 16 * 1024;

pub struct App<S> {
    pub list: ListPacksState<S>,
    pub link: LinkState<S>,
    /// The local identity provider's keys, served at `/.well-known/jwks.json`.
    pub jwks: Value,
    pub openapi: Value,
}

type HttpResponse = hyper::Response<Full<Bytes>>;

static NEXT_REQUEST: AtomicU64 = AtomicU64::new(1);

/// Serves `app` on `listener` until `shutdown` completes.
pub async fn serve<S>(
    app: App<S>,
    listener: tokio::net::TcpListener,
    shutdown: impl Future<Output = ()>,
) where
    S: ListActivePacks + UpsertLink + 'static,
{
    let app = Arc::new(app);
    tokio::pin!(shutdown);
    loop {
        let (stream, peer): (_, SocketAddr) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    tracing::warn!(error = %error, "accept failed");
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let app = app.clone();
        tokio::spawn(async move {
            let service = service_fn(move |request| {
                let app = app.clone();
                async move { Ok::<_, Infallible>(route(&app, request).await) }
            });
            if let Err(error) = hyper::server::conn::http1::Builder::new()
                .max_buf_size(MAX_HEAD_BYTES)
                .serve_connection(TokioIo::new(stream), service)
                .await
            {
                tracing::debug!(error = %error, peer = %peer, "connection ended with an error");
            }
        });
    }
}

async fn route<S: ListActivePacks + UpsertLink>(
    app: &App<S>,
    request: hyper::Request<Incoming>,
) -> HttpResponse {
    let (parts, body) = request.into_parts();
    match (&parts.method, parts.uri.path()) {
        (&Method::GET, "/openapi.json") => {
            return to_hyper(json_response(StatusCode::OK, &app.openapi));
        }
        (&Method::GET, "/.well-known/jwks.json") => {
            return to_hyper(json_response(StatusCode::OK, &app.jwks));
        }
        _ => {}
    }
    let bytes = match Limited::new(body, GATEWAY_MAX_BODY).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(_) => {
            return to_hyper(
                ApiError::PayloadTooLarge {
                    limit: GATEWAY_MAX_BODY,
                }
                .into_response(),
            );
        }
    };
    let body = if bytes.is_empty() {
        lambda_http::Body::Empty
    } else {
        lambda_http::Body::Binary(bytes.to_vec())
    };
    let mut request = lambda_http::Request::from_parts(parts, body);
    // A request id for the logs, as Lambda would give.
    let id = format!("local-{}", NEXT_REQUEST.fetch_add(1, Ordering::Relaxed));
    request.extensions_mut().insert(LocalRequestId(id));
    let response = if shared::request::request_path(&request) == WEB3_LINK.path {
        web3_link(&app.link, request).await
    } else {
        list_packs(&app.list, request).await
    };
    to_hyper(response)
}

fn to_hyper(response: lambda_http::Response<lambda_http::Body>) -> HttpResponse {
    let (parts, body) = response.into_parts();
    let bytes = match body {
        lambda_http::Body::Text(text) => Bytes::from(text),
        lambda_http::Body::Binary(bytes) => Bytes::from(bytes),
        _ => Bytes::new(),
    };
    hyper::Response::from_parts(parts, Full::new(bytes))
}
