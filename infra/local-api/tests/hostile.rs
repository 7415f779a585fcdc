//! The real `local-api` binary under hostile traffic on loopback: token tricks, broken HTTP,
//! oversized and malformed bodies. It must answer each with the JSON error, stay up, keep serving
//! valid requests, and log no token, payload or e-mail address.

use crate::common;

use std::time::Duration;

use common::{LocalApi, answer_before_the_body, closed_within};
use serde_json::Value;

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
        let answer = api.raw(bytes).await;
        assert!(answer.is_empty() || answer.starts_with("HTTP/1.1 4"), "{answer}");
    }
    let huge_header = format!(
        "GET /api/packs HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\n\r\n",
        "a".repeat(200_000)
    );
    let answer = api.raw(huge_header.as_bytes()).await;
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

/// Stalled clients cannot hold the server: a request whose headers never end is closed after
/// the header timeout, and past the connection cap a new connection is closed at once.
#[tokio::test]
async fn stalled_connections_are_closed_and_capped() {
    let api = LocalApi::start_with(&[
        ("LOCAL_API_HEADER_TIMEOUT_MS", "500"),
        ("LOCAL_API_MAX_CONNECTIONS", "3"),
    ])
    .await;
    // A connection that sends nothing at all is held to the same deadline.
    for (stalled, what) in [
        (
            &b"GET /api/packs HTTP/1.1\r\nHost: x\r\n"[..],
            "headers that never end",
        ),
        (b"", "nothing sent"),
    ] {
        let mut stalled = api.send(stalled).await;
        assert!(
            closed_within(&mut stalled, Duration::from_secs(3))
                .await
                .is_some(),
            "{what}: closed after the header timeout"
        );
    }
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(api.send(b"GET /api/packs HTTP/1.1\r\n").await);
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    let mut fourth = api.send(b"").await;
    assert!(
        closed_within(&mut fourth, Duration::from_millis(300))
            .await
            .is_some(),
        "past the cap a connection is closed at once"
    );
    drop(held);
    tokio::time::sleep(Duration::from_millis(700)).await;
    let answer = api
        .raw(b"GET /api/packs HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}

/// A caller whose token holds still cannot hold a connection with a body that never ends: past
/// the body deadline it gets the JSON 400 and the connection is closed.
#[tokio::test]
async fn a_body_that_never_ends_is_cut_off() {
    let api = LocalApi::start_with(&[("LOCAL_API_BODY_TIMEOUT_MS", "500")]).await;
    let token = api.token("slow", None).await;
    let request = format!(
        "POST /api/web3-link HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"payload\""
    );
    let mut stream = api.send(request.as_bytes()).await;
    let answer = closed_within(&mut stream, Duration::from_secs(3))
        .await
        .expect("closed after the body deadline");
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(answer.contains("\"code\":\"invalid_body\""), "{answer}");
}

/// A body announced for an unrouted path or without a valid token is never read: the 404 or
/// 401 comes at once, while 9 MiB are still to come.
#[tokio::test]
async fn a_body_the_server_would_refuse_is_not_read() {
    let api = LocalApi::start().await;
    let bad_token = testkit::tokens::token("x", None);
    for (head, status, code) in [
        ("POST /nowhere HTTP/1.1\r\n".to_owned(), "404", "not_found"),
        (
            "POST /api/web3-link HTTP/1.1\r\n".to_owned(),
            "401",
            "missing_token",
        ),
        (
            format!("POST /api/web3-link HTTP/1.1\r\nAuthorization: Bearer {bad_token}\r\n"),
            "401",
            "invalid_token",
        ),
    ] {
        let request = format!(
            "{head}Host: x\r\nContent-Type: application/json\r\nContent-Length: 9437184\r\n\r\n{{\"payload\":"
        );
        let mut stream = api.send(request.as_bytes()).await;
        let answer = answer_before_the_body(&mut stream, &head).await;
        assert!(
            answer.starts_with(&format!("HTTP/1.1 {status}")),
            "{head}: {answer}"
        );
        assert!(
            answer.contains(&format!("\"code\":\"{code}\"")),
            "the handler's JSON error: {answer}"
        );
    }
}

/// A chunked body that does not parse is the JSON 400, not a 413.
#[tokio::test]
async fn a_malformed_chunked_body_is_a_json_400() {
    let api = LocalApi::start().await;
    let token = api.token("chunky", None).await;
    let answer = api.raw(format!(
            "POST /api/web3-link HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\nzz\r\nnot a chunk\r\n0\r\n\r\n"
        )
        .as_bytes(),
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(answer.contains("\"code\":\"invalid_body\""), "{answer}");
}

/// local-api routes and reads headers as API Gateway does: a trailing slash matches no route (the
/// `$default` route's 404, never the list of the path without it, nor a 405 whose `Allow` names
/// a method that 404s too), and a header sent twice reaches the handler joined with a comma.
#[tokio::test]
async fn routing_and_repeated_headers_follow_api_gateway() {
    let api = LocalApi::start().await;
    let client = reqwest::Client::new();
    let packs: Value = client
        .get(format!("{}/api/packs?limit=1", api.base))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = packs["packs"][0]["id"].as_str().unwrap();
    let token = api.token("twice", None).await;
    for (method, path) in [
        (reqwest::Method::GET, format!("/api/packs/{id}/")),
        (reqwest::Method::POST, "/api/web3-link/".to_owned()),
        (reqwest::Method::GET, "/api/packs/".to_owned()),
        (reqwest::Method::GET, "/api/webhooks/stripe/".to_owned()),
        (reqwest::Method::POST, "/api/webhooks/stripe/".to_owned()),
    ] {
        let answer = client
            .request(method, format!("{}{path}", api.base))
            .bearer_auth(&token)
            .header("content-type", "application/json")
            .body(r#"{"payload":1}"#)
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 404, "{path}");
        assert!(!answer.headers().contains_key("allow"), "{path}");
        let body: Value = answer.json().await.unwrap();
        assert_eq!(body["error"]["code"], "not_found", "{path}");
    }
    let start = |keys: &[&str]| {
        let mut request = client
            .post(format!("{}/api/packs/{id}/purchases", api.base))
            .bearer_auth(&token);
        for key in keys {
            request = request.header("Idempotency-Key", *key);
        }
        request.send()
    };
    let first = start(&["a", "b"]).await.unwrap();
    assert_eq!(first.status(), 201);
    let joined = start(&["a,b"]).await.unwrap();
    assert_eq!(joined.status(), 201);
    assert_eq!(
        joined
            .headers()
            .get("idempotent-replayed")
            .map(|v| v.to_str().unwrap()),
        Some("true"),
        "two Idempotency-Key headers are the one key `a,b`"
    );
}

/// The three routes that take an `Idempotency-Key` (a purchase start, a top-up, a quest claim)
/// share its check: without one, each answers 400 `missing_idempotency_key` with a message that
/// speaks of none of the other operations.
#[tokio::test]
async fn a_missing_idempotency_key_is_explained_on_each_route_that_takes_one() {
    let api = LocalApi::start().await;
    let client = reqwest::Client::new();
    let token = api.token("keyless", None).await;
    let top_up = serde_json::json!({"amount": 1000, "currency": "USD"});
    for (operation, path, documented, body) in [
        (
            "purchase",
            "/api/packs/nba-rookie-2026/purchases",
            "/api/packs/{packId}/purchases",
            None,
        ),
        (
            "top-up",
            "/api/me/cash/top-ups",
            "/api/me/cash/top-ups",
            Some(&top_up),
        ),
        (
            "claim",
            "/api/quests/first-pack/claim",
            "/api/quests/{questId}/claim",
            None,
        ),
    ] {
        let mut request = client
            .post(format!("{}{path}", api.base))
            .bearer_auth(&token);
        if let Some(body) = body {
            request = request.json(body);
        }
        let (status, answer) = api.call(request, "post", documented).await;
        assert_eq!(status, 400, "{path}: {answer}");
        assert_eq!(answer["error"]["code"], "missing_idempotency_key", "{path}");
        let message = answer["error"]["message"].as_str().unwrap().to_lowercase();
        assert!(message.contains("idempotency-key"), "{path}: {message}");
        for other in ["purchase", "top-up", "claim"] {
            if other != operation {
                assert!(
                    !message.contains(other),
                    "{path} speaks of a {other}: {message}"
                );
            }
        }
    }
}

/// Requests hyper refuses before any handler runs get the API's JSON error too, not hyper's
/// empty body: two `Content-Length`s, a raw `"` in the query, a folded header line (400
/// `malformed_request`), headers over 16 KiB (431 `headers_too_large`).
#[tokio::test]
async fn requests_hyper_refuses_get_the_json_error() {
    let api = LocalApi::start().await;
    let big = format!(
        "GET /api/packs HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\n\r\n",
        "a".repeat(20_000)
    );
    for (request, status, code) in [
        (
            "POST /api/web3-link HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}".to_owned(),
            "400",
            "malformed_request",
        ),
        (
            "GET /api/packs?cursor=\"x\" HTTP/1.1\r\nHost: x\r\n\r\n".to_owned(),
            "400",
            "malformed_request",
        ),
        (
            "GET /api/packs HTTP/1.1\r\nHost: x\r\nX-Folded: a\r\n b\r\n\r\n".to_owned(),
            "400",
            "malformed_request",
        ),
        (big, "431", "headers_too_large"),
    ] {
        let answer = api.raw(request.as_bytes()).await;
        assert!(
            answer.starts_with(&format!("HTTP/1.1 {status}")),
            "{request:.60}: {answer}"
        );
        let body = answer.split_once("\r\n\r\n").map_or("", |(_, body)| body);
        let body: Value = serde_json::from_str(body).unwrap_or_else(|_| panic!("{answer}"));
        assert_eq!(body["success"], false);
        assert_eq!(body["error"]["code"], code, "{request:.60}");
    }
    let answer = api
        .raw(b"GET /api/packs HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}
