//! Both handlers, driven with API Gateway HTTP API events, against moto_server.

use api::http::routes::{list_packs_routes, web3_link_routes};
use std::sync::Arc;
use std::time::{Duration, Instant};

use api::auth::TokenVerifier;
use api::config::JwksSetting;
use api::handlers::list_packs::ListPacksState;
use api::handlers::web3_link::LinkState;
use api::http::request::DEFAULT_MAX_BODY_BYTES;
use domain::links::WEB3_PROVIDER;
use domain::packs::Pack;
use serde_json::{Value, json};
use store::DynamoStore;
use store::links::GetLink;
use testkit::events::{ApiEvent, call, parts};
use testkit::moto::client_for;
use testkit::packs::{active, ending, listed_json};
use testkit::tokens::{auth_config, token};

fn link_state(store: DynamoStore) -> Arc<LinkState<DynamoStore>> {
    testkit::link_state(store)
}

async fn unreachable_store() -> DynamoStore {
    DynamoStore::new(
        client_for(&format!("http://127.0.0.1:{}", testkit::free_port())).await,
        "fan-api",
    )
}

fn assert_error(response: &lambda_http::Response<lambda_http::Body>, status: u16, code: &str) {
    let (actual, body) = parts(response);
    assert_eq!(
        (actual, body["error"]["code"].as_str()),
        (status, Some(code)),
        "{body}"
    );
    assert_eq!(body["success"], false);
    assert_eq!(response.headers()["content-type"], "application/json");
}

// --- GET /api/packs ---

#[tokio::test]
async fn list_answers_the_active_packs_as_json() {
    let store = testkit::moto::shared_table().await;
    let packs: Vec<Pack> = vec![
        active("newer", 10),
        active("older", 20),
        ending(active("ended", 30), -1),
    ];
    for pack in &packs {
        testkit::packs::save(&store, pack).await;
    }
    let state = Arc::new(ListPacksState {
        store,
        cursors: testkit::cursor_signer(),
    });
    let response = call(
        list_packs_routes(),
        &state,
        ApiEvent::get("/api/packs").request(),
    )
    .await;
    let (status, body) = parts(&response);
    assert_eq!(status, 200);
    assert_eq!(response.headers()["content-type"], "application/json");
    assert_eq!(
        body,
        json!({ "packs": [listed_json(&packs[0]), listed_json(&packs[1])], "nextCursor": null })
    );
    assert_eq!(body["packs"][0]["saleEndsAt"], Value::Null);
    assert!(body["packs"][0]["price"]["amount"].is_u64());
}

#[tokio::test]
async fn list_pages_with_limit_and_cursor() {
    let store = testkit::moto::shared_table().await;
    for i in 0..5 {
        testkit::packs::save(&store, &active(&format!("p{i}"), 10 * (i + 1))).await;
    }
    let state = Arc::new(ListPacksState {
        store,
        cursors: testkit::cursor_signer(),
    });
    let mut ids = Vec::new();
    let mut query = "limit=2".to_owned();
    for _ in 0..5 {
        let (status, body) = parts(
            &call(
                list_packs_routes(),
                &state,
                ApiEvent::get("/api/packs").query(&query).request(),
            )
            .await,
        );
        assert_eq!(status, 200, "{body}");
        ids.extend(
            body["packs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p["id"].as_str().unwrap().to_owned()),
        );
        match body["nextCursor"].as_str() {
            Some(cursor) => query = format!("limit=2&cursor={cursor}"),
            None => break,
        }
    }
    assert_eq!(ids, ["p0", "p1", "p2", "p3", "p4"]);
}

#[tokio::test]
async fn list_refuses_bad_limits_cursors_routes_and_methods() {
    let state = Arc::new(ListPacksState {
        store: testkit::moto::shared_table().await,
        cursors: testkit::cursor_signer(),
    });
    for (query, code) in [
        ("limit=0", "invalid_limit"),
        ("limit=101", "invalid_limit"),
        ("limit=abc", "invalid_limit"),
        ("limit=", "invalid_limit"),
        ("limit=5&limit=6", "invalid_query"),
        ("cursor=nope", "invalid_cursor"),
        ("cursor=", "invalid_cursor"),
    ] {
        let response = call(
            list_packs_routes(),
            &state,
            ApiEvent::get("/api/packs").query(query).request(),
        )
        .await;
        assert_error(&response, 400, code);
    }
    assert_error(
        &call(
            list_packs_routes(),
            &state,
            ApiEvent::get("/api/nope").request(),
        )
        .await,
        404,
        "not_found",
    );
    assert_error(
        &call(list_packs_routes(), &state, ApiEvent::get("/").request()).await,
        404,
        "not_found",
    );
    let response = call(
        list_packs_routes(),
        &state,
        ApiEvent::post("/api/packs").request(),
    )
    .await;
    assert_error(&response, 405, "method_not_allowed");
    assert_eq!(response.headers()["allow"], "GET");
    // As API Gateway's $default route, it also answers for the other known path.
    let response = call(
        list_packs_routes(),
        &state,
        ApiEvent::get("/api/web3-link").request(),
    )
    .await;
    assert_error(&response, 405, "method_not_allowed");
    assert_eq!(response.headers()["allow"], "POST");
}

#[tokio::test]
async fn list_answers_503_fast_when_dynamodb_is_unreachable() {
    let state = Arc::new(ListPacksState {
        store: unreachable_store().await,
        cursors: testkit::cursor_signer(),
    });
    let started = Instant::now();
    let response = call(
        list_packs_routes(),
        &state,
        ApiEvent::get("/api/packs").request(),
    )
    .await;
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_error(&response, 503, "service_unavailable");
    assert_eq!(response.headers()["retry-after"], "1");
    let text = String::from_utf8_lossy(response.body().as_ref()).to_lowercase();
    assert!(
        !text.contains("dispatch") && !text.contains("connect") && !text.contains("127.0.0.1"),
        "{text}"
    );
}

#[tokio::test]
async fn list_answers_500_without_detail_when_the_table_is_missing() {
    let state = Arc::new(ListPacksState {
        store: DynamoStore::new(
            testkit::moto::client_for(testkit::moto::shared_endpoint()).await,
            "missing-table",
        ),
        cursors: testkit::cursor_signer(),
    });
    let response = call(
        list_packs_routes(),
        &state,
        ApiEvent::get("/api/packs").request(),
    )
    .await;
    assert_error(&response, 500, "internal_error");
    let (_, body) = parts(&response);
    assert_eq!(body["error"]["message"], "An internal error occurred.");
}

// --- POST /api/web3-link ---

#[tokio::test]
async fn link_saves_and_answers_the_user() {
    let state = link_state(testkit::moto::shared_table().await);
    let payload = r#"{"address":"0xAbC","chain":1,"signature":"0x01","amount":123456789012345678901234567890}"#;
    let event = ApiEvent::post("/api/web3-link")
        .bearer(&token("user_42", Some("fan@example.com")))
        .json(&format!(r#"{{"payload": {payload}, "extra": true}}"#));
    let response = call(web3_link_routes(), &state, event.request()).await;
    let (status, body) = parts(&response);
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body,
        json!({"success": true, "data": {"userId": "user_42", "email": "fan@example.com"}})
    );
    let link = state
        .store
        .get_link(&testkit::ids::user("user_42"), WEB3_PROVIDER)
        .await
        .unwrap()
        .expect("stored");
    assert_eq!(link.payload, payload);
    assert_eq!(link.email.as_deref(), Some("fan@example.com"));
}

#[tokio::test]
async fn link_answers_null_email_and_accepts_base64_bodies_and_charset() {
    let state = link_state(testkit::moto::shared_table().await);
    let event = ApiEvent::post("/api/web3-link")
        .bearer(&token("user_7", None))
        .header("content-type", "application/json; charset=utf-8")
        .body(r#"{"payload":"0"}"#)
        .base64();
    let (status, body) = parts(&call(web3_link_routes(), &state, event.request()).await);
    assert_eq!(
        (status, body),
        (
            200,
            json!({"success": true, "data": {"userId": "user_7", "email": null}})
        )
    );
    assert_eq!(
        state
            .store
            .get_link(&testkit::ids::user("user_7"), WEB3_PROVIDER)
            .await
            .unwrap()
            .unwrap()
            .payload,
        r#""0""#
    );
}

#[tokio::test]
async fn link_refuses_falsy_and_malformed_bodies_and_writes_nothing() {
    let state = link_state(testkit::moto::shared_table().await);
    let good = token("user_1", None);
    for (body, code) in [
        (r#"{"payload":false}"#, "invalid_payload"),
        (r#"{"payload":0}"#, "invalid_payload"),
        (r#"{"payload":-0.0}"#, "invalid_payload"),
        (r#"{"payload":0e5}"#, "invalid_payload"),
        (r#"{"payload":""}"#, "invalid_payload"),
        (r#"{"payload":null}"#, "invalid_payload"),
        (r#"{}"#, "invalid_payload"),
        ("", "invalid_json"),
        ("{", "invalid_json"),
        (r#"{"payload":1}}"#, "invalid_json"),
        ("[1]", "invalid_body"),
        ("\"text\"", "invalid_body"),
        (r#"{"payload":1,"payload":2}"#, "invalid_body"),
    ] {
        let event = ApiEvent::post("/api/web3-link").bearer(&good).json(body);
        assert_error(
            &call(web3_link_routes(), &state, event.request()).await,
            400,
            code,
        );
    }
    assert!(
        state
            .store
            .get_link(&testkit::ids::user("user_1"), WEB3_PROVIDER)
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn link_checks_token_then_content_type_then_size() {
    let state = link_state(testkit::moto::shared_table().await);
    let body = r#"{"payload":true}"#;

    let response = call(
        web3_link_routes(),
        &state,
        ApiEvent::post("/api/web3-link").json(body).request(),
    )
    .await;
    assert_error(&response, 401, "missing_token");
    assert_eq!(
        response.headers()["www-authenticate"],
        r#"Bearer realm="fan-api""#
    );
    let response = call(
        web3_link_routes(),
        &state,
        ApiEvent::post("/api/web3-link")
            .bearer("not.a.token")
            .json(body)
            .request(),
    )
    .await;
    assert_error(&response, 401, "invalid_token");
    assert!(
        response.headers()["www-authenticate"]
            .to_str()
            .unwrap()
            .contains("invalid_token")
    );

    let good = token("user_1", None);
    for content_type in [
        None,
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
    ] {
        let mut event = ApiEvent::post("/api/web3-link").bearer(&good).body(body);
        if let Some(content_type) = content_type {
            event = event.header("content-type", content_type);
        }
        assert_error(
            &call(web3_link_routes(), &state, event.request()).await,
            415,
            "unsupported_media_type",
        );
    }

    // Exactly at the limit is fine; one byte over is 413.
    let padding = DEFAULT_MAX_BODY_BYTES - r#"{"payload":""}"#.len();
    let at_limit = format!(r#"{{"payload":"{}"}}"#, "x".repeat(padding));
    assert_eq!(at_limit.len(), DEFAULT_MAX_BODY_BYTES);
    let event = ApiEvent::post("/api/web3-link")
        .bearer(&good)
        .json(&at_limit);
    assert_eq!(
        call(web3_link_routes(), &state, event.request())
            .await
            .status(),
        200
    );
    let over = format!(r#"{{"payload":"{}"}}"#, "x".repeat(padding + 1));
    let event = ApiEvent::post("/api/web3-link").bearer(&good).json(&over);
    assert_error(
        &call(web3_link_routes(), &state, event.request()).await,
        413,
        "payload_too_large",
    );

    assert_error(
        &call(
            web3_link_routes(),
            &state,
            ApiEvent::get("/api/web3-link").request(),
        )
        .await,
        405,
        "method_not_allowed",
    );
    assert_error(
        &call(
            web3_link_routes(),
            &state,
            ApiEvent::post("/api/other").request(),
        )
        .await,
        404,
        "not_found",
    );
}

#[tokio::test]
async fn link_answers_503_when_dynamodb_or_the_jwks_is_unreachable() {
    let state = link_state(unreachable_store().await);
    let event = ApiEvent::post("/api/web3-link")
        .bearer(&token("user_1", None))
        .json(r#"{"payload":1}"#);
    let started = Instant::now();
    let response = call(web3_link_routes(), &state, event.request()).await;
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_error(&response, 503, "service_unavailable");
    assert_eq!(response.headers()["retry-after"], "1");

    let jwks_url = format!("http://127.0.0.1:{}/jwks.json", testkit::free_port());
    let state = Arc::new(LinkState {
        store: testkit::moto::shared_table().await,
        verifier: TokenVerifier::from_config(&auth_config(JwksSetting::Url(jwks_url))).unwrap(),
        max_body_bytes: DEFAULT_MAX_BODY_BYTES,
    });
    assert_error(
        &call(web3_link_routes(), &state, event.request()).await,
        503,
        "service_unavailable",
    );
}
