//! The real `events` binary (GET /api/me/events, GET /api/events, GET /api/events/{eventId}),
//! run through a Lambda Runtime API emulator against moto_server: a fan reads their own events,
//! operators (IAM, as API Gateway's authorizer passes the caller on) every event, each the exact
//! bytes stored.

use domain::events::Subject;
use serde_json::{Value, json};
use store::events::ListSubjectEvents;
use testkit::events::ApiEvent;
use testkit::purchases::{Function, PurchaseEnv};
use testkit::tokens::token;

const BINARY: &str = env!("CARGO_BIN_EXE_events");
const OPERATOR: &str = "arn:aws:iam::123456789012:role/fan-api-operator";

fn identity(n: u32) -> String {
    format!(r#"{{"address":"0x{n:040x}"}}"#)
}

async fn linked(env: &PurchaseEnv, fan: &str, n: u32) {
    let at = domain::timestamp::Timestamp::now();
    testkit::wallets::link(&env.store, &testkit::ids::user(fan), &identity(n), at, None)
        .await
        .unwrap();
}

async fn mine(function: &Function, fan: &str, query: &str) -> testkit::purchases::Answer {
    let event = ApiEvent::get("/api/me/events")
        .query(query)
        .bearer(&token(fan, None));
    function.call(&event).await
}

#[tokio::test]
async fn a_fan_reads_their_own_events_in_sequence_from_after() {
    let env = PurchaseEnv::new().await;
    linked(&env, "fan-1", 1).await;
    linked(&env, "fan-1", 2).await;
    linked(&env, "fan-2", 3).await;
    let function = env.spawn(BINARY, &[]).await;

    let all = mine(&function, "fan-1", "").await;
    assert_eq!(all.status, 200, "{all:?}");
    let events = all.body["events"].as_array().unwrap();
    let sequences: Vec<&Value> = events.iter().map(|e| &e["sequence"]).collect();
    assert_eq!(sequences, [&json!(1), &json!(2)]);
    assert_eq!(events[0]["type"], "wallet.linked");
    assert_eq!(events[0]["subject"], json!({"kind": "fan", "id": "fan-1"}));
    assert_eq!(all.body["nextAfter"], 2);
    assert_eq!(all.header("cache-control"), Some("no-store"));

    let rest = mine(&function, "fan-1", "after=1&limit=5").await;
    assert_eq!(rest.body["events"].as_array().unwrap().len(), 1);
    assert_eq!(rest.body["events"][0]["sequence"], 2);
    let caught_up = mine(&function, "fan-1", "after=2").await;
    assert_eq!(caught_up.body, json!({"events": [], "nextAfter": 2}));
    let other = mine(&function, "fan-2", "").await;
    assert_eq!(other.body["events"].as_array().unwrap().len(), 1);

    for bad in ["after=-1", "after=x", "limit=0", "after=1&after=2"] {
        let answer = mine(&function, "fan-1", bad).await;
        assert_eq!(answer.status, 400, "{bad}: {answer:?}");
    }
    let anonymous = function.call(&ApiEvent::get("/api/me/events")).await;
    assert_eq!(anonymous.status, 401);
}

#[tokio::test]
async fn operators_signed_by_iam_read_every_event_as_stored_and_no_one_else_does() {
    let env = PurchaseEnv::new().await;
    linked(&env, "fan-1", 1).await;
    linked(&env, "fan-2", 2).await;
    let function = env.spawn(BINARY, &[]).await;

    // Without the authorizer's caller (a route left without AWS_IAM), or with a fan's token.
    for event in [
        ApiEvent::get("/api/events"),
        ApiEvent::get("/api/events").bearer(&token("fan-1", None)),
    ] {
        let refused = function.call(&event).await;
        assert_eq!(
            (refused.status, refused.code()),
            (403, Some("operator_required")),
            "{refused:?}"
        );
    }

    // From an hour ago: that hour's page, then this hour's (a page never spans two hours).
    let mut page = function
        .call(&ApiEvent::get("/api/events").iam(OPERATOR))
        .await;
    assert_eq!(page.status, 200, "{page:?}");
    if page.body["events"].as_array().unwrap().is_empty() {
        let next = page.body["next"].as_str().unwrap().to_owned();
        assert!(next.starts_with("/api/events?since="), "{next}");
        let (path, query) = next.split_once('?').unwrap();
        page = function
            .call(&ApiEvent::get(path).query(query).iam(OPERATOR))
            .await;
    }
    let events = page.body["events"].as_array().unwrap();
    let fans: Vec<&Value> = events.iter().map(|e| &e["subject"]["id"]).collect();
    assert_eq!(
        fans,
        [&json!("fan-1"), &json!("fan-2")],
        "in id (time) order"
    );
    let next = page.body["next"].as_str().unwrap();
    assert!(next.starts_with("/api/events?after=evt_"), "{next}");

    // One event by id: the very bytes stored, which every delivery of it sends.
    let stored = env
        .store
        .subject_events(&Subject::fan(&testkit::ids::user("fan-1")), 0, 10)
        .await
        .unwrap();
    let path = format!("/api/events/{}", stored[0].id);
    let outcome = function
        .invoke(ApiEvent::get(&path).iam(OPERATOR).to_json())
        .await;
    let (status, body) = testkit::runtime_api::http_parts(&outcome);
    assert_eq!(status, 200);
    assert_eq!(
        body,
        serde_json::from_str::<Value>(&stored[0].body).unwrap()
    );
    let testkit::runtime_api::Outcome::Response(document) = &outcome else {
        panic!("{outcome:?}")
    };
    assert_eq!(
        document["body"].as_str(),
        Some(stored[0].body.as_str()),
        "the stored bytes, not serialised again"
    );

    let unknown = domain::events::EventId::new(domain::timestamp::Timestamp::now());
    let missing = function
        .call(&ApiEvent::get(&format!("/api/events/{unknown}")).iam(OPERATOR))
        .await;
    assert_eq!(
        (missing.status, missing.code()),
        (404, Some("event_not_found"))
    );
}
