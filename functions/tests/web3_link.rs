//! The real `web3-link` binary, run through a Lambda Runtime API emulator against moto_server,
//! with its JWKS fetched from a loopback identity-provider stub.

use std::time::Duration;

use store::links::GetLink;
use testkit::events::ApiEvent;
use testkit::http_stub::{HttpStub, Reply};
use testkit::runtime_api::{RuntimeApi, http_parts};
use testkit::tokens::{AUDIENCE, ISSUER, jwks_json, token};
use tokio::io::AsyncReadExt;

const BINARY: &str = env!("CARGO_BIN_EXE_web3-link");
const TIMEOUT: Duration = Duration::from_secs(30);

#[tokio::test]
async fn links_over_the_runtime_api_with_keys_from_the_jwks_url() {
    let store = testkit::moto::shared_table().await;
    let idp = HttpStub::start(Reply::Json(jwks_json())).await;
    let runtime = RuntimeApi::start().await;
    let jwks_url = idp.url("/.well-known/jwks.json");
    let mut function = runtime.spawn(
        BINARY,
        &[
            ("TABLE_NAME", store.table()),
            (
                "AWS_ENDPOINT_URL_DYNAMODB",
                testkit::moto::shared_endpoint(),
            ),
            ("AUTH_ISSUER", ISSUER),
            ("AUTH_AUDIENCE", AUDIENCE),
            ("AUTH_JWKS_URL", &jwks_url),
            ("RUST_LOG", "debug"),
        ],
    );

    let mut tokens = Vec::new();
    for user in ["user_1", "user_2"] {
        tokens.push(token(user, Some("fan@example.com")));
        let event = ApiEvent::post("/api/web3-link")
            .bearer(tokens.last().unwrap())
            .json(r#"{"payload":{"wallet":"0x1"}}"#);
        let (status, body) = http_parts(
            &runtime
                .invoke(event.to_json(), TIMEOUT)
                .await
                .expect("answered"),
        );
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["data"]["userId"], user);
        assert_eq!(
            store
                .get_link(&testkit::ids::user(user), "web3")
                .await
                .unwrap()
                .unwrap()
                .payload,
            r#"{"wallet":"0x1"}"#
        );
    }
    assert_eq!(
        idp.hits(),
        1,
        "keys fetched once, kept across warm invocations"
    );

    let event = ApiEvent::post("/api/web3-link").json(r#"{"payload":1}"#);
    let (status, body) = http_parts(&runtime.invoke(event.to_json(), TIMEOUT).await.unwrap());
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (401, Some("missing_token"))
    );

    // The function's own logs (JSON lines on stdout): request ids, no token, e-mail or payload.
    function.start_kill().unwrap();
    let mut logs = String::new();
    function
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut logs)
        .await
        .unwrap();
    assert!(
        logs.contains("web3 link saved") && logs.contains("request_id"),
        "{logs}"
    );
    for secret in tokens
        .iter()
        .flat_map(|t| [t.as_str(), t.rsplit('.').next().unwrap()])
        .chain(["fan@example.com", "0x1"])
    {
        assert!(!logs.contains(secret), "{secret} was logged:\n{logs}");
    }
}

#[tokio::test]
async fn missing_auth_settings_stop_the_function_with_a_clear_message() {
    testkit::runtime_api::assert_init_needs_auth(BINARY).await;
}

/// Spawns web3-link on `runtime` with its table and DynamoDB behind `dynamodb` and its keys at
/// `jwks_url`.
fn spawn_linked(
    runtime: &RuntimeApi,
    table: &str,
    dynamodb: &str,
    jwks_url: &str,
) -> tokio::process::Child {
    runtime.spawn_quiet(
        BINARY,
        &[
            ("TABLE_NAME", table),
            ("AWS_ENDPOINT_URL_DYNAMODB", dynamodb),
            ("AUTH_ISSUER", ISSUER),
            ("AUTH_AUDIENCE", AUDIENCE),
            ("AUTH_JWKS_URL", jwks_url),
        ],
    )
}

async fn link(runtime: &RuntimeApi, user: &str) -> u16 {
    let event = ApiEvent::post("/api/web3-link")
        .bearer(&token(user, None))
        .json(r#"{"payload":1}"#);
    http_parts(
        &runtime
            .invoke(event.to_json(), TIMEOUT)
            .await
            .expect("answered"),
    )
    .0
}

/// A cold start fetches the keys and opens the DynamoDB connection during init, at once, then
/// reads the app configuration on that connection, so the first request pays for none of them.
#[tokio::test]
async fn init_prefetches_the_keys_and_the_dynamodb_connection() {
    let store = testkit::moto::shared_table().await;
    let proxy = testkit::fault_proxy::FaultProxy::start(testkit::moto::shared_endpoint()).await;
    let idp = HttpStub::start(Reply::Json(jwks_json())).await;
    let runtime = RuntimeApi::start().await;
    let _function = spawn_linked(
        &runtime,
        store.table(),
        &proxy.endpoint(),
        &idp.url("/jwks.json"),
    );
    let deadline = std::time::Instant::now() + TIMEOUT;
    while runtime.first_poll().is_none() {
        assert!(std::time::Instant::now() < deadline, "init never finished");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(idp.hits(), 1, "the keys were fetched during init");
    assert_eq!(
        proxy.requests(),
        2,
        "the DynamoDB connection was opened, and the app configuration read, during init"
    );
    let (status, made) = proxy.counting(link(&runtime, "first")).await;
    assert_eq!(status, 200);
    assert_eq!(idp.hits(), 1, "the first request fetched nothing");
    assert_eq!(
        made,
        [
            ("BatchGetItem".to_owned(), 1),
            ("GetItem".to_owned(), 1),
            ("TransactWriteItems".to_owned(), 1)
        ]
        .into(),
        "and made only its own calls: the fan's sessions (issue 47), its `wallet.linked` \
         event's sequence read (issue 46) and the link's transaction, the event in it; its \
         limits are counted in memory (issue 45)"
    );
}

/// A prefetch that fails never fails init: the first request fetches as it would have.
#[tokio::test]
async fn a_failed_prefetch_leaves_the_first_request_to_fetch() {
    let store = testkit::moto::shared_table().await;
    let idp = HttpStub::start(Reply::Status(500)).await;
    let runtime = RuntimeApi::start().await;
    let _function = spawn_linked(
        &runtime,
        store.table(),
        testkit::moto::shared_endpoint(),
        &idp.url("/jwks.json"),
    );
    let deadline = std::time::Instant::now() + TIMEOUT;
    while runtime.first_poll().is_none() {
        assert!(std::time::Instant::now() < deadline, "init never finished");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(idp.hits(), 1);
    idp.set(Reply::Json(jwks_json()));
    assert_eq!(link(&runtime, "first").await, 200);
    assert_eq!(idp.hits(), 2, "the first request fetched the keys");
}
