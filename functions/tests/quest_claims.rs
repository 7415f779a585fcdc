//! The real `quest-claims` binary (POST /api/quests/{questId}/claim), run through a Lambda
//! Runtime API emulator against moto_server: a claim credits once, whatever the concurrency
//! (twenty at once over four instances, behind the proxy that makes moto's requests atomic),
//! and a refused claim writes nothing.

use std::sync::Arc;

use serde_json::json;
use store::cash::GetBalance;
use store::purchases::GetPurchase;
use store::quests::{GetClaims, SeedQuests};
use testkit::events::ApiEvent;
use testkit::purchases::{Answer, PurchaseEnv, fixture};
use testkit::tokens::token;

const BINARY: &str = env!("CARGO_BIN_EXE_quest-claims");

async fn seeded(env: &PurchaseEnv) {
    env.store
        .seed_quests(&testkit::quests::shipped())
        .await
        .unwrap();
}

async fn open_one(env: &PurchaseEnv, fan: &str) {
    testkit::quests::open_one(&env.store, fan).await;
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

/// Twenty claims of `quest` by `fan-1` at once over four instances of the binary, behind the
/// proxy that makes moto's requests atomic: each answers 201, the same body, all but one replayed.
async fn twenty_claims_over_four_instances(env: &Arc<PurchaseEnv>, quest: &str) -> Answer {
    let mut functions = Vec::new();
    for _ in 0..4 {
        functions.push(
            env.spawn(BINARY, &[("CURSOR_SECRET", testkit::CURSOR_SECRET)])
                .await,
        );
    }
    let functions = Arc::new(functions);
    let quest: Arc<str> = quest.into();
    let answers = testkit::at_once(20, |i| {
        let (functions, quest) = (functions.clone(), quest.clone());
        async move {
            functions[i % 4]
                .call(&claim("fan-1", &quest, &format!("key-{i}")))
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
    answers.into_iter().next().unwrap()
}

async fn behind_the_proxy() -> (testkit::fault_proxy::FaultProxy, Arc<PurchaseEnv>) {
    let (one_at_a_time, store) = testkit::moto::atomic_table().await;
    let endpoint = one_at_a_time.endpoint();
    (
        one_at_a_time,
        Arc::new(PurchaseEnv::with(store, &endpoint).await),
    )
}

#[tokio::test]
async fn twenty_concurrent_claims_over_four_instances_credit_once() {
    let (_one_at_a_time, env) = behind_the_proxy().await;
    seeded(&env).await;
    open_one(&env, "fan-1").await;
    twenty_claims_over_four_instances(&env, "first-pack").await;
    assert_eq!(usd(&env, "fan-1").await, 100);
    assert_eq!(
        testkit::mine::ledger_sum(&env.store, "fan-1", "USD").await,
        100
    );
}

#[tokio::test]
async fn twenty_concurrent_pack_reward_claims_over_four_instances_make_one_purchase() {
    let (_one_at_a_time, env) = behind_the_proxy().await;
    testkit::packs::save(&env.store, &testkit::packs::active("p", 60)).await;
    let quest = domain::quests::Quest {
        id: domain::ids::QuestId::parse("pack-one").unwrap(),
        reward: domain::quests::Reward::Pack {
            pack_id: testkit::ids::pack("p"),
        },
        ..testkit::quests::shipped().remove(0)
    };
    env.store.seed_quests(&[quest]).await.unwrap();
    open_one(&env, "fan-1").await;
    let made = twenty_claims_over_four_instances(&env, "pack-one").await;
    let purchase_id = made.body["reward"]["purchaseId"].as_str().unwrap();
    let purchase = env
        .store
        .get_purchase(
            &testkit::ids::user("fan-1"),
            &testkit::ids::purchase(purchase_id),
        )
        .await
        .unwrap()
        .expect("the reward's purchase");
    assert_eq!(
        (purchase.price.amount, purchase.status.as_str()),
        (0, "completed")
    );
    assert_eq!(
        testkit::packs::remaining(&env.store, "p").await,
        99,
        "one unit taken"
    );
    assert_eq!(usd(&env, "fan-1").await, 0, "nothing paid");
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
    let quest = domain::ids::QuestId::parse("first-pack").unwrap();
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
