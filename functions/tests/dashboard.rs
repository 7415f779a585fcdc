//! The real `dashboard` binary (GET /api/dashboard), run through a Lambda Runtime API emulator
//! against moto_server: the balances, the paid unopened purchase, the live pack and the global
//! standing in one answer; the quests part wired (no quest seeded here: an empty list).

use testkit::events::ApiEvent;
use testkit::openings::{open_one, pay_one};
use testkit::packs::at;
use testkit::purchases::PurchaseEnv;
use testkit::tokens::token;

const BINARY: &str = env!("CARGO_BIN_EXE_dashboard");

#[tokio::test]
async fn the_home_screen_through_the_binary() {
    let env = PurchaseEnv::new().await;
    testkit::packs::save(&env.store, &testkit::packs::active("live-pack", 60)).await;
    testkit::packs::save(&env.store, &testkit::packs::active("soon-pack", -3600)).await;
    open_one(&env.store, "fan", "live-pack", "k1", at(-30)).await;
    let paid = pay_one(&env.store, "fan", "live-pack", "k2", at(-20)).await;
    let function = env.spawn(BINARY, &[]).await;
    let home = function
        .call(&ApiEvent::get("/api/dashboard").bearer(&token("fan", None)))
        .await;
    assert_eq!(home.status, 200, "{home:?}");
    let body = &home.body;
    assert_eq!(
        body["cash"]["balances"],
        serde_json::json!([{"amount": 0, "currency": "USD"}])
    );
    assert_eq!(body["unopened"][0]["id"], paid.id.as_str());
    assert_eq!(body["quests"], serde_json::json!([]));
    let phases: Vec<(&str, &str)> = body["drops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|drop| {
            (
                drop["pack"]["id"].as_str().unwrap(),
                drop["phase"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(phases, [("live-pack", "live"), ("soon-pack", "upcoming")]);
    assert_eq!(
        body["rank"],
        serde_json::json!({"board": "global", "score": 5, "rank": 1, "percentile": null})
    );
    let anonymous = function.call(&ApiEvent::get("/api/dashboard")).await;
    assert_eq!(anonymous.status, 401);
}

/// The DynamoDB requests one home screen makes, counted at a proxy in front of moto: the number
/// docs/leaderboards.md states, for a fan in the top 10,000 with under 1,000 items, and three
/// drops (each asked for the fan's queue entry).
#[tokio::test]
async fn the_home_screen_makes_the_requests_the_docs_count() {
    use store::quests::SeedQuests;
    // `behind_proxy` saves the live pack `p`: with `live-pack` two live drops, and one upcoming.
    let (env, proxy) = PurchaseEnv::behind_proxy().await;
    testkit::packs::save(&env.store, &testkit::packs::active("live-pack", 60)).await;
    testkit::packs::save(&env.store, &testkit::packs::active("soon-pack", -3600)).await;
    env.store
        .seed_quests(&testkit::quests::shipped())
        .await
        .unwrap();
    open_one(&env.store, "fan", "live-pack", "k1", at(-30)).await;
    pay_one(&env.store, "fan", "live-pack", "k2", at(-20)).await;
    let function = env.spawn(BINARY, &[]).await;
    let ask = || ApiEvent::get("/api/dashboard").bearer(&token("fan", None));
    // The first call pays for what a cold start reads once; the second is counted.
    assert_eq!(function.call(&ask()).await.status, 200);
    let (home, made) = proxy.counting(function.call(&ask())).await;
    assert_eq!(home.status, 200, "{home:?}");
    for part in ["cash", "unopened", "quests", "drops", "rank"] {
        assert!(!home.body[part].is_null(), "{part} in {home:?}");
    }
    assert_eq!(home.body["drops"].as_array().map(Vec::len), Some(3));
    assert_eq!(
        made,
        [
            // The fan's sessions (docs/sessions.md), the balances, the global score, a queue
            // entry per drop (3).
            ("GetItem".to_owned(), 1 + 1 + 1 + 3),
            // Unopened, live, upcoming; the standing's 16 counts; the quests, claims, items.
            // No rate counter: a read's limits are counted in the instance's memory.
            ("Query".to_owned(), 3 + 16 + 3),
        ]
        .into(),
        "docs/leaderboards.md, GET /api/dashboard"
    );
}
