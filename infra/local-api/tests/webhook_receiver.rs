//! `scripts/webhook-receiver`, the local receiver docs/events.md points to: it verifies each
//! delivery with PyPI's standardwebhooks (either secret of a rotation), answers 204, refuses a
//! bad signature with 400, and flags a gap or a repeat in a subject's sequence.

use std::process::Stdio;

use domain::webhooks::{SigningSecret, signature_header};
use tokio::io::{AsyncBufReadExt, BufReader};

fn event(id: &str, sequence: u64) -> String {
    format!(
        r#"{{"id":"{id}","type":"wallet.linked","occurredAt":"2026-11-29T08:00:00.000Z","subject":{{"kind":"fan","id":"fan-1"}},"sequence":{sequence},"apiVersion":"2026-11-29","data":{{"walletId":"w1","provider":"web3","added":true}}}}"#
    )
}

#[tokio::test]
async fn the_receiver_verifies_prints_and_flags_a_gap() {
    let (old, old_text) = SigningSecret::generate().unwrap();
    let (new, new_text) = SigningSecret::generate().unwrap();
    let port = testkit::free_port();
    let mut receiver = tokio::process::Command::new("scripts/webhook-receiver")
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .args(["--secret", &new_text, "--secret", &old_text])
        .args(["--port", &port.to_string()])
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("scripts/webhook-receiver starts");
    let mut lines = BufReader::new(receiver.stdout.take().unwrap()).lines();
    let first = lines.next_line().await.unwrap().unwrap();
    assert!(first.contains(&format!("127.0.0.1:{port}")), "{first}");

    let client = reqwest::Client::new();
    let send = |id: &'static str, sequence: u64, secrets: Vec<SigningSecret>| {
        let body = event(id, sequence);
        let now = domain::timestamp::unix_now();
        let signature = signature_header(&secrets, id, now, body.as_bytes());
        client
            .post(format!("http://127.0.0.1:{port}/"))
            .header("webhook-id", id)
            .header("webhook-timestamp", now.to_string())
            .header("webhook-signature", signature)
            .header("content-type", "application/json")
            .body(body)
            .send()
    };
    let status = |r: reqwest::Response| r.status().as_u16();
    assert_eq!(
        status(
            send("evt_a", 1, vec![new.clone(), old.clone()])
                .await
                .unwrap()
        ),
        204
    );
    let printed = lines.next_line().await.unwrap().unwrap();
    assert!(
        printed.starts_with("wallet.linked evt_a fan:fan-1 #1 "),
        "{printed}"
    );
    // Signed with the old secret alone (before the rotation reached the sender): still verified.
    assert_eq!(status(send("evt_c", 3, vec![old]).await.unwrap()), 204);
    let gap = lines.next_line().await.unwrap().unwrap();
    assert!(gap.contains("#3 (GAP: expected 2"), "{gap}");
    let (stranger, _) = SigningSecret::generate().unwrap();
    assert_eq!(status(send("evt_d", 4, vec![stranger]).await.unwrap()), 400);
    let refused = lines.next_line().await.unwrap().unwrap();
    assert!(refused.starts_with("REFUSED evt_d"), "{refused}");
}

/// local-api delivers in-process: an endpoint an operator creates (with the printed key) gets
/// the next change's event, signed with its secret, which the receiver verifies and prints.
#[tokio::test]
async fn local_api_delivers_a_change_to_the_receiver_an_operator_subscribed() {
    const KEY: &str = "opk_local_receiver_test_key";
    let api = crate::common::LocalApi::start_with(&[("LOCAL_API_OPERATOR_KEY", KEY)]).await;
    let port = testkit::free_port();
    let client = reqwest::Client::new();
    let created: serde_json::Value = client
        .post(format!("{}/api/webhooks/endpoints", api.base))
        .bearer_auth(KEY)
        .json(
            &serde_json::json!({"url": format!("http://127.0.0.1:{port}/hooks"),
            "eventTypes": ["wallet.linked"], "description": "the local receiver"}),
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let secret = created["secret"]
        .as_str()
        .expect("the secret, shown once")
        .to_owned();
    let mut receiver = tokio::process::Command::new("scripts/webhook-receiver")
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .args(["--secret", &secret, "--port", &port.to_string()])
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(receiver.stdout.take().unwrap()).lines();
    lines.next_line().await.unwrap().unwrap();
    let token = api.token("hooked-fan", None).await;
    let linked = client
        .post(format!("{}/api/web3-link", api.base))
        .bearer_auth(&token)
        .json(&serde_json::json!({"payload": {"address": "0xhook"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(linked.status(), 200);
    let printed = tokio::time::timeout(std::time::Duration::from_secs(20), lines.next_line())
        .await
        .expect("delivered within 20 s")
        .unwrap()
        .unwrap();
    assert!(
        printed.starts_with("wallet.linked evt_") && printed.contains("fan:hooked-fan #1 "),
        "{printed}"
    );
}
