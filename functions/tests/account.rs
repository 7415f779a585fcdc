//! The real `account` binary (GET /api/me/export), run through a Lambda Runtime API emulator
//! against moto_server, with its JWKS from a loopback stub: a fan's export walked to its last
//! page holds their purchases, Cash, top-up and profile, none of another fan's; a tampered
//! cursor is a 400.

use domain::cash::Money;
use domain::timestamp::Timestamp;
use domain::topups::{TopUp, top_up_id};
use serde_json::Value;
use store::profile::GetProfile;
use store::purchases::SeedPurchases;
use store::topups::CreateTopUp;
use testkit::events::ApiEvent;
use testkit::mine::export_items as items;
use testkit::purchases::{Function, PurchaseEnv, credit, fixture};
use testkit::tokens::token;

const BINARY: &str = env!("CARGO_BIN_EXE_account");

async fn spawn(env: &PurchaseEnv) -> Function {
    env.spawn(BINARY, &[("CURSOR_SECRET", testkit::CURSOR_SECRET)])
        .await
}

/// Every page of `fan`'s export, first to last.
async fn export(function: &Function, fan: &str) -> Vec<Value> {
    testkit::mine::pages("", |query| async move {
        let event = ApiEvent::get("/api/me/export")
            .query(&query)
            .bearer(&token(fan, None));
        let answer = function.call(&event).await;
        (answer.status, answer.body)
    })
    .await
}

#[tokio::test]
async fn a_fans_export_holds_their_items_page_by_page_and_no_one_elses() {
    let env = PurchaseEnv::new().await;
    let now = Timestamp::now();
    for fan in ["fan-1", "fan-2"] {
        let purchases: Vec<_> = (0..3)
            .map(|n| testkit::mine::purchase(fan, n, 0, n == 0, now))
            .collect();
        env.store.seed_purchases(&purchases).await.unwrap();
        credit(&env.store, fan, 700, "USD", &format!("grant-{fan}")).await;
        let user = testkit::ids::user(fan);
        env.store
            .get_profile(&user, Some("fan@example.com"), now)
            .await
            .unwrap();
        let top_up = TopUp::pending(
            top_up_id(&user, "k"),
            user,
            Money {
                amount: 1000,
                currency: "USD".into(),
            },
            now,
        );
        env.store.create_top_up(&top_up).await.unwrap();
    }
    let function = spawn(&env).await;
    let pages = export(&function, "fan-1").await;
    assert_eq!(pages.len(), 13, "one page a section");
    assert_eq!(items(&pages, "profile")[0]["id"], "fan-1");
    let mut ids: Vec<&str> = items(&pages, "purchases")
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, ["fan-1-0000", "fan-1-0001", "fan-1-0002"]);
    assert_eq!(
        items(&pages, "balances"),
        [&serde_json::json!({"amount": 700, "currency": "USD"})]
    );
    assert_eq!(items(&pages, "ledger").len(), 1);
    assert_eq!(items(&pages, "topUps")[0]["amount"], 1000);
    assert!(!serde_json::to_string(&pages).unwrap().contains("fan-2"));

    let cursor = pages[0]["nextCursor"].as_str().unwrap();
    let tampered = format!("{}x", cursor);
    for (fan, cursor) in [("fan-2", cursor), ("fan-1", tampered.as_str())] {
        let event = ApiEvent::get("/api/me/export")
            .query(&format!("cursor={cursor}"))
            .bearer(&token(fan, None));
        let answer = function.call(&event).await;
        assert_eq!(
            (answer.status, answer.code()),
            (400, Some("invalid_cursor"))
        );
    }
}

/// `infra/events/account.json` (with a token for `me`).
#[tokio::test]
async fn the_event_fixture_answers() {
    let env = PurchaseEnv::new().await;
    let function = spawn(&env).await;
    let page = function
        .call_json(fixture("account", Some(&token("me", None))))
        .await;
    assert_eq!(page.status, 200, "{page:?}");
    assert_eq!(page.body["section"], "profile");
}

testkit::signed_in_function_basics!(BINARY, spawn, "/api/me/export");

#[tokio::test]
async fn a_missing_cursor_secret_stops_the_function_with_a_clear_message() {
    testkit::mine::assert_init_needs_cursor_secret(BINARY).await;
}
