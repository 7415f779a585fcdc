//! The real `me-purchases` binary (GET /api/me/purchases and GET /api/me/items), run through a
//! Lambda Runtime API emulator against moto_server, with its JWKS from a loopback stub.

use domain::timestamp::Timestamp;
use serde_json::Value;
use store::purchases::SeedPurchases;
use testkit::events::ApiEvent;
use testkit::purchases::{Function, PurchaseEnv, fixture};
use testkit::tokens::token;

const BINARY: &str = env!("CARGO_BIN_EXE_me-purchases");

async fn spawn(env: &PurchaseEnv) -> Function {
    env.spawn(BINARY, &[("CURSOR_SECRET", testkit::CURSOR_SECRET)])
        .await
}

/// Every entry of `list` over the pages of `path?query` for `user`.
async fn every_page(
    function: &Function,
    user: &str,
    path: &str,
    query: &str,
    list: &str,
) -> Vec<Value> {
    testkit::mine::every_page(query, list, |query| async move {
        let answer = function
            .call(&ApiEvent::get(path).query(&query).bearer(&token(user, None)))
            .await;
        (answer.status, answer.body)
    })
    .await
}

#[tokio::test]
async fn lists_the_callers_purchases_and_items_a_page_at_a_time() {
    let env = PurchaseEnv::new().await;
    let now = Timestamp::now();
    for (user, offset) in [("fan-1", 0), ("fan-2", 30)] {
        env.store
            .seed_purchases(&testkit::mine::purchases(user, 25, offset, false, now))
            .await
            .unwrap();
    }
    let mut function = spawn(&env).await;
    let all = every_page(
        &function,
        "fan-1",
        "/api/me/purchases",
        "limit=4",
        "purchases",
    )
    .await;
    assert_eq!(all.len(), 25);
    assert!(
        all.iter()
            .all(|p| p["id"].as_str().unwrap().starts_with("fan-1-"))
    );
    let paid = every_page(
        &function,
        "fan-1",
        "/api/me/purchases",
        "status=completed&limit=2",
        "purchases",
    )
    .await;
    assert_eq!(paid.len(), 5);
    assert!(paid.iter().all(|p| p["status"] == "completed"));
    let items = every_page(&function, "fan-1", "/api/me/items", "limit=3", "items").await;
    assert_eq!(items.len(), 5 * 5, "five opened purchases of five items");
    let rare = every_page(
        &function,
        "fan-1",
        "/api/me/items",
        "rarity=rare&limit=3",
        "items",
    )
    .await;
    assert!(!rare.is_empty() && rare.iter().all(|i| i["rarity"] == "rare"));

    let anonymous = function.call(&ApiEvent::get("/api/me/items")).await;
    assert_eq!(
        (anonymous.status, anonymous.code()),
        (401, Some("missing_token"))
    );
    let bad = function
        .call(
            &ApiEvent::get("/api/me/purchases")
                .query("status=lost")
                .bearer(&token("fan-1", None)),
        )
        .await;
    assert_eq!((bad.status, bad.code()), (400, Some("invalid_query")));
    assert!(function.is_running());
}

/// `infra/events/me-purchases.json` and `me-purchases.items.json` (with a token for `me`).
#[tokio::test]
async fn the_event_fixtures_answer() {
    let env = PurchaseEnv::new().await;
    let function = spawn(&env).await;
    for (name, list) in [
        ("me-purchases", "purchases"),
        ("me-purchases.items", "items"),
    ] {
        let answer = function
            .call_json(fixture(name, Some(&token("me", None))))
            .await;
        assert_eq!(answer.status, 200, "{name}: {answer:?}");
        assert_eq!(answer.body[list], serde_json::json!([]), "{name}");
    }
}

testkit::signed_in_function_basics!(BINARY, spawn, "/api/me/purchases");

#[tokio::test]
async fn a_missing_cursor_secret_stops_the_function_with_a_clear_message() {
    testkit::mine::assert_init_needs_cursor_secret(BINARY).await;
}
