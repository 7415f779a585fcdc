//! An HTTP proxy on a free loopback port between a client (the DynamoDB SDK) and a server (moto),
//! injecting the [`Fault`] currently set. Stopped when dropped.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

#[derive(Debug, Clone, PartialEq)]
pub enum Fault {
    /// Forward untouched.
    None,
    /// Answer this status and DynamoDB error type without forwarding.
    Error(u16, &'static str),
    /// Forward, then answer this status and error type instead of the real answer: the server
    /// did the work, the client is told it failed.
    ErrorAfterForwarding(u16, &'static str),
    /// Wait this long, then forward.
    Delay(Duration),
    /// Never answer: the client's timeout ends the exchange.
    Hangup,
    /// Forward, then answer with the body cut short and close the connection: a connection lost
    /// in the middle of an answer.
    Truncate,
    /// Answer a transaction, without forwarding it, as DynamoDB cancels one for a reason other
    /// than its conditions: `TransactionCanceledException` with this code (`TransactionConflict`,
    /// `ThrottlingError`, `ValidationError`, ...) for its first action and `None` for the others.
    Cancelled(&'static str),
}

/// Counts per operation, as [`FaultProxy::counting`] answers them, from `(operation, count)`
/// pairs.
pub fn counts(made: &[(&str, usize)]) -> BTreeMap<String, usize> {
    made.iter()
        .map(|(operation, count)| ((*operation).to_owned(), *count))
        .collect()
}

/// DynamoDB's throttling answer.
pub const THROTTLING: Fault = Fault::Error(400, "ThrottlingException");
/// DynamoDB's provisioned-throughput answer.
pub const THROUGHPUT_EXCEEDED: Fault = Fault::Error(400, "ProvisionedThroughputExceededException");
/// An internal error of DynamoDB.
pub const INTERNAL_ERROR: Fault = Fault::Error(500, "InternalServerError");

struct Shared {
    upstream: String,
    /// The fault, how many more requests get it (`None`: all, until changed), and the one
    /// operation it is for (`None`: every operation).
    fault: Mutex<(Fault, Option<usize>, Option<&'static str>)>,
    requests: AtomicUsize,
    /// How long each forwarded exchange took upstream, in order.
    upstream_times: Mutex<Vec<Duration>>,
    client: Client<HttpConnector, Full<Bytes>>,
    /// Forward one request at a time (see [`FaultProxy::one_at_a_time`]).
    one_at_a_time: AtomicBool,
    turn: tokio::sync::Mutex<()>,
    /// Requests received so far per DynamoDB operation (`x-amz-target`'s last part; other
    /// requests by method and path, e.g. `GET /`).
    operations: Mutex<BTreeMap<String, usize>>,
    /// How long the first answer on each new connection waits, in nanoseconds (see
    /// [`FaultProxy::delay_new_connections`]).
    connection_setup_nanos: AtomicU64,
    /// The exchanges forwarded since [`FaultProxy::record`], in the order they were forwarded
    /// (`None`: not recording).
    recorded: Mutex<Option<Vec<Exchange>>>,
}

/// One request forwarded upstream and its answer, as recorded.
#[derive(Debug, Clone)]
pub struct Exchange {
    /// The DynamoDB operation (`x-amz-target`'s last part), or the method and path.
    pub operation: String,
    pub request: Bytes,
    pub status: u16,
    pub response: Bytes,
}

pub struct FaultProxy {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl FaultProxy {
    /// A proxy to `upstream` (`http://host:port`) on a free port.
    pub async fn start(upstream: &str) -> Self {
        Self::start_on(upstream, 0).await
    }

    /// A proxy to `upstream` on `port` of 127.0.0.1 (0: any free port).
    pub async fn start_on(upstream: &str, port: u16) -> Self {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .expect("bind proxy");
        let addr = listener.local_addr().unwrap();
        let shared = Arc::new(Shared {
            upstream: upstream.trim_end_matches('/').to_owned(),
            fault: Mutex::new((Fault::None, None, None)),
            requests: AtomicUsize::new(0),
            upstream_times: Mutex::new(Vec::new()),
            client: Client::builder(TokioExecutor::new()).build_http(),
            one_at_a_time: AtomicBool::new(false),
            turn: tokio::sync::Mutex::new(()),
            operations: Mutex::new(BTreeMap::new()),
            connection_setup_nanos: AtomicU64::new(0),
            recorded: Mutex::new(None),
        });
        let task_shared = shared.clone();
        let task = spawn_connection_server(listener, move |request, first_on_connection| {
            let shared = task_shared.clone();
            async move {
                if first_on_connection {
                    let setup = shared.connection_setup_nanos.load(Ordering::SeqCst);
                    if setup > 0 {
                        tokio::time::sleep(Duration::from_nanos(setup)).await;
                    }
                }
                handle(shared, request).await
            }
        });
        Self { addr, shared, task }
    }

    /// From now on, the first request on each new client connection waits `setup` before it is
    /// handled (and so answered): the time a real connection takes to set up (TCP and TLS
    /// handshakes with a remote endpoint), which loopback does not show. Later requests on the
    /// same connection are not delayed. `Duration::ZERO` turns it off.
    pub fn delay_new_connections(&self, setup: Duration) {
        let nanos = u64::try_from(setup.as_nanos()).unwrap_or(u64::MAX);
        self.shared
            .connection_setup_nanos
            .store(nanos, Ordering::SeqCst);
    }

    /// Requests received so far for the DynamoDB `operation` (`TransactWriteItems`, ...);
    /// requests without one are counted under their method and path (`GET /`).
    pub fn operation_count(&self, operation: &str) -> usize {
        self.shared
            .operations
            .lock()
            .unwrap()
            .get(operation)
            .copied()
            .unwrap_or(0)
    }

    /// Requests received so far, per operation (see [`FaultProxy::operation_count`]).
    pub fn operation_counts(&self) -> BTreeMap<String, usize> {
        self.shared.operations.lock().unwrap().clone()
    }

    /// What `run` answers, and the requests per operation received while it ran, the
    /// operations with none left out (nothing else may use the proxy meanwhile).
    pub async fn counting<T>(
        &self,
        run: impl std::future::Future<Output = T>,
    ) -> (T, BTreeMap<String, usize>) {
        let before = self.operation_counts();
        let answer = run.await;
        let mut made = self.operation_counts();
        for (operation, count) in before {
            *made.entry(operation).or_default() -= count;
        }
        made.retain(|_, count| *count > 0);
        (answer, made)
    }

    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request from now on gets `fault`.
    pub fn set(&self, fault: Fault) {
        *self.shared.fault.lock().unwrap() = (fault, None, None);
    }

    /// The next `requests` requests get `fault`, the ones after them none.
    pub fn set_for(&self, fault: Fault, requests: usize) {
        *self.shared.fault.lock().unwrap() = (fault, Some(requests), None);
    }

    /// The next `requests` requests of the DynamoDB `operation` (`TransactWriteItems`, ...) get
    /// `fault`; other operations pass untouched.
    pub fn set_for_operation(&self, fault: Fault, operation: &'static str, requests: usize) {
        *self.shared.fault.lock().unwrap() = (fault, Some(requests), Some(operation));
    }

    /// From now on, forwards one request at a time, so that each is applied whole before the
    /// next starts, as DynamoDB applies each request atomically. moto does not: it runs requests
    /// on concurrent threads, and a transaction that fails puts its table back as it was when
    /// the transaction started, undoing what other requests wrote meanwhile.
    pub fn one_at_a_time(&self) {
        self.shared.one_at_a_time.store(true, Ordering::SeqCst);
    }

    /// From now on, keeps every exchange forwarded (request and answer bodies), until
    /// [`FaultProxy::take_recorded`]. With [`FaultProxy::one_at_a_time`], their order is the
    /// order the upstream applied them.
    pub fn record(&self) {
        *self.shared.recorded.lock().unwrap() = Some(Vec::new());
    }

    /// The exchanges recorded since [`FaultProxy::record`] (recording goes on, from empty).
    pub fn take_recorded(&self) -> Vec<Exchange> {
        self.shared
            .recorded
            .lock()
            .unwrap()
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Requests received so far.
    pub fn requests(&self) -> usize {
        self.shared.requests.load(Ordering::SeqCst)
    }

    /// How long the upstream server took for each request forwarded so far (request sent to
    /// whole answer read), in order: the server's share of a client's latency.
    pub fn upstream_times(&self) -> Vec<Duration> {
        self.shared.upstream_times.lock().unwrap().clone()
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn dynamodb_error(status: u16, error_type: &str) -> Response<Full<Bytes>> {
    let body = format!(
        r#"{{"__type":"com.amazonaws.dynamodb.v20120810#{error_type}","message":"injected by the fault proxy"}}"#
    );
    Response::builder()
        .status(status)
        .header("content-type", "application/x-amz-json-1.0")
        .header("x-amzn-errortype", error_type)
        .body(Full::new(Bytes::from(body)))
        .unwrap()
}

/// DynamoDB's answer to a transaction of `actions` actions cancelled for `code` on the first.
fn cancelled(code: &str, actions: usize) -> Response<Full<Bytes>> {
    let mut reasons =
        vec![serde_json::json!({"Code": code, "Message": "injected by the fault proxy"})];
    reasons.resize(actions.max(1), serde_json::json!({"Code": "None"}));
    let codes: Vec<&str> = reasons.iter().filter_map(|r| r["Code"].as_str()).collect();
    let body = serde_json::json!({
        "__type": "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
        "Message": format!(
            "Transaction cancelled, please refer cancellation reasons for specific reasons [{}]",
            codes.join(", ")
        ),
        "CancellationReasons": reasons,
    });
    Response::builder()
        .status(400)
        .header("content-type", "application/x-amz-json-1.0")
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap()
}

/// An empty 502: the upstream could not be reached, or the proxy gives up.
fn bad_gateway() -> Response<Full<Bytes>> {
    Response::builder()
        .status(StatusCode::BAD_GATEWAY)
        .body(Full::new(Bytes::new()))
        .unwrap()
}

/// A body read whole (empty if it fails midway).
async fn whole<B: hyper::body::Body<Data = Bytes>>(body: B) -> Bytes {
    body.collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default()
}

async fn handle(shared: Arc<Shared>, request: Request<Incoming>) -> Response<Full<Bytes>> {
    shared.requests.fetch_add(1, Ordering::SeqCst);
    let operation = request
        .headers()
        .get("x-amz-target")
        .and_then(|target| target.to_str().ok())
        .and_then(|target| target.rsplit('.').next())
        .map(str::to_owned);
    *shared
        .operations
        .lock()
        .unwrap()
        .entry(
            operation
                .clone()
                .unwrap_or_else(|| format!("{} {}", request.method(), request.uri().path())),
        )
        .or_default() += 1;
    let fault = {
        let mut state = shared.fault.lock().unwrap();
        let targeted = state
            .2
            .is_none_or(|only| operation.as_deref() == Some(only));
        match &mut state.1 {
            _ if !targeted => Fault::None,
            Some(0) => Fault::None,
            Some(left) => {
                *left -= 1;
                state.0.clone()
            }
            None => state.0.clone(),
        }
    };
    match fault {
        Fault::Error(status, error_type) => return dynamodb_error(status, error_type),
        Fault::Cancelled(code) => {
            let body = whole(request.into_body()).await;
            let actions = serde_json::from_slice::<serde_json::Value>(&body)
                .ok()
                .and_then(|request| request["TransactItems"].as_array().map(Vec::len))
                .unwrap_or(1);
            return cancelled(code, actions);
        }
        Fault::Delay(delay) => tokio::time::sleep(delay).await,
        Fault::Hangup => {
            // Never answer: hyper drops the connection when the service future is dropped, which
            // happens when the client gives up; bounded so the task ends.
            tokio::time::sleep(Duration::from_secs(30)).await;
            return bad_gateway();
        }
        Fault::None | Fault::ErrorAfterForwarding(..) | Fault::Truncate => {}
    }
    // Forwarded on a task of its own: a client that gives up (its timeout) drops this future,
    // and the request it sent must still finish upstream before the next one starts, or two
    // requests would run in moto at once and a failing transaction's rollback could undo the
    // other's writes (units sold twice, seen under a drop's timeouts).
    let exchange = tokio::spawn({
        let shared = shared.clone();
        async move {
            let _turn = if shared.one_at_a_time.load(Ordering::SeqCst) {
                Some(shared.turn.lock().await)
            } else {
                None
            };
            let forwarded = forward(&shared, request).await;
            if let (Some(recorded), Some((sent, parts, body))) =
                (shared.recorded.lock().unwrap().as_mut(), &forwarded)
            {
                recorded.push(Exchange {
                    operation: operation.unwrap_or_else(|| "unknown".to_owned()),
                    request: sent.clone(),
                    status: parts.status.as_u16(),
                    response: body.clone(),
                });
            }
            forwarded
        }
    });
    let Some((_, mut parts, body)) = exchange.await.ok().flatten() else {
        return bad_gateway();
    };
    match fault {
        Fault::ErrorAfterForwarding(status, error_type) => dynamodb_error(status, error_type),
        Fault::Truncate => {
            // A length the body never reaches: hyper sends what there is and closes.
            parts
                .headers
                .insert("content-length", (body.len() + 100).into());
            Response::from_parts(parts, Full::new(body.slice(..body.len() / 2)))
        }
        _ => Response::from_parts(parts, Full::new(body)),
    }
}

/// Serves HTTP/1.1 on `listener` until the returned task is aborted, like the crate's
/// `spawn_server`, telling `handle` whether a request is the first on its connection.
pub(crate) fn spawn_connection_server<H, F>(
    listener: tokio::net::TcpListener,
    handle: H,
) -> tokio::task::JoinHandle<()>
where
    H: Fn(Request<Incoming>, bool) -> F + Clone + Send + Sync + 'static,
    F: Future<Output = Response<Full<Bytes>>> + Send + 'static,
{
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let handle = handle.clone();
            tokio::spawn(async move {
                let first = Arc::new(AtomicBool::new(true));
                let service = hyper::service::service_fn(move |request| {
                    let answer = handle(request, first.swap(false, Ordering::SeqCst));
                    async move { Ok::<_, std::convert::Infallible>(answer.await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .await;
            });
        }
    })
}

/// The request's body as sent and the upstream's answer to it, read whole, with its time
/// recorded; `None` when the upstream cannot be reached.
async fn forward(
    shared: &Shared,
    request: Request<Incoming>,
) -> Option<(Bytes, hyper::http::response::Parts, Bytes)> {
    let (mut parts, body) = request.into_parts();
    let body = whole(body).await;
    let path = parts
        .uri
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_owned();
    parts.uri = format!("{}{path}", shared.upstream)
        .parse()
        .expect("upstream URI");
    let upstream = Request::from_parts(parts, Full::new(body.clone()));
    let started = Instant::now();
    let answer = match shared.client.request(upstream).await {
        Ok(response) => {
            let (mut parts, response_body) = response.into_parts();
            // Hop-by-hop headers are the proxy's own business (RFC 9110 7.6.1): moto closes
            // every connection, real DynamoDB keeps them alive, and so does this proxy.
            for name in [
                "connection",
                "keep-alive",
                "proxy-connection",
                "te",
                "trailer",
                "transfer-encoding",
                "upgrade",
            ] {
                parts.headers.remove(name);
            }
            Some((body, parts, whole(response_body).await))
        }
        Err(_) => None,
    };
    shared
        .upstream_times
        .lock()
        .unwrap()
        .push(started.elapsed());
    answer
}
