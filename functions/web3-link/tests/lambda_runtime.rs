//! The real `web3-link` binary, run through a Lambda Runtime API emulator against moto_server,
//! with its JWKS fetched from a loopback identity-provider stub.

use std::time::Duration;

use shared::store::links::GetLink;
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
            store.get_link(user, "web3").await.unwrap().unwrap().payload,
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
    testkit::runtime_api::assert_init_fails_naming(
        BINARY,
        &[("TABLE_NAME", "fan-api")],
        "AUTH_ISSUER",
    )
    .await;
}
