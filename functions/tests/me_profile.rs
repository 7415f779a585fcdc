//! The real `me-profile` binary (GET and PATCH /api/me), run through a Lambda Runtime API
//! emulator against moto_server, with its JWKS from a loopback stub.

use serde_json::Value;
use store::catalog::SeedCatalog;
use testkit::events::ApiEvent;
use testkit::purchases::{Function, PurchaseEnv, fixture};
use testkit::tokens::token;

const BINARY: &str = env!("CARGO_BIN_EXE_me-profile");

fn patch(body: &str, user: &str) -> ApiEvent {
    ApiEvent::new("PATCH", "/api/me")
        .bearer(&token(user, None))
        .json(body)
}

async fn spawn(env: &PurchaseEnv) -> Function {
    env.spawn(BINARY, &[]).await
}

#[tokio::test]
async fn creates_names_and_refuses_what_another_fan_holds() {
    let env = PurchaseEnv::new().await;
    env.store
        .put_team(&testkit::profiles::team("nba-lal"))
        .await
        .unwrap();
    let function = spawn(&env).await;
    let me = function
        .call(&ApiEvent::get("/api/me").bearer(&token("fan-1", Some("one@example.com"))))
        .await;
    assert_eq!(me.status, 200, "{me:?}");
    assert_eq!(me.body["user"]["id"], "fan-1");
    assert_eq!(me.body["user"]["email"], "one@example.com");
    assert_eq!(me.body["user"]["displayName"], Value::Null);

    let named = function
        .call(&patch(
            r#"{"displayName": "Zoe.Hoops", "favoriteTeamId": "nba-lal"}"#,
            "fan-1",
        ))
        .await;
    assert_eq!(named.status, 200, "{named:?}");
    assert_eq!(named.body["user"]["displayName"], "Zoe.Hoops");
    assert_eq!(named.body["user"]["email"], "one@example.com");
    let taken = function
        .call(&patch(r#"{"displayName": "zoe.hoops"}"#, "fan-2"))
        .await;
    assert_eq!(
        (taken.status, taken.code()),
        (409, Some("display_name_taken"))
    );
    let unknown = function
        .call(&patch(r#"{"favoriteTeamId": "nfl-nope"}"#, "fan-2"))
        .await;
    assert_eq!(
        (unknown.status, unknown.code()),
        (422, Some("team_not_found"))
    );
    let bad = function
        .call(&patch(
            r#"{"avatarUrl": "http://a.example/x.png"}"#,
            "fan-2",
        ))
        .await;
    assert_eq!((bad.status, bad.code()), (400, Some("invalid_body")));
    let two = function
        .call(&ApiEvent::get("/api/me").bearer(&token("fan-2", None)))
        .await;
    assert_eq!(two.body["user"]["displayName"], Value::Null);
    assert_eq!(two.body["user"]["favoriteTeamId"], Value::Null);
    assert_eq!(two.body["user"]["avatarUrl"], Value::Null);
}

/// `infra/events/me-profile.json` and `me-profile.patch.json` (with a token for `me`).
#[tokio::test]
async fn the_event_fixtures_answer() {
    let env = PurchaseEnv::new().await;
    let function = spawn(&env).await;
    let me = function
        .call_json(fixture("me-profile", Some(&token("me", None))))
        .await;
    assert_eq!(me.status, 200, "{me:?}");
    let patched = function
        .call_json(fixture("me-profile.patch", Some(&token("me", None))))
        .await;
    assert_eq!(patched.status, 200, "{patched:?}");
    assert_eq!(patched.body["user"]["displayName"], "Zoe.Hoops");
}

testkit::signed_in_function_basics!(BINARY, spawn, "/api/me");
