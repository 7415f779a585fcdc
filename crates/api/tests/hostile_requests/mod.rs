//! Hostile requests against both handlers: every token trick, every body trick, every bad query,
//! and property tests at scale over token, header, body, cursor and limit parsing. Each must give
//! its precise 4xx with the JSON error body (never a panic, never a 5xx, never a 200 it should not
//! be), a valid request must still work afterwards, and the logs must hold no secret.

use api::handlers::list_packs::ListPacksState;
use api::handlers::web3_link::LinkState;
use api::handlers::web3_link::parse_link_body;
use api::http::query::parse_limit;
use api::http::request::DEFAULT_MAX_BODY_BYTES;
use api::http::routes::{list_packs_routes, web3_link_routes};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use domain::packs::listing::{InvalidCursor, ListingKey};
use domain::timestamp::Timestamp;
use proptest::prelude::*;
use serde_json::Value;
use std::sync::Arc;
use store::MemoryStore;
use testkit::events::{ApiEvent, call, parts};
use testkit::packs::active;
use testkit::tokens::token;

fn link_state() -> Arc<LinkState<MemoryStore>> {
    testkit::link_state(MemoryStore::default())
}

fn list_state() -> Arc<ListPacksState<MemoryStore>> {
    let packs: Vec<_> = (0..5)
        .map(|i| active(&format!("p{i}"), 10 * (i + 1)))
        .collect();
    Arc::new(ListPacksState {
        store: MemoryStore::with_packs(&packs),
        cursors: testkit::cursor_signer(),
    })
}

/// Status and error code (`"ok"` for a success), after checking the response is JSON with the
/// API's error shape on failure.
fn outcome(response: &lambda_http::Response<lambda_http::Body>) -> (u16, String) {
    assert_eq!(response.headers()["content-type"], "application/json");
    let (status, body) = parts(response);
    if status == 200 {
        return (status, "ok".into());
    }
    assert_eq!(body["success"], false, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()),
        "{body}"
    );
    (
        status,
        body["error"]["code"]
            .as_str()
            .expect("error code")
            .to_owned(),
    )
}

fn link_event(authorization: Option<&str>) -> ApiEvent {
    let event = ApiEvent::post("/api/web3-link");
    let event = match authorization {
        Some(value) => event.header("authorization", value),
        None => event,
    };
    event.json(r#"{"payload":{"wallet":"0xVICTIMWALLET"}}"#)
}

#[tokio::test]
async fn token_attacks_get_401_with_json_and_www_authenticate() {
    let (logs, _guard) = testkit::logs::capture();
    let state = link_state();
    let bad = testkit::attacks::bad_tokens();
    let mut headers: Vec<(String, String)> = bad
        .iter()
        .map(|(name, t)| ((*name).to_owned(), format!("Bearer {t}")))
        .collect();
    let valid = token("victim", Some("victim@example.com"));
    for (name, value) in [
        ("Bearer with no token", "Bearer".to_owned()),
        ("Bearer and spaces", "Bearer    ".to_owned()),
        ("Basic scheme", "Basic dmljdGltOnBhc3N3b3Jk".to_owned()),
        ("Token scheme", format!("Token {valid}")),
        (
            "Digest scheme",
            r#"Digest username="victim", realm="x""#.to_owned(),
        ),
        ("token without scheme", valid.clone()),
        (
            "two tokens, comma-joined",
            format!("Bearer {valid},Bearer {valid}"),
        ),
        ("Bearer with a tab", format!("Bearer\t{valid}")),
        ("oversized header", format!("Bearer {}", "a".repeat(20_000))),
    ] {
        headers.push((name.to_owned(), value));
    }
    headers.push(("no header".into(), String::new()));

    for (name, header) in &headers {
        let event = link_event((!header.is_empty()).then_some(header.as_str()));
        let response = call(web3_link_routes(), &state, event.request()).await;
        let (status, code) = outcome(&response);
        assert_eq!(status, 401, "{name}");
        assert!(
            code == "invalid_token" || code == "missing_token",
            "{name}: {code}"
        );
        let challenge = response.headers()["www-authenticate"].to_str().unwrap();
        assert!(
            challenge.starts_with(r#"Bearer realm="fan-api""#),
            "{name}: {challenge}"
        );
    }
    let response = call(
        web3_link_routes(),
        &state,
        link_event(Some(&format!("Bearer {valid}"))).request(),
    )
    .await;
    assert_eq!(
        outcome(&response),
        (200, "ok".into()),
        "a valid token still works"
    );

    let mut secrets: Vec<String> = bad
        .iter()
        .filter(|(_, t)| t.len() > 16)
        .map(|(_, t)| t.clone())
        .collect();
    secrets.extend(
        bad.iter()
            .filter_map(|(_, t)| t.rsplit('.').next())
            .filter(|s| s.len() > 16)
            .map(str::to_owned),
    );
    secrets.extend([
        valid.clone(),
        "victim@example.com".into(),
        "0xVICTIMWALLET".into(),
        // Marks what the bad tokens carry in their header and claims.
        "SECRET-IN-".into(),
    ]);
    logs.assert_free_of(&secrets);
}

#[tokio::test]
async fn query_attacks_get_400_and_a_real_cursor_still_works() {
    let (logs, _guard) = testkit::logs::capture();
    let state = list_state();
    let (status, first) = parts(
        &call(
            list_packs_routes(),
            &state,
            ApiEvent::get("/api/packs").query("limit=2").request(),
        )
        .await,
    );
    assert_eq!(status, 200);
    let cursor = first["nextCursor"].as_str().unwrap().to_owned();

    let signer = testkit::cursor_signer();
    let (payload, tag) = cursor.split_once('.').unwrap();
    let decoded = String::from_utf8(URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap();
    let with_tag = |text: &str| format!("{}.{tag}", URL_SAFE_NO_PAD.encode(text));
    let mut flipped = cursor.clone().into_bytes();
    let last = flipped.len() - 1;
    flipped[last] = if flipped[last] == b'A' { b'B' } else { b'A' };
    let future = signer.encode(&ListingKey::new(
        Timestamp::parse("2099-01-01T00:00:00Z").unwrap(),
        "p0",
    ));
    let mut queries: Vec<String> = [
        "0",
        "-1",
        "101",
        "1e2",
        "0x10",
        "%205",
        "5%20",
        "",
        "five",
        "99999999999999999999",
        "%00",
        "1;2",
        "1.0",
        "+5",
    ]
    .iter()
    .map(|limit| format!("limit={limit}"))
    .collect();
    queries.push("limit=5&limit=5".into());
    for bad_cursor in [
        String::from_utf8(flipped).unwrap(),
        cursor[..cursor.len() - 3].to_owned(),
        payload.to_owned(),
        format!("{cursor}="),
        format!("{cursor}A"),
        format!("{}.{tag}", STANDARD.encode(&decoded)),
        with_tag(&decoded.replace("#p1", "#p4")),
        with_tag(&decoded.replacen("1:", "2:", 1)),
        with_tag(&format!("{decoded}#extra")),
        with_tag(&format!("1:{}#p0", "9".repeat(21))),
        testkit::cursor_signer()
            .encode(&ListingKey::parse(&decoded[2..]).unwrap())
            .replace('.', ".x"),
        domain::packs::listing::CursorSigner::new(b"another-deployment-secret-0123456789")
            .encode(&ListingKey::parse(&decoded[2..]).unwrap()),
        future,
        "A".repeat(300),
        "%FF%FE".into(),
        "null".into(),
    ] {
        queries.push(format!("cursor={bad_cursor}"));
    }
    queries.push(format!("cursor={cursor}&cursor={cursor}"));
    for query in &queries {
        let response = call(
            list_packs_routes(),
            &state,
            ApiEvent::get("/api/packs").query(query).request(),
        )
        .await;
        let (status, code) = outcome(&response);
        assert_eq!(status, 400, "{query}");
        assert!(
            ["invalid_limit", "invalid_cursor", "invalid_query"].contains(&code.as_str()),
            "{query}: {code}"
        );
    }
    let (status, next) = parts(
        &call(
            list_packs_routes(),
            &state,
            ApiEvent::get("/api/packs")
                .query(&format!("limit=2&cursor={cursor}"))
                .request(),
        )
        .await,
    );
    assert_eq!(status, 200);
    assert_eq!(next["packs"][0]["id"], "p2");
    assert!(!logs.text().is_empty());
}

mod bodies;
mod properties;
