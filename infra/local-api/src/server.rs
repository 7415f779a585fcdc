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
use hyper_util::rt::{TokioIo, TokioTimer};
use lambda_http::http::{Method, StatusCode};
use serde_json::Value;
use shared::handlers::complete_purchase::complete_purchase;
use shared::handlers::get_pack::{GetPackState, get_pack};
use shared::handlers::get_purchase::get_purchase;
use shared::handlers::list_packs::{ListPacksState, list_packs};
use shared::handlers::me::MeState;
use shared::handlers::my_cash::me_cash;
use shared::handlers::my_purchases::me_purchases;
use shared::handlers::open_pack::open_pack;
use shared::handlers::purchase_json::PurchaseState;
use shared::handlers::release_holds::{SweepState, release_holds};
use shared::handlers::start_purchase::start_purchase;
use shared::handlers::stripe_webhook::stripe_webhook;
use shared::handlers::top_ups::top_ups;
use shared::handlers::web3_link::{LinkState, web3_link};
use shared::http::LocalRequestId;
use shared::http::error::{ApiError, ErrorCode};
use shared::http::request::bearer_token_in;
use shared::http::response::json_response;
use shared::http::routes::{
    COMPLETE_PURCHASE, CREATE_TOP_UP, GET_PACK, GET_PURCHASE, MY_CASH, MY_PURCHASES, OPEN_PACK,
    START_PURCHASE, STRIPE_WEBHOOK, WEB3_LINK, default_function, resolve,
};
use shared::store::Store;

/// API Gateway's own cap on a request body; the handlers apply the API's smaller limit.
const GATEWAY_MAX_BODY: usize = 10 * 1024 * 1024;
/// The most of an oversized body read before hanging up.
const MAX_DRAINED_BODY: usize = 4 * GATEWAY_MAX_BODY;
/// The largest request line and headers read (API Gateway's HTTP API allows about 10 KiB).
const MAX_HEAD_BYTES: usize = 16 * 1024;

/// What one client may hold of the server: connections stalled in their headers or bodies are
/// closed, and past the cap new ones are refused at once, so that a few clients cannot hold
/// every connection or the process's memory (API Gateway has its own limits of this kind).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// A request's line and headers must arrive within this.
    pub header_timeout: std::time::Duration,
    /// A request's whole body must arrive within this.
    pub body_timeout: std::time::Duration,
    /// Connections open at once.
    pub max_connections: usize,
}

impl Limits {
    /// The defaults, each overridable by `LOCAL_API_HEADER_TIMEOUT_MS`,
    /// `LOCAL_API_BODY_TIMEOUT_MS` and `LOCAL_API_MAX_CONNECTIONS` (the tests lower them).
    pub fn from_env() -> Result<Self, String> {
        let read = |name: &str| -> Result<Option<u64>, String> {
            std::env::var(name)
                .ok()
                .map(|v| {
                    v.parse()
                        .map_err(|_| format!("{name}: not a whole number: {v}"))
                })
                .transpose()
        };
        let defaults = Self::default();
        let millis = std::time::Duration::from_millis;
        Ok(Self {
            header_timeout: read("LOCAL_API_HEADER_TIMEOUT_MS")?
                .map_or(defaults.header_timeout, millis),
            body_timeout: read("LOCAL_API_BODY_TIMEOUT_MS")?.map_or(defaults.body_timeout, millis),
            max_connections: read("LOCAL_API_MAX_CONNECTIONS")?
                .map_or(Ok(defaults.max_connections), usize::try_from)
                .map_err(|e| e.to_string())?,
        })
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            header_timeout: std::time::Duration::from_secs(10),
            body_timeout: std::time::Duration::from_secs(30),
            max_connections: 256,
        }
    }
}

pub struct App<S> {
    pub list: ListPacksState<S>,
    pub get_pack: GetPackState<S>,
    pub link: LinkState<S>,
    /// The state of the purchase handlers (one process: one state, one JWKS cache).
    pub purchases: PurchaseState<S>,
    /// The state of the fan's own views (me-purchases, me-cash).
    pub me: MeState<S>,
    /// The local identity provider's keys, served at `/.well-known/jwks.json`.
    pub jwks: Value,
    pub openapi: Value,
    pub limits: Limits,
    /// The top-up handlers, their Stripe on this server, and its Checkout pages (`/local/...`).
    pub top_ups: crate::checkout::LocalTopUps<S>,
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
    let connections = Arc::new(tokio::sync::Semaphore::new(app.limits.max_connections));
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
        // Past the cap the connection is closed at once (dropped), never queued.
        let Ok(permit) = connections.clone().try_acquire_owned() else {
            tracing::warn!(peer = %peer, "too many connections; one refused");
            continue;
        };
        let app = app.clone();
        tokio::spawn(async move {
            let _permit = permit;
            let header_timeout = app.limits.header_timeout;
            let service = service_fn(move |request| {
                let app = app.clone();
                async move { Ok::<_, Infallible>(route(&app, request).await) }
            });
            if let Err(error) = hyper::server::conn::http1::Builder::new()
                .max_buf_size(MAX_HEAD_BYTES)
                .timer(TokioTimer::new())
                .header_read_timeout(header_timeout)
                .serve_connection(TokioIo::new(JsonErrors::new(stream)), service)
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
    if parts.uri.path().starts_with("/local/") {
        return app.top_ups.checkout.serve(&parts, body).await;
    }
    let mut parts = parts;
    join_repeated_headers(&mut parts.headers);
    // API Gateway matches a route on the path as sent: `/api/packs/p/` is no route of
    // `/api/packs/{packId}`, and goes to the `$default` route (the handlers, which trim it, see
    // it is not theirs: 404).
    let function = resolve(&parts.method, parts.uri.path())
        .map_or(default_function(), |(route, _)| route.function);
    // A body is read only for a route that takes one, from a caller whose token holds: the
    // handler answers the rest (404, 405, 401) without it, so nobody can make the server hold a
    // body it will refuse.
    // Stripe's webhook takes a body and no token: its signature is checked on the body.
    let wants_body = function == STRIPE_WEBHOOK.function
        || function != default_function()
            && function != GET_PACK.function
            && match bearer_token_in(&parts.headers) {
                Ok(token) => app.purchases.verifier.verify(token).await.is_ok(),
                Err(_) => false,
            };
    let body = if wants_body {
        match tokio::time::timeout(app.limits.body_timeout, read_body(body)).await {
            Ok(Body::Read(bytes)) if bytes.is_empty() => lambda_http::Body::Empty,
            Ok(Body::Read(bytes)) => lambda_http::Body::Binary(bytes.to_vec()),
            Ok(Body::TooLarge) => {
                return to_hyper(
                    ApiError::PayloadTooLarge {
                        limit: GATEWAY_MAX_BODY,
                    }
                    .into_response(),
                );
            }
            Ok(Body::Malformed) => {
                return to_hyper(
                    ApiError::refused(ErrorCode::InvalidBody, "The request body is malformed.")
                        .into_response(),
                );
            }
            Err(_) => {
                return to_hyper(
                    ApiError::refused(
                        ErrorCode::InvalidBody,
                        "The request body did not arrive in time.",
                    )
                    .into_response(),
                );
            }
        }
    } else {
        lambda_http::Body::Empty
    };
    let mut request = lambda_http::Request::from_parts(parts, body);
    // A request id for the logs, as Lambda would give.
    let id = format!("local-{}", NEXT_REQUEST.fetch_add(1, Ordering::Relaxed));
    request.extensions_mut().insert(LocalRequestId(id));
    let response = match function {
        name if name == GET_PACK.function => get_pack(&app.get_pack, request).await,
        name if name == WEB3_LINK.function => web3_link(&app.link, request).await,
        name if name == START_PURCHASE.function => start_purchase(&app.purchases, request).await,
        name if name == GET_PURCHASE.function => get_purchase(&app.purchases, request).await,
        name if name == COMPLETE_PURCHASE.function => {
            complete_purchase(&app.purchases, request).await
        }
        name if name == OPEN_PACK.function => open_pack(&app.purchases, request).await,
        name if name == MY_PURCHASES.function => me_purchases(&app.me, request).await,
        name if name == MY_CASH.function => me_cash(&app.me, request).await,
        name if name == CREATE_TOP_UP.function => top_ups(&app.top_ups.top_ups, request).await,
        name if name == STRIPE_WEBHOOK.function => {
            stripe_webhook(&app.top_ups.webhook, request).await
        }
        // list-packs, which is also the `$default` route.
        _ => list_packs(&app.list, request).await,
    };
    to_hyper(response)
}

/// A request body as read.
enum Body {
    Read(Bytes),
    /// Over [`GATEWAY_MAX_BODY`].
    TooLarge,
    /// Cut short, or a chunked encoding that does not parse.
    Malformed,
}

/// API Gateway joins a header sent more than once into one value, with commas: so does this.
fn join_repeated_headers(headers: &mut hyper::HeaderMap) {
    let names: Vec<_> = headers.keys().cloned().collect();
    for name in names {
        let values: Vec<&[u8]> = headers
            .get_all(&name)
            .iter()
            .map(|v| v.as_bytes())
            .collect();
        if values.len() < 2 {
            continue;
        }
        let joined = values.join(&b","[..]);
        if let Ok(value) = hyper::header::HeaderValue::from_bytes(&joined) {
            headers.insert(name, value);
        }
    }
}

/// The body. An oversized body is still read (and dropped), up to [`MAX_DRAINED_BODY`], so that
/// the client, still sending, gets the 413 instead of a connection reset.
async fn read_body(mut body: Incoming) -> Body {
    let mut kept = Vec::new();
    let mut seen = 0usize;
    while let Some(frame) = body.frame().await {
        // A body cut short is no body to hand on.
        let Ok(frame) = frame else {
            return Body::Malformed;
        };
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
    if seen <= GATEWAY_MAX_BODY {
        Body::Read(Bytes::from(kept))
    } else {
        Body::TooLarge
    }
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

/// A connection whose answers hyper writes itself, to requests it cannot parse (two
/// `Content-Length`s, headers over the limit, a raw `"` in the target, a folded header line), go
/// out as the API's JSON error: hyper writes them with an empty body and no `Content-Type`, where
/// every answer of the API is JSON, so such an answer is recognised by its head and replaced
/// whole (hyper closes the connection after it). Everything else passes through untouched.
///
/// Why not read each head first with httparse and answer before hyper sees it: that covers only
/// the first request of a kept-alive connection (hyper frames the ones after it), and httparse
/// alone accepts what hyper refuses (two `Content-Length`s is hyper's rule), so hyper's checks
/// would be copied and drift. Here hyper stays the one parser and only its answer is replaced.
struct JsonErrors<S> {
    inner: S,
    /// A replacement being written, and how much of it is out.
    pending: Option<(Vec<u8>, usize)>,
}

impl<S> JsonErrors<S> {
    fn new(inner: S) -> Self {
        Self {
            inner,
            pending: None,
        }
    }
}

/// The API's JSON answer in place of `head`, when `head` is one of hyper's own error answers.
fn json_in_place_of(head: &[u8]) -> Option<Vec<u8>> {
    let end = head.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&head[..end]).ok()?;
    let status = head
        .strip_prefix("HTTP/1.1 ")?
        .get(..3)?
        .parse::<u16>()
        .ok()?;
    if !(400..500).contains(&status) || head.to_ascii_lowercase().contains("content-type:") {
        return None;
    }
    let error = if status == 431 {
        ApiError::refused(
            ErrorCode::HeadersTooLarge,
            "The request line and headers are too large.",
        )
    } else {
        ApiError::refused(
            ErrorCode::MalformedRequest,
            "The request is not well-formed HTTP/1.1.",
        )
    };
    let response = error.into_response();
    let body = match response.body() {
        lambda_http::Body::Text(text) => text.as_bytes().to_vec(),
        _ => Vec::new(),
    };
    let mut answer = format!(
        "HTTP/1.1 {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        response.status(),
        body.len()
    )
    .into_bytes();
    answer.extend(body);
    Some(answer)
}

impl<S: tokio::io::AsyncWrite + Unpin> JsonErrors<S> {
    /// Writes what is left of a replacement; ready when none is left.
    fn drain(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<std::io::Result<()>> {
        while let Some((bytes, written)) = self.pending.as_mut() {
            if *written == bytes.len() {
                self.pending = None;
                break;
            }
            let n = std::task::ready!(
                std::pin::Pin::new(&mut self.inner).poll_write(cx, &bytes[*written..])
            )?;
            *written += n;
        }
        std::task::Poll::Ready(Ok(()))
    }
}

impl<S: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for JsonErrors<S> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

// Not vectored (the default `is_write_vectored`): hyper then writes each head as one buffer, the
// piece `json_in_place_of` reads.
impl<S: tokio::io::AsyncWrite + Unpin> tokio::io::AsyncWrite for JsonErrors<S> {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::task::ready!(self.drain(cx))?;
        if let Some(answer) = json_in_place_of(buf) {
            self.pending = Some((answer, 0));
            // hyper's bytes count as written: the replacement goes out in their place.
            let _ = self.drain(cx)?;
            return std::task::Poll::Ready(Ok(buf.len()));
        }
        std::pin::Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::ready!(self.drain(cx))?;
        std::pin::Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::ready!(self.drain(cx))?;
        std::pin::Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
