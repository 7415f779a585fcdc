//! `scripts/webhook-receiver`, the local receiver docs/events.md points to: it verifies each
//! delivery with PyPI's standardwebhooks (either secret of a rotation), answers 204, refuses a
//! bad signature with 400, and flags a gap or a repeat in a subject's sequence.

use std::process::Stdio;
use std::time::Duration;

use domain::webhooks::{SigningSecret, signature_header};
use testkit::webhook_receiver::{Answer, WebhookReceiver};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::common::LocalApi;

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

/// An endpoint for `url` receiving `wallet.linked`, created with the operator `key`: its id and
/// its secret (shown once).
async fn subscribe(api: &LocalApi, key: &str, url: &str) -> (String, String) {
    let request = reqwest::Client::new()
        .post(format!("{}/api/webhooks/endpoints", api.base))
        .bearer_auth(key)
        .json(
            &serde_json::json!({"url": url, "eventTypes": ["wallet.linked"],
            "description": "the local receiver"}),
        );
    let (status, created) = api.call(request, "post", "/api/webhooks/endpoints").await;
    assert_eq!(status, 201, "{created}");
    let text = |field: &str| created[field].as_str().unwrap().to_owned();
    (text("id"), text("secret"))
}

/// Links a wallet for `fan`: a `wallet.linked` event.
async fn link_wallet(api: &LocalApi, fan: &str, address: &str) {
    let request = reqwest::Client::new()
        .post(format!("{}/api/web3-link", api.base))
        .bearer_auth(api.token(fan, None).await)
        .json(&serde_json::json!({"payload": {"address": address}}));
    let (status, body) = api.call(request, "post", "/api/web3-link").await;
    assert_eq!(status, 200, "{body}");
}

/// local-api delivers in-process: an endpoint an operator creates (with the printed key) gets
/// the next change's event, signed with its secret, which the receiver verifies and prints.
#[tokio::test]
async fn local_api_delivers_a_change_to_the_receiver_an_operator_subscribed() {
    const KEY: &str = "opk_local_receiver_test_key";
    let api = LocalApi::start_with(&[("LOCAL_API_OPERATOR_KEY", KEY)]).await;
    let port = testkit::free_port();
    let (_, secret) = subscribe(&api, KEY, &format!("http://127.0.0.1:{port}/hooks")).await;
    let mut receiver = tokio::process::Command::new("scripts/webhook-receiver")
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .args(["--secret", &secret, "--port", &port.to_string()])
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(receiver.stdout.take().unwrap()).lines();
    lines.next_line().await.unwrap().unwrap();
    link_wallet(&api, "hooked-fan", "0xhook").await;
    let printed = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
        .await
        .expect("delivered within 20 s")
        .unwrap()
        .unwrap();
    assert!(
        printed.starts_with("wallet.linked evt_") && printed.contains("fan:hooked-fan #1 "),
        "{printed}"
    );
}

/// The statuses of the attempts of `endpoint`'s delivery of `event_id` once it is delivered
/// (waits up to 60 s; the real schedule's third attempt would come 5 minutes after the second).
async fn statuses_once_delivered(
    api: &LocalApi,
    key: &str,
    endpoint: &str,
    event_id: &str,
) -> Vec<u64> {
    for _ in 0..600 {
        let request = reqwest::Client::new()
            .get(format!(
                "{}/api/webhooks/endpoints/{endpoint}/deliveries",
                api.base
            ))
            .bearer_auth(key);
        let (_, listed) = api
            .call(
                request,
                "get",
                "/api/webhooks/endpoints/{endpointId}/deliveries",
            )
            .await;
        let delivered = listed["deliveries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["eventId"] == event_id && d["status"] == "delivered");
        if let Some(delivery) = delivered {
            let attempts = delivery["attempts"].as_array().unwrap();
            return attempts
                .iter()
                .map(|a| a["status"].as_u64().unwrap())
                .collect();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{event_id} not delivered within 60 s");
}

/// `LOCAL_API_WEBHOOK_RETRY_SCALE` divides local-api's retries (the sender's due time with
/// them): a receiver failing twice then answering 204 gets its 3 attempts within seconds, for
/// a change's event (the journal's follower) and an operator's test event (the routes' queue).
#[tokio::test]
async fn local_api_retries_on_the_schedule_divided_by_its_scale() {
    const KEY: &str = "opk_local_retry_scale_key";
    let receiver = WebhookReceiver::start(Answer::status(204)).await;
    let api = LocalApi::start_with(&[
        ("LOCAL_API_OPERATOR_KEY", KEY),
        ("LOCAL_API_WEBHOOK_RETRY_SCALE", "600"),
    ])
    .await;
    let printed = api.printed_line("LOCAL_API_WEBHOOK_RETRY_SCALE").await;
    assert!(printed.contains("the schedule divided by 600"), "{printed}");
    let (endpoint, _) = subscribe(&api, KEY, &receiver.url("/hooks")).await;

    receiver.script([Answer::status(500), Answer::status(500)]);
    link_wallet(&api, "retried-fan", "0xretry").await;
    let first_attempt = async {
        loop {
            let first = receiver.received().first().cloned();
            if let Some(id) = first.and_then(|r| r.header("webhook-id").map(str::to_owned)) {
                break id;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    let linked_event = tokio::time::timeout(Duration::from_secs(20), first_attempt)
        .await
        .expect("the first attempt within 20 s");
    let statuses = statuses_once_delivered(&api, KEY, &endpoint, &linked_event).await;
    assert_eq!(statuses, [500, 500, 204]);
    let ids: Vec<_> = receiver
        .received()
        .iter()
        .map(|request| request.header("webhook-id").unwrap().to_owned())
        .collect();
    assert_eq!(ids, [linked_event.as_str(); 3]);

    receiver.script([Answer::status(500), Answer::status(500)]);
    let request = reqwest::Client::new()
        .post(format!(
            "{}/api/webhooks/endpoints/{endpoint}/test",
            api.base
        ))
        .bearer_auth(KEY);
    let (status, queued) = api
        .call(request, "post", "/api/webhooks/endpoints/{endpointId}/test")
        .await;
    assert_eq!(status, 202, "{queued}");
    // `dlv_<the event's ULID>_<the endpoint's>`
    let delivery = queued["deliveryId"].as_str().unwrap();
    let test_event = format!("evt_{}", &delivery[4..30]);
    let statuses = statuses_once_delivered(&api, KEY, &endpoint, &test_event).await;
    assert_eq!(statuses, [500, 500, 204]);
}
