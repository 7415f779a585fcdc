//! A Lambda Runtime API emulator on a free loopback port, enough to run a real function binary:
//! `invocation/next` hands out queued events, `.../response` and `.../error` complete them.

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use serde_json::Value;
use tokio::sync::{Notify, oneshot};

/// How an invocation ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The function's response document.
    Response(Value),
    /// The function reported an error.
    Error(Value),
    /// Answered after the invocation's deadline: Lambda would have stopped the function, and
    /// API Gateway answered its own 500.
    TimedOut,
}

type Pending = (String, Value, oneshot::Sender<Outcome>);

/// What an invocation in flight answers to, and by when.
type InFlight = (oneshot::Sender<Outcome>, SystemTime);

#[derive(Default)]
struct State {
    queue: Mutex<VecDeque<Pending>>,
    queued: Notify,
    in_flight: Mutex<HashMap<String, InFlight>>,
    /// The function's timeout, from each invocation's start (`None`: 30 s).
    timeout: Mutex<Option<Duration>>,
    first_poll: Mutex<Option<Instant>>,
    init_error: Mutex<Option<Value>>,
    next_id: AtomicU64,
}

pub struct RuntimeApi {
    addr: SocketAddr,
    state: Arc<State>,
    task: tokio::task::JoinHandle<()>,
}

impl RuntimeApi {
    pub async fn start() -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind runtime api");
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(State::default());
        let task_state = state.clone();
        let task = crate::spawn_server(listener, move |request| route(task_state.clone(), request));
        Self { addr, state, task }
    }

    /// The value of `AWS_LAMBDA_RUNTIME_API` for a function served by this emulator.
    pub fn address(&self) -> String {
        self.addr.to_string()
    }

    /// The environment Lambda gives a function, pointing it at this emulator.
    pub fn lambda_env(&self, function_name: &str) -> Vec<(String, String)> {
        [
            ("AWS_LAMBDA_RUNTIME_API", self.address()),
            ("AWS_LAMBDA_FUNCTION_NAME", function_name.into()),
            ("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "128".into()),
            ("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST".into()),
            ("AWS_REGION", "us-east-1".into()),
            ("AWS_ACCESS_KEY_ID", "test".into()),
            ("AWS_SECRET_ACCESS_KEY", "test".into()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect()
    }

    /// Starts a function binary served by this emulator, with only Lambda's variables and `env`
    /// in its environment (nothing of the host's AWS set-up leaks in). Killed when dropped.
    /// Its standard output and error are piped: read them, or use [`RuntimeApi::spawn_quiet`]
    /// for long runs.
    pub fn spawn(&self, binary: &str, env: &[(&str, &str)]) -> tokio::process::Child {
        self.start_process(binary, env, Stdio::piped(), Stdio::piped())
    }

    /// Like [`RuntimeApi::spawn`], with only standard output piped (the function's log; its
    /// standard error, discarded, holds only a failed init's message).
    pub fn spawn_logged(&self, binary: &str, env: &[(&str, &str)]) -> tokio::process::Child {
        self.start_process(binary, env, Stdio::piped(), Stdio::null())
    }

    /// Like [`RuntimeApi::spawn`], with standard output and error discarded.
    pub fn spawn_quiet(&self, binary: &str, env: &[(&str, &str)]) -> tokio::process::Child {
        self.start_process(binary, env, Stdio::null(), Stdio::null())
    }

    fn start_process(
        &self,
        binary: &str,
        env: &[(&str, &str)],
        stdout: Stdio,
        stderr: Stdio,
    ) -> tokio::process::Child {
        self.command(binary, env)
            .stdout(stdout)
            .stderr(stderr)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {binary}: {e}"))
    }

    fn command(&self, binary: &str, env: &[(&str, &str)]) -> tokio::process::Command {
        let name = std::path::Path::new(binary)
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let mut command = tokio::process::Command::new(binary);
        command
            .env_clear()
            .envs(self.lambda_env(&name))
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .kill_on_drop(true);
        command
    }

    /// Gives each later invocation `timeout` (the function's configured timeout) from when the
    /// function takes it: its deadline, which an answer after it misses ([`Outcome::TimedOut`]).
    pub fn set_timeout(&self, timeout: Duration) {
        *self.state.timeout.lock().unwrap() = Some(timeout);
    }

    /// When the function first asked for an invocation (its init is over), if it has.
    pub fn first_poll(&self) -> Option<Instant> {
        *self.state.first_poll.lock().unwrap()
    }

    /// What the function reported to `init/error`, if anything.
    pub fn init_error(&self) -> Option<Value> {
        self.state.init_error.lock().unwrap().clone()
    }

    /// Queues `event`, waits for the function to finish it (at most `timeout`).
    pub async fn invoke(&self, event: Value, timeout: Duration) -> Option<Outcome> {
        let id = format!("req-{}", self.state.next_id.fetch_add(1, Ordering::SeqCst));
        let (done, outcome) = oneshot::channel();
        self.state
            .queue
            .lock()
            .unwrap()
            .push_back((id, event, done));
        self.state.queued.notify_one();
        tokio::time::timeout(timeout, outcome).await.ok()?.ok()
    }
}

/// Waits (at most `timeout`) for a function process to exit; its exit code and standard error.
pub async fn exit_of(
    mut function: tokio::process::Child,
    timeout: Duration,
) -> (Option<i32>, String) {
    use tokio::io::AsyncReadExt;
    let status = tokio::time::timeout(timeout, function.wait())
        .await
        .expect("the function exits")
        .unwrap();
    let mut stderr = String::new();
    if let Some(mut pipe) = function.stderr.take() {
        pipe.read_to_string(&mut stderr).await.unwrap();
    }
    (status.code(), stderr)
}

/// Starts `binary` with only `env` (and Lambda's own variables) and checks that its init fails
/// fast and clearly: exit code 1, a message naming `variable`, and no invocation asked for.
pub async fn assert_init_fails_naming(binary: &str, env: &[(&str, &str)], variable: &str) {
    let runtime = RuntimeApi::start().await;
    let (code, stderr) = exit_of(runtime.spawn(binary, env), Duration::from_secs(30)).await;
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains(variable), "{stderr}");
    assert!(
        runtime.first_poll().is_none(),
        "never asked for an invocation"
    );
}

/// [`assert_init_fails_naming`] for a function that checks session tokens, started with its
/// table but no `AUTH_*` settings.
pub async fn assert_init_needs_auth(binary: &str) {
    assert_init_fails_naming(binary, &[("TABLE_NAME", "fan-api")], "AUTH_ISSUER").await;
}

/// Status and JSON body of an API Gateway (v2) response document a function returned.
pub fn http_parts(outcome: &Outcome) -> (u16, Value) {
    let Outcome::Response(document) = outcome else {
        panic!("the function failed: {outcome:?}")
    };
    let status = document["statusCode"].as_u64().expect("statusCode") as u16;
    // No body (a 204) is null; any other must be JSON.
    let body = document["body"]
        .as_str()
        .filter(|b| !b.is_empty())
        .map_or(Value::Null, |b| serde_json::from_str(b).expect("JSON body"));
    (status, body)
}

impl Drop for RuntimeApi {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn reply(status: StatusCode, body: Bytes) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(body));
    *response.status_mut() = status;
    response
}

async fn route(state: Arc<State>, request: Request<Incoming>) -> Response<Full<Bytes>> {
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let body = request
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let json = || serde_json::from_slice::<Value>(&body).unwrap_or(Value::Null);
    let segments: Vec<&str> = path
        .trim_start_matches("/2018-06-01/runtime/")
        .split('/')
        .collect();
    let accepted = || reply(StatusCode::ACCEPTED, Bytes::from_static(b"{}"));
    match (method, segments.as_slice()) {
        (Method::GET, ["invocation", "next"]) => next(&state).await,
        (Method::POST, ["invocation", id, kind @ ("response" | "error")]) => {
            if let Some((done, deadline)) = state.in_flight.lock().unwrap().remove(*id) {
                let outcome = if SystemTime::now() > deadline {
                    Outcome::TimedOut
                } else if *kind == "response" {
                    Outcome::Response(json())
                } else {
                    Outcome::Error(json())
                };
                let _ = done.send(outcome);
            }
            accepted()
        }
        (Method::POST, ["init", "error"]) => {
            *state.init_error.lock().unwrap() = Some(json());
            accepted()
        }
        _ => reply(StatusCode::NOT_FOUND, Bytes::new()),
    }
}

async fn next(state: &State) -> Response<Full<Bytes>> {
    state
        .first_poll
        .lock()
        .unwrap()
        .get_or_insert_with(Instant::now);
    let (id, event, done) = loop {
        let waiting = state.queued.notified();
        if let Some(pending) = state.queue.lock().unwrap().pop_front() {
            break pending;
        }
        waiting.await;
    };
    let timeout = state
        .timeout
        .lock()
        .unwrap()
        .unwrap_or(Duration::from_secs(30));
    let deadline = SystemTime::now() + timeout;
    state
        .in_flight
        .lock()
        .unwrap()
        .insert(id.clone(), (done, deadline));
    let deadline = deadline.duration_since(UNIX_EPOCH).unwrap();
    Response::builder()
        .status(StatusCode::OK)
        .header("lambda-runtime-aws-request-id", &id)
        .header(
            "lambda-runtime-deadline-ms",
            deadline.as_millis().to_string(),
        )
        .header(
            "lambda-runtime-invoked-function-arn",
            "arn:aws:lambda:us-east-1:123456789012:function:test",
        )
        .header(
            "lambda-runtime-trace-id",
            "Root=1-00000000-000000000000000000000000;Sampled=0",
        )
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(event.to_string())))
        .unwrap()
}
