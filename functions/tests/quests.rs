//! The real `quests` binary (GET /api/quests, GET /api/quests/{questId}, GET /api/me/rewards),
//! run through a Lambda Runtime API emulator against moto_server.

use domain::quests::{Claim, grant};
use domain::timestamp::Timestamp;
use serde_json::json;
use store::quests::{ClaimQuest, GetQuest, SeedQuests};
use testkit::countdowns::without_countdowns;
use testkit::events::ApiEvent;
use testkit::purchases::{PurchaseEnv, fixture};
use testkit::tokens::token;

const BINARY: &str = env!("CARGO_BIN_EXE_quests");

async fn seeded(env: &PurchaseEnv) {
    env.store
        .seed_quests(&testkit::quests::shipped())
        .await
        .unwrap();
}

#[tokio::test]
async fn answers_the_quests_with_progress_and_the_rewards() {
    let env = PurchaseEnv::new().await;
    seeded(&env).await;
    testkit::quests::open_one(&env.store, "me").await;
    let function = env
        .spawn(BINARY, &[("CURSOR_SECRET", testkit::CURSOR_SECRET)])
        .await;
    let me = Some(token("me", None));
    let list = function.call_json(fixture("quests", me.as_deref())).await;
    assert_eq!(list.status, 200, "{list:?}");
    let first = &list.body["quests"][0];
    assert_eq!(first["id"], "first-pack");
    assert_eq!(
        first["progress"],
        json!({"current": 1, "target": 1, "completed": true, "claimed": false})
    );
    let one = function
        .call_json(fixture("quests.quest", me.as_deref()))
        .await;
    assert_eq!(
        without_countdowns(one.body["quest"].clone()),
        without_countdowns(first.clone())
    );
    let unknown = function
        .call(&ApiEvent::get("/api/quests/nope").bearer(&token("me", None)))
        .await;
    assert_eq!(
        (unknown.status, unknown.code()),
        (404, Some("quest_not_found"))
    );

    let quest = env
        .store
        .get_quest(&domain::ids::QuestId::parse("first-pack").unwrap())
        .await
        .unwrap()
        .unwrap();
    let user = testkit::ids::user("me");
    let grant = grant(&quest, &user);
    let claim = Claim::new(&quest, &user, "k", &grant, Timestamp::now());
    env.store.claim_quest(&claim, &grant).await.unwrap();
    let rewards = function
        .call_json(fixture("quests.rewards", me.as_deref()))
        .await;
    assert_eq!(rewards.status, 200, "{rewards:?}");
    assert_eq!(rewards.body["rewards"][0]["questId"], "first-pack");
    assert_eq!(rewards.body["nextCursor"], serde_json::Value::Null);
    let after = function
        .call_json(fixture("quests.quest", me.as_deref()))
        .await;
    assert_eq!(after.body["quest"]["progress"]["claimed"], true);
}

#[tokio::test]
async fn missing_auth_settings_stop_the_function_with_a_clear_message() {
    testkit::runtime_api::assert_init_needs_auth(BINARY).await;
}

#[tokio::test]
async fn a_missing_cursor_secret_stops_the_function_with_a_clear_message() {
    testkit::mine::assert_init_needs_cursor_secret(BINARY).await;
}

#[tokio::test]
async fn a_dynamodb_outage_is_a_503_with_retry_after() {
    let (env, proxy) = PurchaseEnv::behind_proxy().await;
    let function = env
        .spawn(BINARY, &[("CURSOR_SECRET", testkit::CURSOR_SECRET)])
        .await;
    let event = ApiEvent::get("/api/quests").bearer(&token("fan-1", None));
    testkit::purchases::assert_outage_then_recovery(&function, &proxy, &event).await;
}
