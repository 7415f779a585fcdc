//! What a body may cost the real `local-api` binary, on the two routes without a session token:
//! the local Stripe's `POST /local/stripe/v1/checkout/sessions` checks the key before it reads
//! anything and reads at most its small form cap, and Stripe's webhook route answers 413 from a
//! `Content-Length` over the handler's limit at once and stops reading a chunked body just past
//! it. Each answer comes while the client still has body to send.

use crate::common;

use std::time::Duration;

use api::http::request::DEFAULT_MAX_BODY_BYTES;
use common::{LocalApi, answer_before_the_body, closed_within};
use local_api::checkout::{MAX_FORM_BYTES, SECRET_KEY};
use serde_json::Value;
use tokio::io::AsyncWriteExt;

const SESSIONS: &str = "/local/stripe/v1/checkout/sessions";
const WEBHOOK: &str = "/api/webhooks/stripe";

/// The JSON body of a whole answer (head and body).
fn json_body(answer: &str) -> Value {
    let body = answer.split_once("\r\n\r\n").map_or("", |(_, body)| body);
    serde_json::from_str(body).unwrap_or_else(|_| panic!("{answer}"))
}

/// Sends the head of a POST to `path` with `headers`, and none of its body.
async fn post_head(api: &LocalApi, path: &str, headers: &str) -> tokio::net::TcpStream {
    api.send(format!("POST {path} HTTP/1.1\r\nHost: x\r\n{headers}\r\n").as_bytes())
        .await
}

/// Sends 1 KiB chunks until more than `limit` bytes are out, and not the chunk that ends the body.
async fn send_chunks_past(stream: &mut tokio::net::TcpStream, limit: usize) {
    let chunk = format!("400\r\n{}\r\n", "a".repeat(0x400));
    for _ in 0..=limit / 0x400 {
        stream.write_all(chunk.as_bytes()).await.unwrap();
    }
}

#[tokio::test]
async fn the_local_stripe_checks_the_key_before_the_body_and_caps_the_form() {
    let api = LocalApi::start().await;
    let form = "Content-Type: application/x-www-form-urlencoded\r\n";
    let good = format!("Authorization: Bearer {SECRET_KEY}\r\n");
    for (what, headers, status, code) in [
        (
            "no key, 9 MiB announced",
            format!("{form}Content-Length: 9437184\r\n"),
            "401",
            "api_key_invalid",
        ),
        (
            "a wrong key, 9 MiB announced",
            format!("Authorization: Bearer sk_wrong\r\n{form}Content-Length: 9437184\r\n"),
            "401",
            "api_key_invalid",
        ),
        (
            "the key, a form over the cap announced",
            format!("{good}{form}Content-Length: {}\r\n", MAX_FORM_BYTES + 1),
            "413",
            "request_too_large",
        ),
    ] {
        let mut stream = post_head(&api, SESSIONS, &headers).await;
        let answer = answer_before_the_body(&mut stream, what).await;
        assert!(
            answer.starts_with(&format!("HTTP/1.1 {status}")),
            "{what}: {answer}"
        );
        let error = &json_body(&answer)["error"];
        assert_eq!(
            (error["type"].as_str(), error["code"].as_str()),
            (Some("invalid_request_error"), Some(code)),
            "{what}: Stripe's error shape: {answer}"
        );
        assert!(error["message"].is_string(), "{answer}");
    }

    // Chunked, with the key: read no further than just past the cap, answered before its end.
    let mut stream = post_head(
        &api,
        SESSIONS,
        &format!("{good}{form}Transfer-Encoding: chunked\r\n"),
    )
    .await;
    send_chunks_past(&mut stream, MAX_FORM_BYTES).await;
    let answer = answer_before_the_body(&mut stream, "a chunked form over the cap").await;
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
}

/// A caller with the key cannot hold a connection with a form that never ends: past the body
/// timeout it gets Stripe's 400 and the connection is closed.
#[tokio::test]
async fn a_stalled_form_does_not_hold_the_connection() {
    let api = LocalApi::start_with(&[("LOCAL_API_BODY_TIMEOUT_MS", "500")]).await;
    let mut stream = post_head(
        &api,
        SESSIONS,
        &format!(
            "Authorization: Bearer {SECRET_KEY}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n"
        ),
    )
    .await;
    let answer = closed_within(&mut stream, Duration::from_secs(5))
        .await
        .expect("closed after the body timeout");
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert_eq!(
        json_body(&answer)["error"]["type"],
        "invalid_request_error",
        "{answer}"
    );
}

#[tokio::test]
async fn the_webhook_refuses_a_body_over_its_limit_without_keeping_it() {
    let api = LocalApi::start().await;
    let json = "Content-Type: application/json\r\nStripe-Signature: t=1,v1=00\r\n";
    let mut stream = post_head(
        &api,
        WEBHOOK,
        &format!("{json}Content-Length: {}\r\n", DEFAULT_MAX_BODY_BYTES + 1),
    )
    .await;
    let answer = answer_before_the_body(&mut stream, "a Content-Length over the limit").await;
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert_eq!(json_body(&answer)["error"]["code"], "payload_too_large");

    // Chunked: cut just past the limit, answered while the client is still sending.
    let mut stream = post_head(
        &api,
        WEBHOOK,
        &format!("{json}Transfer-Encoding: chunked\r\n"),
    )
    .await;
    send_chunks_past(&mut stream, DEFAULT_MAX_BODY_BYTES).await;
    let answer = answer_before_the_body(&mut stream, "a chunked body over the limit").await;
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert_eq!(json_body(&answer)["error"]["code"], "payload_too_large");
}
