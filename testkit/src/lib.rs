//! Test support for fan-api's integration tests: real parts on loopback, started and stopped by
//! each test.
//!
//! - [`moto`]: a `moto_server` (DynamoDB-compatible) on a free port, and tables made on it the way
//!   `seed-packs --create-table` makes them.
//! - [`tokens`]: session tokens signed with the test keys in `fixtures/keys`.
//! - [`http_stub`]: a scriptable HTTP server (the identity provider's JWKS endpoint).
//! - [`fault_proxy`]: a loopback HTTP proxy that injects faults between a client and a server.
//! - [`logs`]: captures logs in the production format, to check they hold no secret.
//! - [`events`]: API Gateway HTTP API (v2) events and the requests lambda_http makes of them.
//! - [`runtime_api`]: a Lambda Runtime API emulator to run a real function binary.
//! - [`lambda_events`]: the stream records and queue messages the webhook functions receive.
//! - [`emf`]: CloudWatch Embedded Metric Format lines read and checked against the specification.
//! - [`stripe`]: a Stripe API stub that records what it receives, and signed webhook events.
//! - [`products`]: the shipped products, limited ones, products paid by card and their orders,
//!   and a fan's ledger entries and balance checked against it.
//! - [`scripts`]: input files for the repository's scripts, and their runs.
//! - [`drand`]: a drand relay stub serving recorded quicknet rounds, honest or lying.
//! - [`waiting_room`]: queued packs drawn with a recorded round, fans joined, the keeper run.
//! - [`countdowns`]: an answer's countdowns checked against when it was asked.

pub mod attacks;
pub mod countdowns;
pub mod drand;
pub mod emf;
pub mod event_log;
pub mod events;
pub mod fault_proxy;
pub mod http_stub;
pub mod lambda_events;
pub mod logs;
pub mod mine;
pub mod moto;
// moto's and key_rollback.py's transactions compared: unit tests, one test binary for the crate.
#[cfg(test)]
mod moto_rollback_tests;
pub mod openings;
pub mod packs;
pub mod products;
pub mod profiles;
pub mod purchases;
pub mod quests;
pub mod queue;
pub mod runtime_api;
pub mod scripts;
pub mod standard_webhooks;
pub mod stripe;
pub mod tokens;
pub mod turnstile;
pub mod waiting_room;
pub mod wallets;
pub mod webhook_receiver;

/// A port on 127.0.0.1 that was free a moment ago.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("bind 127.0.0.1:0")
        .port()
}

/// Runs `count` tasks at once (each waits at a barrier for the others), each with its index;
/// their results in the order they finished.
pub async fn at_once<T, F, Fut>(count: usize, task: F) -> Vec<T>
where
    T: Send + 'static,
    F: Fn(usize) -> Fut,
    Fut: Future<Output = T> + Send + 'static,
{
    let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(count));
    let mut tasks = tokio::task::JoinSet::new();
    for index in 0..count {
        let barrier = barrier.clone();
        let work = task(index);
        tasks.spawn(async move {
            barrier.wait().await;
            work.await
        });
    }
    tasks.join_all().await
}

/// The cursor-signing secret of tests and local runs of the functions.
pub const CURSOR_SECRET: &str = "test-cursor-secret-0123456789abcdef";

/// A cursor signer with [`CURSOR_SECRET`].
pub fn cursor_signer() -> domain::packs::listing::CursorSigner {
    domain::packs::listing::CursorSigner::new(CURSOR_SECRET.as_bytes())
}

/// Serves HTTP/1.1 on `listener` until the returned task is aborted: every request of every
/// connection goes to `handle`.
pub(crate) fn spawn_server<H, F>(
    listener: tokio::net::TcpListener,
    handle: H,
) -> tokio::task::JoinHandle<()>
where
    H: Fn(hyper::Request<hyper::body::Incoming>) -> F + Clone + Send + Sync + 'static,
    F: Future<Output = hyper::Response<http_body_util::Full<bytes::Bytes>>> + Send + 'static,
{
    fault_proxy::spawn_connection_server(listener, move |request, _first| handle(request))
}

/// A JSON stub's server on a free loopback port, with its state (`S::default()` at first)
/// shared with the stub's methods: each request is read whole and answered by `answer` (a status
/// and a JSON body) under the state's lock. `name` says which stub failed to bind.
pub(crate) async fn spawn_json_stub<S, A>(
    name: &str,
    answer: A,
) -> (
    std::net::SocketAddr,
    std::sync::Arc<std::sync::Mutex<S>>,
    tokio::task::JoinHandle<()>,
)
where
    S: Default + Send + 'static,
    A: Fn(&mut S, &hyper::http::request::Parts, &[u8]) -> (hyper::StatusCode, serde_json::Value)
        + Clone
        + Send
        + Sync
        + 'static,
{
    use http_body_util::BodyExt;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap_or_else(|e| panic!("bind the {name} stub: {e}"));
    let addr = listener.local_addr().unwrap();
    let state = std::sync::Arc::new(std::sync::Mutex::new(S::default()));
    let shared = state.clone();
    let task = spawn_server(listener, move |request| {
        let (state, answer) = (shared.clone(), answer.clone());
        async move {
            let (parts, body) = request.into_parts();
            let body = body
                .collect()
                .await
                .map(|b| b.to_bytes())
                .unwrap_or_default();
            let (status, body) = answer(&mut state.lock().unwrap(), &parts, &body);
            hyper::Response::builder()
                .status(status)
                .header("content-type", "application/json")
                .body(http_body_util::Full::new(bytes::Bytes::from(
                    body.to_string(),
                )))
                .unwrap()
        }
    });
    (addr, state, task)
}

/// The link handler's state over `store`, verifying with [`tokens::verifier`].
pub fn link_state<S>(store: S) -> std::sync::Arc<api::handlers::web3_link::LinkState<S>> {
    std::sync::Arc::new(api::handlers::web3_link::LinkState {
        store,
        verifier: tokens::verifier(),
        max_body_bytes: api::http::request::DEFAULT_MAX_BODY_BYTES,
    })
}

/// Runs each named contract test once per store: `dynamodb::<test>` on a new table of this test
/// binary's moto_server, reached one request at a time as DynamoDB applies requests
/// ([`moto::atomic_table`]), and `memory::<test>` on a new `MemoryStore`. The tests take the
/// store `by_ref` (`&S`), `by_value` (`S`) or in an `arc` (`Arc<S>`, to share it among tasks).
#[macro_export]
macro_rules! store_contract {
    ($mode:ident: $($test:ident),* $(,)?) => {
        mod dynamodb {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $test() {
                    let (_one_at_a_time, store) = $crate::moto::atomic_table().await;
                    $crate::store_contract!(@call $mode super::$test, store);
                }
            )*
        }
        mod memory {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $test() {
                    let store = store::MemoryStore::default();
                    $crate::store_contract!(@call $mode super::$test, store);
                }
            )*
        }
    };
    (@call by_ref $test:path, $store:ident) => { $test(&$store).await };
    (@call by_value $test:path, $store:ident) => { $test($store).await };
    (@call arc $test:path, $store:ident) => { $test(std::sync::Arc::new($store)).await };
}

/// The two tests every signed-in function's binary has: it refuses to start without its auth
/// settings, and a DynamoDB outage on `GET <path>` (as `fan-1`) is a 503 with `Retry-After`,
/// then the function answers again. `spawn` starts the binary on a [`purchases::PurchaseEnv`].
#[macro_export]
macro_rules! signed_in_function_basics {
    ($binary:expr, $spawn:path, $path:literal) => {
        #[tokio::test]
        async fn missing_auth_settings_stop_the_function_with_a_clear_message() {
            $crate::runtime_api::assert_init_needs_auth($binary).await;
        }

        #[tokio::test]
        async fn a_dynamodb_outage_is_a_503_with_retry_after() {
            let (env, proxy) = $crate::purchases::PurchaseEnv::behind_proxy().await;
            let function = $spawn(&env).await;
            let event =
                $crate::events::ApiEvent::get($path).bearer(&$crate::tokens::token("fan-1", None));
            $crate::purchases::assert_outage_then_recovery(&function, &proxy, &event).await;
        }
    };
}

/// Typed ids from test literals (a literal outside the grammar is a mistake in the test).
pub mod ids {
    use domain::ids::{PackId, PurchaseId, TopUpId, UserId};

    pub fn user(id: &str) -> UserId {
        UserId::parse(id).expect("a user id")
    }

    pub fn pack(id: &str) -> PackId {
        PackId::parse(id).expect("a pack id")
    }

    pub fn purchase(id: &str) -> PurchaseId {
        PurchaseId::parse(id).expect("a purchase id")
    }

    pub fn top_up(id: &str) -> TopUpId {
        TopUpId::parse(id).expect("a top-up id")
    }
}
