//! The real `local-api` binary under hostile traffic on loopback: token tricks, broken HTTP,
//! oversized and malformed bodies. It must answer each with the JSON error, stay up, keep serving
//! valid requests, and log no token, payload or e-mail address.

mod common;

use std::time::Duration;

use common::LocalApi;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Sends raw bytes, returns whatever comes back (the connection may just be closed).
async fn raw(api: &LocalApi, bytes: &[u8]) -> String {
    let address = api.base.trim_start_matches("http://");
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let _ = stream.write_all(bytes).await;
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut answer)).await;
    String::from_utf8_lossy(&answer).into_owned()
}

#[tokio::test]
async fn hostile_traffic_gets_json_errors_and_the_server_keeps_serving() {
    let api = LocalApi::start().await;
    let client = reqwest::Client::new();
    let link = format!("{}/api/web3-link", api.base);
    let valid = api
        .token("hostile-user", Some("hostile.user@example.com"))
        .await;
    let payload = r#"{"payload":{"wallet":"0xLOCALSECRET"}}"#;

    // Token tricks, with the tokens this server's own key did not sign.
    let mut tokens: Vec<String> = testkit::attacks::bad_tokens()
        .into_iter()
        .map(|(_, t)| t)
        .collect();
    let (head, rest) = valid.split_once('.').unwrap();
    tokens.push(format!("{head}.{}", rest.replacen('e', "f", 1)));
    for token in &tokens {
        let response = client
            .post(&link)
            .bearer_auth(token)
            .header("content-type", "application/json")
            .body(payload)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 401);
        assert!(response.headers().contains_key("www-authenticate"));
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["success"], false);
    }

    // Bodies: invalid UTF-8, over API Gateway's own 10 MiB cap, deep nesting.
    let cases: Vec<(Vec<u8>, u16)> = vec![
        (b"{\"payload\":\"\xff\xfe\"}".to_vec(), 400),
        (vec![b'['; 11 * 1024 * 1024], 413),
        (
            format!(r#"{{"payload":{}}}"#, "[".repeat(60_000)).into_bytes(),
            400,
        ),
    ];
    for (body, status) in cases {
        let response = client
            .post(&link)
            .bearer_auth(&valid)
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), status);
        assert_eq!(response.headers()["content-type"], "application/json");
    }

    // Broken HTTP: the server answers 4xx or hangs up, and stays up.
    for bytes in [
        &b"GARBAGE\r\n\r\n"[..],
        b"GET /api/packs HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n",
        b"POST /api/web3-link HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        b"POST /api/web3-link HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"payload\"",
        b"\x00\x01\x02\x03\xff\xfe\r\n\r\n",
    ] {
        let answer = raw(&api, bytes).await;
        assert!(answer.is_empty() || answer.starts_with("HTTP/1.1 4"), "{answer}");
    }
    let huge_header = format!(
        "GET /api/packs HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\n\r\n",
        "a".repeat(200_000)
    );
    let answer = raw(&api, huge_header.as_bytes()).await;
    assert!(
        answer.is_empty() || answer.starts_with("HTTP/1.1 4"),
        "{answer}"
    );

    // Still up, still serving.
    let response = client
        .get(format!("{}/api/packs", api.base))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let response = client
        .post(&link)
        .bearer_auth(&valid)
        .header("content-type", "application/json")
        .body(payload)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);

    let logs = api.logs();
    assert!(
        logs.contains("web3 link saved"),
        "debug logs were captured:\n{logs}"
    );
    for secret in tokens.iter().filter(|t| t.len() > 16).chain([&valid]) {
        assert!(
            !logs.contains(secret.as_str()),
            "a token was logged:\n{logs}"
        );
        let signature = secret.rsplit('.').next().unwrap();
        assert!(
            signature.len() < 16 || !logs.contains(signature),
            "a signature was logged"
        );
    }
    for secret in ["0xLOCALSECRET", "hostile.user@example.com"] {
        assert!(!logs.contains(secret), "{secret} was logged:\n{logs}");
    }
}

/// `--dynamodb` serves only a table on this machine, as the local identity provider signs a token
/// for any user; and a `TABLE_NAME` left in the environment (for seed-packs or cash-credit) does
/// not switch the store.
#[tokio::test]
async fn only_a_dynamodb_on_this_machine_is_served() {
    let state = std::env::temp_dir().join(format!("fan-api-remote-{}", std::process::id()));
    let local_api = |args: &[&str]| {
        let mut command = tokio::process::Command::new(common::BINARY);
        command
            .args(["--port", "0"])
            .args(args)
            .env("TABLE_NAME", "fan-api")
            .env(
                "AWS_ENDPOINT_URL_DYNAMODB",
                "https://dynamodb.eu-west-1.amazonaws.com",
            )
            .env("FAN_API_STATE_DIR", &state)
            .kill_on_drop(true);
        command
    };
    let refused = tokio::time::timeout(
        std::time::Duration::from_secs(30),
        local_api(&["--dynamodb"]).output(),
    )
    .await
    .expect("refused at start, not served")
    .unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "{stderr}");
    assert!(
        stderr.contains("AWS_ENDPOINT_URL_DYNAMODB") && stderr.contains("loopback"),
        "{stderr}"
    );

    let mut served = local_api(&[])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut lines =
        tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(served.stdout.take().unwrap()));
    let mut banner = String::new();
    for _ in 0..2 {
        let line = tokio::time::timeout(std::time::Duration::from_secs(30), lines.next_line())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        banner.push_str(&line);
    }
    assert!(banner.contains("store: in memory"), "{banner}");
}
