//! The local HTTP server: routes requests exactly as the API Gateway of `template.yaml` does,
//! from the one route table (`shared::http::routes`): each route to its function's handler,
//! everything else to the `$default` route's function (list-packs, which answers the JSON
//! 404/405); plus the local identity provider's JWKS and the OpenAPI document. No handler logic
//! lives here: requests and responses are only converted.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use lambda_http::http::{Method, StatusCode};
use serde_json::Value;
use shared::handlers::complete_purchase::complete_purchase;
use shared::handlers::get_pack::{GetPackState, get_pack};
use shared::handlers::get_purchase::get_purchase;
use shared::handlers::list_packs::{ListPacksState, list_packs};
use shared::handlers::open_pack::open_pack;
use shared::handlers::purchase_json::PurchaseState;
use shared::handlers::release_holds::{SweepState, release_holds};
use shared::handlers::start_purchase::start_purchase;
use shared::handlers::web3_link::{LinkState, web3_link};
use shared::http::LocalRequestId;
use shared::http::error::ApiError;
use shared::http::request::request_path;
use shared::http::response::json_response;
use shared::http::routes::{
    COMPLETE_PURCHASE, GET_PACK, GET_PURCHASE, OPEN_PACK, START_PURCHASE, WEB3_LINK,
    default_function, resolve,
};
use shared::store::Store;

/// API Gateway's own cap on a request body; the handlers apply the API's smaller limit.
const GATEWAY_MAX_BODY: usize = 10 * 1024 * 1024;
/// The most of an oversized body read before hanging up.
const MAX_DRAINED_BODY: usize = 4 * GATEWAY_MAX_BODY;
/// The largest request line and headers read (API Gateway's HTTP API allows about 10 KiB).
const MAX_HEAD_BYTES: usize = 16 * 1024;

pub struct App<S> {
    pub list: ListPacksState<S>,
    pub get_pack: GetPackState<S>,
    pub link: LinkState<S>,
    /// The state of the purchase handlers (one process: one state, one JWKS cache).
    pub purchases: PurchaseState<S>,
    /// The local identity provider's keys, served at `/.well-known/jwks.json`.
    pub jwks: Value,
    pub openapi: Value,
}

type HttpResponse = hyper::Response<Full<Bytes>>;

/// How often the local API releases expired holds, as `release-holds` does every minute.
const SWEEP_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

/// Runs the `release-holds` handler over `store` every [`SWEEP_EVERY`], in the background.
pub fn spawn_sweep<S: Store + 'static>(store: S) {
    let sweep = SweepState {
        store,
        budget: SWEEP_EVERY,
        refresh_again_after: None,
    };
    tokio::spawn(async move {
        let mut every = tokio::time::interval(SWEEP_EVERY);
        loop {
            every.tick().await;
            if let Err(error) = release_holds(&sweep, ()).await {
                tracing::warn!(error = %error, "releasing expired holds failed");
            }
        }
    });
}

static NEXT_REQUEST: AtomicU64 = AtomicU64::new(1);

/// Serves `app` on `listener` until `shutdown` completes.
pub async fn serve<S>(
    app: App<S>,
    listener: tokio::net::TcpListener,
    shutdown: impl Future<Output = ()>,
) where
    S: Store + 'static,
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

async fn route<S: Store>(app: &App<S>, request: hyper::Request<Incoming>) -> HttpResponse {
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
    let Some(bytes) = read_body(body).await else {
        return to_hyper(
            ApiError::PayloadTooLarge {
                limit: GATEWAY_MAX_BODY,
            }
            .into_response(),
        );
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
    let function = resolve(request.method(), request_path(&request))
        .map_or(default_function(), |(route, _)| route.function);
    let response = match function {
        name if name == GET_PACK.function => get_pack(&app.get_pack, request).await,
        name if name == WEB3_LINK.function => web3_link(&app.link, request).await,
        name if name == START_PURCHASE.function => start_purchase(&app.purchases, request).await,
        name if name == GET_PURCHASE.function => get_purchase(&app.purchases, request).await,
        name if name == COMPLETE_PURCHASE.function => {
            complete_purchase(&app.purchases, request).await
        }
        name if name == OPEN_PACK.function => open_pack(&app.purchases, request).await,
        // list-packs, which is also the `$default` route.
        _ => list_packs(&app.list, request).await,
    };
    to_hyper(response)
}

/// The body, or `None` when it is over [`GATEWAY_MAX_BODY`]. An oversized body is still read
/// (and dropped), up to [`MAX_DRAINED_BODY`], so that the client, still sending, gets the 413
/// instead of a connection reset.
async fn read_body(mut body: Incoming) -> Option<Bytes> {
    let mut kept = Vec::new();
    let mut seen = 0usize;
    while let Some(frame) = body.frame().await {
        // A body cut short is no body to hand on.
        let Ok(frame) = frame else { return None };
        let Ok(data) = frame.into_data() else {
            continue;
        };
        seen += data.len();
        if seen > MAX_DRAINED_BODY {
            break;
        }
        if seen <= GATEWAY_MAX_BODY {
            kept.extend_from_slice(&data);
        }
    }
    (seen <= GATEWAY_MAX_BODY).then(|| Bytes::from(kept))
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
