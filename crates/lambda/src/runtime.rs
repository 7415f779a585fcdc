//! What every Lambda function's `main` does: logging, configuration that fails fast, and the
//! Lambda runtime loop: [`serve`] around the function's router for HTTP requests (API Gateway), and
//! [`serve_events`] for plain events (a schedule), both logging in the Lambda JSON format with
//! the invocation's request id, and each writing its invocation's metrics line
//! ([`store::metrics`]).

use std::convert::Infallible;
use std::future::Future;
use std::task::{Context, Poll};
use std::time::{Instant, SystemTime};

use axum::Router;
use axum::response::IntoResponse;
use lambda_http::request::LambdaRequest;
use lambda_http::{Request, service_fn};
use lambda_runtime::LambdaEvent;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tower::ServiceExt;
use tracing::Instrument;

use crate::aws::{LambdaDynamoDb, lambda_dynamodb_client};
use api::auth::TokenVerifier;
use api::config::{self, AuthConfig, ConfigError, Env};
use api::http::app_config::ConfigCache;
use api::http::layers::{api_layers, request_id};
use api::http::limit::{Limiter, system_clock};
use api::state::PurchaseState;
use std::sync::Arc;
use store::DynamoStore;
use store::metrics::{self, Metric};

/// The configured value, or a clear message and exit code 1: Lambda reports the failed init.
/// Written once, to standard error, which Lambda keeps with the init failure.
pub fn require<T>(result: Result<T, ConfigError>) -> T {
    result.unwrap_or_else(|error| {
        eprintln!("configuration error: {error}");
        std::process::exit(1)
    })
}

/// What every function does first: JSON logs on standard output, and its clock
/// ([`config::clock_skew`], 0 unless a test set it).
pub fn cold_start() {
    crate::telemetry::init_json();
    domain::timestamp::skew_clock(require(config::clock_skew(&Env)));
}

/// The longest a cold start waits for its prefetches (the DynamoDB connection, the JWKS).
pub const PREFETCH_BUDGET: std::time::Duration = std::time::Duration::from_millis(1500);

/// Runs a cold start's prefetches (opening the DynamoDB connection, fetching the JWKS: each
/// logs its own failure and leaves the first request to do it) for at most [`PREFETCH_BUDGET`],
/// so that a cold request pays for neither. Never fails init.
pub async fn prefetch(work: impl Future<Output = ()>) {
    if tokio::time::timeout(PREFETCH_BUDGET, work).await.is_err() {
        tracing::warn!("prefetch took over {PREFETCH_BUDGET:?}; going on without it");
    }
}

/// The function's table (`TABLE_NAME`) through a DynamoDB client built from Lambda's
/// environment, and the client's warmer. Exits with a clear message when configuration is missing.
pub fn store_from_env() -> (DynamoStore, LambdaDynamoDb) {
    let table = require(config::table_name(&Env));
    let dynamodb = require(lambda_dynamodb_client(&Env));
    let weights = require(config::score_weights(&Env));
    (
        DynamoStore::new(dynamodb.client.clone(), table).with_score_weights(weights),
        dynamodb,
    )
}

/// The session-token verifier (`AUTH_*`). Exits with a clear message when configuration is
/// missing.
pub fn verifier_from_env(store: &DynamoStore) -> TokenVerifier {
    require(AuthConfig::from_source(&Env).and_then(|auth| TokenVerifier::from_config(&auth)))
        .with_sessions(store.clone())
}

/// Opens the DynamoDB connection and, for a function that checks tokens, fetches the JWKS, at
/// once and within [`PREFETCH_BUDGET`]: the set-ups overlap, and the first request pays for
/// neither.
pub async fn warm(dynamodb: &LambdaDynamoDb, verifier: Option<&TokenVerifier>) {
    prefetch(async {
        tokio::join!(dynamodb.warm(), async {
            if let Some(verifier) = verifier {
                verifier.keys().prefetch().await;
            }
        });
    })
    .await;
}

/// The state of a purchase function, from the environment (`TABLE_NAME`, `AUTH_*`,
/// `PURCHASE_HOLD_SECONDS`, `MAX_BODY_BYTES`, `MAX_UNPAID_HOLDS`, `START_REQUIRES_FUNDS`, and
/// when set `TURNSTILE_SECRET` with `HUMAN_CHECK_HOSTNAMES`), warmed.
pub async fn purchase_state() -> PurchaseState<DynamoStore> {
    let (store, dynamodb) = store_from_env();
    let hold = require(config::purchase_hold(&Env));
    let max_body_bytes = require(config::max_body_bytes(&Env));
    let policy = require(config::hold_policy(&Env));
    let state = PurchaseState {
        verifier: verifier_from_env(&store),
        store,
        hold,
        max_body_bytes,
        policy,
        human: require(config::optional_human_check(&Env)),
    };
    warm(&dynamodb, Some(&state.verifier)).await;
    state
}

/// Serves `app` (a function's router, [`api::http::routes::Routes::function_app`], over its
/// state built once for the life of the process) in the API's layers until Lambda stops the
/// process, each route in the rate limits of the class its declaration names (`RATE_LIMIT_*`,
/// read once per cold start; counted on `store`'s table, [`api::http::limit`]) behind the app
/// configuration's gate ([`api::http::app_config`]: the copy read during init, then at most
/// every few seconds): no function can leave them out. Where the edge is on
/// (`EDGE_ORIGIN_SECRETS`), a request that did not come through it is refused first, and one that
/// did is counted on the viewer's address ([`api::http::edge`]). Exits with a clear message when that configuration is malformed. Each
/// invocation writes its metrics line ([`store::metrics`]): `Requests` with its `statusClass`,
/// `Latency` (the router's time), whatever the handler and the store counted, and the request id.
pub async fn serve(app: Router, store: &DynamoStore) -> Result<(), lambda_http::Error> {
    let policy = require(config::rate_policy(&Env));
    let limiter = Limiter::new(store.clone(), policy, system_clock());
    let config = Arc::new(ConfigCache::new(store));
    // Read during init, on the connection `warm` opened (one round trip), so that no request
    // waits for it; a failure is logged and the copy read again 5 s later.
    prefetch(async {
        config.current().await;
    })
    .await;
    let app = api_layers(app, Some(Arc::new(limiter))).with_config(config);
    let emitter = &metrics::Emitter::from_env();
    let edge = &require(config::edge_origin(&Env));
    let service = service_fn(move |mut request: Request| {
        let app = app.clone();
        async move {
            let request_id = request_id(&request).to_string();
            let started = Instant::now();
            let (response, mut recorded) = metrics::record(async {
                // Before anything reads the request's address or spends a limit on it.
                match edge.as_ref().map(|edge| edge.admit(&mut request)) {
                    Some(Err(refusal)) => refusal.into_response(),
                    _ => app
                        .oneshot(request)
                        .await
                        .unwrap_or_else(|never: Infallible| match never {}),
                }
            })
            .await;
            recorded.set(Metric::Latency, started.elapsed().as_secs_f64() * 1000.0);
            recorded.add(Metric::Requests, 1);
            recorded.property(
                "statusClass",
                metrics::status_class(response.status().as_u16()),
            );
            recorded.property("requestId", &request_id);
            if let Some(emitter) = emitter {
                emitter.emit(&recorded);
            }
            Ok::<_, Infallible>(response)
        }
    });
    lambda_runtime::run(UriSafe(lambda_http::Adapter::from(service))).await
}

/// lambda_http builds each request's URI as `{x-forwarded-proto}://{host}{path}?{raw query}`
/// and panics (with `panic = "abort"` the process dies, API Gateway answers its own 5xx and the
/// next request pays a cold start) when that is not a URI: a `"`, `<` or space in the query, a
/// scheme such as `http, https` or `h_t`, a host such as `example.com:99999`, `[::1` or `a%zz`.
/// The query's bytes are percent-encoded first, which keeps its meaning (each is decoded again
/// with the others); a scheme other than `http` or `https` becomes `https` (API Gateway's own);
/// a host that does not make a URI gives way to the API's domain name, or to none. None of them
/// is read by a handler, which is left to answer.
struct UriSafe<S>(S);

impl<S> lambda_runtime::Service<LambdaEvent<LambdaRequest>> for UriSafe<S>
where
    S: lambda_runtime::Service<LambdaEvent<LambdaRequest>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, mut event: LambdaEvent<LambdaRequest>) -> Self::Future {
        if let LambdaRequest::ApiGatewayV2(request) = &mut event.payload {
            if let Some(query) = request.raw_query_string.as_mut() {
                encode_outside_uri(query);
            }
            make_origin_safe(request);
        }
        self.0.call(event)
    }
}

/// Replaces the scheme and host lambda_http would build a URI from with ones it can.
fn make_origin_safe(request: &mut lambda_http::aws_lambda_events::apigw::ApiGatewayV2httpRequest) {
    use lambda_http::http::header::{HOST, HeaderName, HeaderValue};
    let proto = HeaderName::from_static("x-forwarded-proto");
    if let Some(scheme) = request.headers.get(&proto)
        && !matches!(scheme.as_bytes(), b"http" | b"https")
    {
        request
            .headers
            .insert(proto, HeaderValue::from_static("https"));
    }
    if request
        .headers
        .get(HOST)
        .is_some_and(|host| !host.to_str().is_ok_and(makes_a_uri))
    {
        request.headers.remove(HOST);
    }
    if request
        .request_context
        .domain_name
        .as_deref()
        .is_some_and(|domain| !makes_a_uri(domain))
    {
        request.request_context.domain_name = None;
    }
}

/// Whether `host` makes a URI both parsers lambda_http uses accept (`url`, then `http`).
pub fn makes_a_uri(host: &str) -> bool {
    url::Url::parse(&format!("https://{host}/"))
        .is_ok_and(|url| url.as_str().parse::<lambda_http::http::Uri>().is_ok())
}

/// Percent-encodes every byte of `query` that RFC 3986 does not allow in a query (`%` stays:
/// escapes already there keep their meaning).
pub fn encode_outside_uri(query: &mut String) {
    let allowed =
        |byte: u8| byte.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@/?%".contains(&byte);
    if query.bytes().all(allowed) {
        return;
    }
    let mut encoded = String::with_capacity(query.len() + 16);
    for byte in query.bytes() {
        if allowed(byte) {
            encoded.push(char::from(byte));
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    *query = encoded;
}

/// Serves plain events of type `E` (a schedule's, for example) with `handler` over `state`,
/// each in a span carrying Lambda's request id. `handler` is also given the invocation's
/// deadline (the function's configured timeout from its start), so that a job that works on
/// within its run stops in time whatever timeout `template.yaml` gives it. A handler's error is
/// reported to Lambda as the invocation's failure (and logged). An invocation that counted a
/// metric writes its line (no `Requests` or `Latency`: these are not requests).
pub async fn serve_events<S, E, R, F, Fut>(
    state: S,
    handler: F,
) -> Result<(), lambda_runtime::Error>
where
    S: Send + Sync + 'static,
    E: DeserializeOwned + Send + 'static,
    R: Serialize + Send + 'static,
    F: Fn(&'static S, E, SystemTime) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R, lambda_runtime::Error>> + Send,
{
    let state: &'static S = Box::leak(Box::new(state));
    let handler = &handler;
    let emitter = &metrics::Emitter::from_env();
    lambda_runtime::run(lambda_runtime::service_fn(
        move |event: LambdaEvent<E>| async move {
            let span = tracing::info_span!("event", request_id = %event.context.request_id);
            let deadline = event.context.deadline();
            let (result, mut recorded) =
                metrics::record(handler(state, event.payload, deadline).instrument(span.clone()))
                    .await;
            if let Err(error) = &result {
                span.in_scope(|| tracing::error!(error = %error, "event failed"));
            }
            if let Some(emitter) = emitter {
                recorded.property("requestId", &event.context.request_id);
                emitter.emit(&recorded);
            }
            result
        },
    ))
    .await
}
