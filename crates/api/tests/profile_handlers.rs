//! `GET` and `PATCH /api/me` over API Gateway events on the in-memory store: the profile as the
//! token makes it, each field set, cleared and kept, and every bad input a clear 4xx that writes
//! nothing.

use std::sync::Arc;

use api::http::routes::me_profile_routes;
use api::state::ProfileState;
use serde_json::Value;
use store::MemoryStore;
use store::catalog::SeedCatalog;
use testkit::events::{self, ApiEvent, parts};
use testkit::tokens::token;

fn state(store: MemoryStore) -> Arc<ProfileState<MemoryStore>> {
    Arc::new(ProfileState {
        store,
        verifier: testkit::tokens::verifier(),
        max_body_bytes: 1024,
    })
}

async fn send(state: &Arc<ProfileState<MemoryStore>>, event: ApiEvent) -> (u16, Value) {
    parts(&events::call(me_profile_routes(), state, event.request()).await)
}

async fn get(state: &Arc<ProfileState<MemoryStore>>, fan: &str) -> (u16, Value) {
    send(
        state,
        ApiEvent::get("/api/me").bearer(&token(fan, Some(&format!("{fan}@example.com")))),
    )
    .await
}

async fn patch(state: &Arc<ProfileState<MemoryStore>>, fan: &str, body: &str) -> (u16, Value) {
    send(
        state,
        ApiEvent::new("PATCH", "/api/me")
            .bearer(&token(fan, None))
            .json(body),
    )
    .await
}

fn code(answer: &(u16, Value)) -> (u16, &str) {
    (answer.0, answer.1["error"]["code"].as_str().unwrap_or("-"))
}

#[tokio::test]
async fn the_first_get_answers_the_token_and_nulls() {
    let state = state(MemoryStore::default());
    let (status, body) = get(&state, "auth0|fan").await;
    assert_eq!(status, 200, "{body}");
    let user = &body["user"];
    assert_eq!(user["id"], "auth0|fan");
    assert_eq!(user["email"], "auth0|fan@example.com");
    for field in ["displayName", "avatarUrl", "favoriteTeamId"] {
        assert_eq!(user[field], Value::Null, "{field}");
    }
    assert_eq!(user["createdAt"], user["updatedAt"]);
    assert_eq!(
        body.as_object().unwrap().len(),
        2,
        "the user and their cosmetics"
    );
    assert_eq!(
        body["cosmetics"],
        serde_json::json!({"avatarFrame": null, "lockerTheme": null, "badge": null})
    );
    assert_eq!(user.as_object().unwrap().len(), 7);
    assert_eq!(get(&state, "auth0|fan").await.1, body, "created once");
    let anonymous = send(&state, ApiEvent::get("/api/me")).await;
    assert_eq!(code(&anonymous), (401, "missing_token"));
}

#[tokio::test]
async fn a_patch_sets_clears_and_keeps_and_answers_the_profile() {
    let store = MemoryStore::default();
    store
        .put_team(&testkit::profiles::team("nba-lal"))
        .await
        .unwrap();
    let state = state(store);
    let (status, body) = patch(
        &state,
        "fan-1",
        r#"{"displayName": "Zoe.Hoops", "avatarUrl": "https://cdn.example.com/z.png", "favoriteTeamId": "nba-lal"}"#,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["user"]["displayName"], "Zoe.Hoops");
    assert_eq!(body["user"]["favoriteTeamId"], "nba-lal");
    assert_eq!(get(&state, "fan-1").await.1["user"], body["user"]);
    let (_, cleared) = patch(&state, "fan-1", r#"{"avatarUrl": null}"#).await;
    assert_eq!(cleared["user"]["avatarUrl"], Value::Null);
    assert_eq!(cleared["user"]["displayName"], "Zoe.Hoops");
    assert_eq!(cleared["user"]["favoriteTeamId"], "nba-lal");
}

#[tokio::test]
async fn a_taken_name_is_409_and_an_unknown_team_422_and_neither_writes() {
    let state = state(MemoryStore::default());
    assert_eq!(
        patch(&state, "fan-1", r#"{"displayName": "Alice"}"#)
            .await
            .0,
        200
    );
    let before = get(&state, "fan-2").await.1;
    let taken = patch(
        &state,
        "fan-2",
        r#"{"displayName": "aLiCe", "avatarUrl": "https://a.example/x.png"}"#,
    )
    .await;
    assert_eq!(code(&taken), (409, "display_name_taken"));
    let unknown = patch(
        &state,
        "fan-2",
        r#"{"favoriteTeamId": "nba-nope", "displayName": "Bob"}"#,
    )
    .await;
    assert_eq!(code(&unknown), (422, "team_not_found"));
    assert_eq!(get(&state, "fan-2").await.1, before, "nothing written");
}

#[tokio::test]
async fn bad_input_is_a_clear_4xx_and_writes_nothing() {
    let state = state(MemoryStore::default());
    let before = get(&state, "fan-1").await.1;
    for (body, expected, names) in [
        (r#"{"email": "x@example.com"}"#, (400, "invalid_body"), ""),
        (r#"{"displayName": 5}"#, (400, "invalid_body"), ""),
        (r#"[]"#, (400, "invalid_body"), ""),
        (
            r#"{"displayName": "ab"}"#,
            (400, "invalid_body"),
            "displayName",
        ),
        (
            r#"{"displayName": "twenty-five-characters-xx"}"#,
            (400, "invalid_body"),
            "displayName",
        ),
        (
            r#"{"displayName": "a b c"}"#,
            (400, "invalid_body"),
            "displayName",
        ),
        (
            r#"{"displayName": "Zoë"}"#,
            (400, "invalid_body"),
            "displayName",
        ),
        (
            r#"{"avatarUrl": "http://a.example/x.png"}"#,
            (400, "invalid_body"),
            "avatarUrl",
        ),
        (
            r#"{"favoriteTeamId": "not/a/team"}"#,
            (400, "invalid_body"),
            "favoriteTeamId",
        ),
        ("{", (400, "invalid_json"), ""),
    ] {
        let answer = patch(&state, "fan-1", body).await;
        assert_eq!(code(&answer), expected, "{body}");
        let message = answer.1["error"]["message"].as_str().unwrap();
        assert!(message.contains(names), "{body}: {message}");
    }
    let plain = send(
        &state,
        ApiEvent::new("PATCH", "/api/me")
            .bearer(&token("fan-1", None))
            .header("content-type", "text/plain")
            .body(r#"{"displayName": "Plain"}"#),
    )
    .await;
    assert_eq!(code(&plain), (415, "unsupported_media_type"));
    assert_eq!(get(&state, "fan-1").await.1, before, "nothing written");
    let anonymous = send(
        &state,
        ApiEvent::new("PATCH", "/api/me").json(r#"{"displayName": "Anon"}"#),
    )
    .await;
    assert_eq!(code(&anonymous), (401, "missing_token"));
    // DELETE /api/me is account-deletion's; no function serves PUT /api/me.
    let put = send(
        &state,
        ApiEvent::new("PUT", "/api/me").bearer(&token("fan-1", None)),
    )
    .await;
    assert_eq!(code(&put), (405, "method_not_allowed"));
}

#[tokio::test]
async fn a_long_avatar_url_is_refused_at_2049_bytes() {
    let at = |bytes: usize| {
        let prefix = "https://a.example/";
        format!(
            r#"{{"avatarUrl": "{prefix}{}"}}"#,
            "x".repeat(bytes - prefix.len())
        )
    };
    // A body limit above the URL's: the URL's own limit is what refuses it.
    let big = Arc::new(ProfileState {
        store: MemoryStore::default(),
        verifier: testkit::tokens::verifier(),
        max_body_bytes: 8192,
    });
    assert_eq!(patch(&big, "fan-1", &at(2048)).await.0, 200);
    let over = patch(&big, "fan-1", &at(2049)).await;
    assert_eq!(code(&over), (400, "invalid_body"));
}
