//! The local HTTP server: the router of every route (each function's, merged, over this
//! process's states), routed exactly as the API Gateway of `template.yaml` routes: on the path
//! as sent, every other request to the `$default` route's function (list-packs, which answers
//! the JSON 404/405); plus the local identity provider's JWKS, the OpenAPI document and the
//! local Checkout pages and the API reference (`/docs`); in front of it all, CORS as API Gateway
//! answers it ([`crate::cors`]). No handler logic lives here.
//!
//! Served with hyper's connection builder rather than `axum::serve`: `axum::serve` sets neither
//! a header read timeout nor a cap on the request head, which this server keeps (a stalled
//! client is cut off; a head over 16 KiB is the API's 431).

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll, ready};

use api::handlers::queue_keeper::{KeeperRun, pass};
use api::handlers::release_holds::{SweepState, release_holds};
use api::http::app_config::ConfigCache;
use api::http::error::{ApiError, ErrorCode};
use api::http::layers::{ApiLayers, api_layers};
use api::http::limit::Limiter;
use api::http::request::{LocalPeer, LocalRequest};
use api::http::response::json_response;
use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{any, get};
use bytes::Bytes;
use clients::beacon::{BeaconClient, BeaconSource};
use hyper::body::{Frame, Incoming, SizeHint};
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use serde_json::Value;
use store::Store;
use store::queue_keeper::QueueKeeper;
use tower::ServiceExt;

/// API Gateway's own cap on a request body; the handlers apply the API's smaller limit.
const GATEWAY_MAX_BODY: usize = 10 * 1024 * 1024;
/// The most of a refused body discarded after the answer, so that its client reads the answer.
const MAX_DISCARDED_BODY: u64 = GATEWAY_MAX_BODY as u64;
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

/// Every function's routes over one store, and what this server adds ([`crate::app`] builds it).
pub struct App {
    /// The routes of every function, merged (`Routes::into_router`).
    pub functions: Router,
    /// The rate limits every limited route is counted in; `None`: not limited.
    pub limiter: Option<Arc<Limiter>>,
    /// The `$default` route's function (list-packs), which API Gateway hands every request that
    /// matches no route.
    pub default: Router,
    /// The local identity provider's keys, served at `/.well-known/jwks.json`.
    pub jwks: Value,
    pub openapi: Value,
    pub limits: Limits,
    /// The local Checkout's pages (`/local/...`).
    pub checkout: Arc<crate::checkout::LocalCheckout>,
    /// The app configuration's copy, as each function keeps one (read every few seconds).
    pub config: Arc<ConfigCache>,
    /// The origins whose browsers may call the API, and what they may send and read.
    pub cors: Arc<crate::cors::Cors>,
}

impl App {
    /// Every route of every function, and the rest as API Gateway routes it.
    pub fn router(&self) -> ApiLayers {
        // API Gateway matches a route on the path as sent (`/api/packs/p/` is no route of
        // `/api/packs/{packId}`) and hands everything else to the `$default` route's function.
        let default = self.default.clone();
        let to_default = {
            let default = default.clone();
            move |request: Request| default.clone().oneshot(request)
        };
        let jwks = self.jwks.clone();
        let openapi = self.openapi.clone();
        let checkout = self.checkout.clone();
        let router = self
            .functions
            .clone()
            .route(
                "/openapi.json",
                get(move || std::future::ready(json_response(StatusCode::OK, &openapi))),
            )
            .merge(crate::reference::router())
            .route(
                "/.well-known/jwks.json",
                get(move || std::future::ready(json_response(StatusCode::OK, &jwks))),
            )
            .route(
                crate::siteverify::PATH,
                axum::routing::post(crate::siteverify::answer),
            )
            .route(
                "/local/{*page}",
                any(move |request: Request| {
                    let checkout = checkout.clone();
                    async move { checkout.serve(request).await }
                }),
            )
            .method_not_allowed_fallback(to_default)
            .fallback_service(default);
        api_layers(router, self.limiter.clone()).with_config(self.config.clone())
    }
}

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

/// Runs one queue keeper pass over `store` every [`SWEEP_EVERY`] (close, draw, admission: what
/// `queue-keeper` does every few seconds of its runs), drawing with the local beacon
/// (`"chain": "local"`, never accepted by a deployed function): scripts/local cannot reach drand.
pub fn spawn_keeper<S: QueueKeeper + 'static>(store: S) {
    let beacon = BeaconClient::new(BeaconSource::Local);
    tokio::spawn(async move {
        let mut every = tokio::time::interval(SWEEP_EVERY);
        loop {
            every.tick().await;
            let mut run = KeeperRun::default();
            let now = domain::timestamp::Timestamp::now();
            if let Err(error) = pass(&store, &beacon, now, &mut run).await {
                tracing::warn!(error = %error, "the queue keeper's pass failed");
            }
        }
    });
}

/// Serves `app` on `listener` until `shutdown` completes.
pub async fn serve(
    app: App,
    listener: tokio::net::TcpListener,
    shutdown: impl Future<Output = ()>,
) {
    let limits = app.limits;
    let router = app.router();
    let cors = app.cors.clone();
    let connections = Arc::new(tokio::sync::Semaphore::new(limits.max_connections));
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
        let (router, cors) = (router.clone(), cors.clone());
        tokio::spawn(async move {
            let _permit = permit;
            // Once per connection: its address's counter key is hashed here, not per request.
            let local_peer = LocalPeer::new(peer.ip());
            let service = service_fn(move |request: hyper::Request<Incoming>| {
                let request = as_api_gateway_hands_it(request, limits.body_timeout, local_peer);
                let (router, cors) = (router.clone(), cors.clone());
                async move { cors.serve(request, router).await }
            });
            let served = hyper::server::conn::http1::Builder::new()
                .max_buf_size(MAX_HEAD_BYTES)
                .timer(TokioTimer::new())
                .header_read_timeout(limits.header_timeout)
                .serve_connection(TokioIo::new(JsonErrors::new(stream)), service)
                .without_shutdown()
                .await;
            match served {
                Ok(parts) => close_lingering(parts.io.into_inner(), limits.body_timeout).await,
                Err(error) => {
                    tracing::debug!(error = %error, peer = %peer, "connection ended with an error");
                }
            }
        });
    }
}

/// Closes a connection hyper is done with as a lingering close does: the answer is out (the
/// write side shut), then whatever the client still sends, the rest of a body refused before it
/// was read (a 401 or a 413 from its `Content-Length`), is read and dropped, up to
/// [`MAX_DISCARDED_BODY`] and for at most `within`. Closing with unread bytes would make the
/// kernel reset the connection, and a client still sending would see the reset, not the answer.
/// Nothing read here is kept: a small buffer is reused.
async fn close_lingering<S>(mut stream: S, within: std::time::Duration)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    if stream.shutdown().await.is_err() {
        return;
    }
    let (mut rest, mut nowhere) = ((&mut stream).take(MAX_DISCARDED_BODY), tokio::io::sink());
    let _ = tokio::time::timeout(within, tokio::io::copy(&mut rest, &mut nowhere)).await;
}

static NEXT_REQUEST: AtomicU64 = AtomicU64::new(1);

/// The request as API Gateway hands it to a function: headers sent more than once joined, its
/// body bounded ([`GatewayBody`]), its source address (`peer`), and a request id for the logs,
/// as Lambda would give.
fn as_api_gateway_hands_it(
    request: hyper::Request<Incoming>,
    body_timeout: std::time::Duration,
    peer: LocalPeer,
) -> Request {
    let (mut parts, body) = request.into_parts();
    join_repeated_headers(&mut parts.headers);
    let id = NEXT_REQUEST.fetch_add(1, Ordering::Relaxed);
    parts.extensions.insert(LocalRequest { id, peer });
    Request::from_parts(parts, Body::new(GatewayBody::new(body, body_timeout)))
}

/// API Gateway joins a header sent more than once into one value, with commas: so does this.
fn join_repeated_headers(headers: &mut HeaderMap) {
    // As many values as names: nothing repeats (almost every request), nothing to copy.
    if headers.len() == headers.keys_len() {
        return;
    }
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

/// A request body as API Gateway takes one: whole within the body timeout (else 400
/// `invalid_body`), at most [`GATEWAY_MAX_BODY`] (else 413), well-formed (a body cut short or a
/// chunked encoding that does not parse is 400 `invalid_body`). Read only when a handler asks
/// for it, after the checks before it (route, token), and by the handler's extractor no further
/// than its own limit: nobody can make the server hold a body it will refuse. What a refused
/// client still sends is dropped by [`close_lingering`].
struct GatewayBody {
    inner: Incoming,
    /// When the body must be in: the timeout from the request's arrival.
    due: tokio::time::Instant,
    /// Its timer, armed when a handler first reads the body: a request whose body nobody reads
    /// (every GET) costs no timer and no allocation.
    deadline: Option<Pin<Box<tokio::time::Sleep>>>,
    seen: usize,
}

impl GatewayBody {
    fn new(inner: Incoming, timeout: std::time::Duration) -> Self {
        Self {
            inner,
            due: tokio::time::Instant::now() + timeout,
            deadline: None,
            seen: 0,
        }
    }
}

impl hyper::body::Body for GatewayBody {
    type Data = Bytes;
    type Error = ApiError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, ApiError>>> {
        let this = &mut *self;
        let due = this.due;
        let deadline = this
            .deadline
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(due)));
        if deadline.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Some(Err(ApiError::refused(
                ErrorCode::InvalidBody,
                "The request body did not arrive in time.",
            ))));
        }
        let frame = match ready!(Pin::new(&mut this.inner).poll_frame(cx)) {
            None => return Poll::Ready(None),
            Some(Err(_)) => {
                return Poll::Ready(Some(Err(ApiError::refused(
                    ErrorCode::InvalidBody,
                    "The request body is malformed.",
                ))));
            }
            Some(Ok(frame)) => frame,
        };
        this.seen += frame.data_ref().map_or(0, Bytes::len);
        if this.seen > GATEWAY_MAX_BODY {
            return Poll::Ready(Some(Err(ApiError::PayloadTooLarge {
                limit: GATEWAY_MAX_BODY,
            })));
        }
        Poll::Ready(Some(Ok(frame)))
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
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
    // Every answer's bytes pass here: only a 4xx head is looked into (hyper's own are 4xx).
    if !head.starts_with(b"HTTP/1.1 4") {
        return None;
    }
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
    let body = error.body();
    let mut answer = format!(
        "HTTP/1.1 {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        error.status(),
        body.len()
    )
    .into_bytes();
    answer.extend(body.into_bytes());
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
