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
