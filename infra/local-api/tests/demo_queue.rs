//! scripts/local's waiting room: the shipped queued pack's line is open as local-api starts (its
//! seed times are months away), so the demo user joins it at once; every answer checked against
//! `openapi.yaml`. (The draw follows 5 minutes after the close, as deployed: the binaries'
//! end-to-end test, `functions/tests/queued_drop.rs`, waits it out.)

use crate::common;

use common::LocalApi;
use domain::timestamp::Timestamp;
use serde_json::Value;

const QUEUE: &str = "/api/packs/nba-all-star-2027/queue";
/// The operations' paths in the document.
const DOCUMENTED: &str = "/api/packs/{packId}/queue";

/// `method` on `QUEUE` + `tail` as `token`, checked against the document.
async fn send(api: &LocalApi, token: &str, method: &str, tail: &str) -> (u16, Value) {
    let client = reqwest::Client::new();
    let url = format!("{}{QUEUE}{tail}", api.base);
    // The local siteverify stand-in passes any token and reports what precedes its first `.`
    // as the action; each token is spent once, so the fan's name makes it their own.
    let request = match method {
        "post" => client.post(url).header(
            "human-check",
            "join_nba-all-star-2027.DUMMY.TOKEN.demo-user",
        ),
        _ => client.get(url),
    };
    api.call(
        request.bearer_auth(token),
        method,
        &format!("{DOCUMENTED}{tail}"),
    )
    .await
}

#[tokio::test]
async fn the_demo_line_is_open_at_start_and_the_demo_user_joins_it() {
    let api = LocalApi::start_with(&[("LOCAL_API_DEMO_QUEUE_SECONDS", "600")]).await;
    let token = api.token("demo-user", None).await;
    let (status, line) = send(&api, &token, "get", "").await;
    assert_eq!(status, 200, "{line}");
    let line = &line["queue"];
    assert_eq!(line["status"], "open", "{line}");
    let at = |name: &str| Timestamp::parse(line[name].as_str().unwrap()).unwrap();
    let now = Timestamp::now();
    assert!(at("opensAt") <= now && now < at("closesAt"), "{line}");
    assert_eq!(at("opensAt").plus_seconds(600), Some(at("closesAt")));

    // The banner holds the demo user's token once (a session token: three base64url parts, the
    // first `eyJ`, `{"`), and says until when the line is open.
    let banner = api.printed_through("docs/api.md").await;
    let tokens = banner
        .split(|c: char| !(c.is_ascii_alphanumeric() || "-_.".contains(c)))
        .filter(|word| word.starts_with("eyJ") && word.matches('.').count() == 2);
    assert_eq!(tokens.count(), 1, "{banner}");
    let closes_at = line["closesAt"].as_str().unwrap();
    let until = format!("nba-all-star-2027's line is open until {closes_at}");
    assert!(banner.contains(&until), "{banner}");

    let (status, joined) = send(&api, &token, "post", "").await;
    assert_eq!(status, 201, "{joined}");
    assert_eq!(joined["entry"]["status"], "waiting");
    let (status, mine) = send(&api, &token, "get", "/me").await;
    assert_eq!((status, &mine), (200, &joined));
}

#[test]
fn a_bad_demo_line_length_stops_the_start() {
    let api = std::process::Command::new(common::BINARY)
        .args(["--port", "0"])
        .env_remove("TABLE_NAME")
        .env(
            "FAN_API_STATE_DIR",
            std::env::temp_dir().join("fan-api-demo-queue"),
        )
        .env("LOCAL_API_DEMO_QUEUE_SECONDS", "0")
        .output()
        .unwrap();
    assert!(!api.status.success());
    let stderr = String::from_utf8_lossy(&api.stderr);
    assert!(stderr.contains("LOCAL_API_DEMO_QUEUE_SECONDS"), "{stderr}");
}
