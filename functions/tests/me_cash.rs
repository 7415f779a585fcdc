//! The real `me-cash` binary (GET /api/me/cash and GET /api/me/cash/transactions), run through a
//! Lambda Runtime API emulator against moto_server, with its JWKS from a loopback stub.

use serde_json::json;
use testkit::events::ApiEvent;
use testkit::purchases::{Function, PurchaseEnv, credit, fixture};
use testkit::tokens::token;

const BINARY: &str = env!("CARGO_BIN_EXE_me-cash");

async fn spawn(env: &PurchaseEnv) -> Function {
    env.spawn(BINARY, &[("CURSOR_SECRET", testkit::CURSOR_SECRET)])
        .await
}

#[tokio::test]
async fn answers_the_callers_balances_and_ledger() {
    let env = PurchaseEnv::new().await;
    credit(&env.store, "fan-1", 700, "USD", "grant-1").await;
    credit(&env.store, "fan-1", 300, "EUR", "grant-2").await;
    credit(&env.store, "fan-2", 900, "USD", "grant-3").await;
    let function = spawn(&env).await;
    let call = |path: &str, query: &str, user: &str| {
        let event = ApiEvent::get(path).query(query).bearer(&token(user, None));
        let function = &function;
        async move { function.call(&event).await }
    };
    let cash = call("/api/me/cash", "", "fan-1").await;
    assert_eq!(cash.status, 200, "{cash:?}");
    assert_eq!(
        cash.body,
        json!({"balances": [{"amount": 300, "currency": "EUR"}, {"amount": 700, "currency": "USD"}]})
    );
    let none = call("/api/me/cash", "", "fan-3").await;
    assert_eq!(none.body, json!({"balances": []}));

    let first = call("/api/me/cash/transactions", "limit=1", "fan-1").await;
    assert_eq!(first.status, 200, "{first:?}");
    assert_eq!(first.body["transactions"].as_array().unwrap().len(), 1);
    let cursor = first.body["nextCursor"].as_str().unwrap();
    let second = call(
        "/api/me/cash/transactions",
        &format!("limit=5&cursor={cursor}"),
        "fan-1",
    )
    .await;
    assert_eq!(second.body["transactions"].as_array().unwrap().len(), 1);
    assert_eq!(second.body["nextCursor"], serde_json::Value::Null);
    let stolen = call(
        "/api/me/cash/transactions",
        &format!("limit=1&cursor={cursor}"),
        "fan-2",
    )
    .await;
    assert_eq!(
        (stolen.status, stolen.code()),
        (400, Some("invalid_cursor"))
    );
    let usd = call("/api/me/cash/transactions", "currency=USD", "fan-1").await;
    let entries = usd.body["transactions"].as_array().unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0]["type"], "credit");
    assert_eq!(entries[0]["amount"], 700);
    assert_eq!(entries[0]["purchaseId"], serde_json::Value::Null);
}

/// `infra/events/me-cash.json` and `me-cash.transactions.json` (with a token for `me`).
#[tokio::test]
async fn the_event_fixtures_answer() {
    let env = PurchaseEnv::new().await;
    credit(&env.store, "me", 1000, "USD", "fixture-grant").await;
    let function = spawn(&env).await;
    let cash = function
        .call_json(fixture("me-cash", Some(&token("me", None))))
        .await;
    assert_eq!(
        cash.body,
        json!({"balances": [{"amount": 1000, "currency": "USD"}]})
    );
    let ledger = function
        .call_json(fixture("me-cash.transactions", Some(&token("me", None))))
        .await;
    assert_eq!(ledger.status, 200, "{ledger:?}");
    assert_eq!(ledger.body["transactions"][0]["amount"], 1000);
}

testkit::signed_in_function_basics!(BINARY, spawn, "/api/me/cash");

#[tokio::test]
async fn a_missing_cursor_secret_stops_the_function_with_a_clear_message() {
    testkit::mine::assert_init_needs_cursor_secret(BINARY).await;
}
