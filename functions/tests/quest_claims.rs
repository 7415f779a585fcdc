//! The real `quest-claims` binary (POST /api/quests/{questId}/claim), run through a Lambda
//! Runtime API emulator against moto_server: a claim credits once, whatever the concurrency
//! (twenty at once over four instances, behind the proxy that makes moto's requests atomic),
//! and a refused claim writes nothing.

use std::sync::Arc;

use serde_json::json;
use shared::store::cash::GetBalance;
use shared::store::purchases::SeedPurchases;
use shared::store::quests::{GetClaims, SeedQuests};
use shared::timestamp::Timestamp;
use testkit::events::ApiEvent;
use testkit::purchases::{PurchaseEnv, fixture};
use testkit::tokens::token;

const BINARY: &str = env!("CARGO_BIN_EXE_quest-claims");

/// The shipped quests, resolved against the shipped packs, in `env`'s table.
async fn seeded(env: &PurchaseEnv) {
    let mut quests =
        shared::quests::seed::parse_quests(include_bytes!("../../infra/seed/quests.json")).unwrap();
    let packs =
        shared::packs::seed::parse_seed(include_bytes!("../../infra/seed/packs.json")).unwrap();
    let catalog =
        shared::catalog::parse_catalog(include_str!("../../infra/seed/catalog.json")).unwrap();
    shared::quests::seed::resolve(&mut quests, &packs, &catalog).unwrap();
    env.store.seed_quests(&quests).await.unwrap();
}

/// One opening by `fan`, a day ago.
async fn open_one(env: &PurchaseEnv, fan: &str) {
    let opened = testkit::mine::purchase(fan, 4, 0, true, Timestamp::now());
    env.store.seed_purchases(&[opened]).await.unwrap();
}

fn claim(fan: &str, quest: &str, key: &str) -> ApiEvent {
    ApiEvent::post(&format!("/api/quests/{quest}/claim"))
        .bearer(&token(fan, None))
        .header("Idempotency-Key", key)
}

async fn usd(env: &PurchaseEnv, fan: &str) -> u64 {
    env.store
        .get_balance(&testkit::ids::user(fan), "USD")
        .await
        .unwrap()
}

#[tokio::test]
async fn twenty_concurrent_claims_over_four_instances_credit_once() {
    let (_one_at_a_time, store) = testkit::moto::atomic_table().await;
    let proxy_endpoint = _one_at_a_time.endpoint();
    let env = Arc::new(PurchaseEnv::with(store, &proxy_endpoint).await);
    seeded(&env).await;
    open_one(&env, "fan-1").await;
    let mut functions = Vec::new();
    for _ in 0..4 {
        functions.push(
            env.spawn(BINARY, &[("CURSOR_SECRET", testkit::CURSOR_SECRET)])
                .await,
        );
    }
    let functions = Arc::new(functions);
    let answers = testkit::at_once(20, |i| {
        let functions = functions.clone();
        async move {
            functions[i % 4]
                .call(&claim("fan-1", "first-pack", &format!("key-{i}")))
                .await
        }
    })
    .await;
    let mut replayed = 0;
    for answer in &answers {
        assert_eq!(answer.status, 201, "{answer:?}");
        assert_eq!(answer.body, answers[0].body);
        replayed += usize::from(answer.headers["idempotent-replayed"] == "true");
    }
    assert_eq!(replayed, 19, "one claim made, the others answered it");
    assert_eq!(usd(&env, "fan-1").await, 100);
    assert_eq!(
        testkit::mine::ledger_sum(&env.store, "fan-1", "USD").await,
        100
    );
}

#[tokio::test]
async fn refusals_write_nothing_and_the_fixture_claims() {
    let env = PurchaseEnv::new().await;
    seeded(&env).await;
    let function = env
        .spawn(BINARY, &[("CURSOR_SECRET", testkit::CURSOR_SECRET)])
        .await;
    let not_yet = function.call(&claim("me", "first-pack", "k1")).await;
    assert_eq!(
        (not_yet.status, not_yet.code()),
        (409, Some("quest_not_completed"))
    );
    let unknown = function.call(&claim("me", "nope", "k1")).await;
    assert_eq!(
        (unknown.status, unknown.code()),
        (404, Some("quest_not_found"))
    );
    let keyless = function
        .call(&ApiEvent::post("/api/quests/first-pack/claim").bearer(&token("me", None)))
        .await;
    assert_eq!(
        (keyless.status, keyless.code()),
        (400, Some("missing_idempotency_key"))
    );
    assert_eq!(usd(&env, "me").await, 0);
    let quest = shared::ids::QuestId::parse("first-pack").unwrap();
    assert_eq!(
        env.store
            .get_claim(&testkit::ids::user("me"), &quest)
            .await
            .unwrap(),
        None
    );

    // `infra/events/quest-claims.json`, once `me` opened a pack.
    open_one(&env, "me").await;
    let claimed = function
        .call_json(fixture("quest-claims", Some(&token("me", None))))
        .await;
    assert_eq!(claimed.status, 201, "{claimed:?}");
    assert_eq!(
        claimed.body["reward"]["reward"],
        json!({"type": "cash", "amount": 100, "currency": "USD"})
    );
    assert_eq!(usd(&env, "me").await, 100);
}

#[tokio::test]
async fn missing_auth_settings_stop_the_function_with_a_clear_message() {
    testkit::runtime_api::assert_init_needs_auth(BINARY).await;
}
