//! The quests through the handlers, on the in-memory store: the shipped quests with a fan's
//! progress, a claim's refusals (each writing nothing), the claim and its replay, the rewards
//! list and the ledger entry naming the quest.

use std::sync::Arc;

use api::http::routes::{me_cash_routes, quest_claims_routes, quests_routes};
use api::state::MeState;
use domain::quests::{Goal, Quest};
use domain::timestamp::Timestamp;
use serde_json::{Value, json};
use store::MemoryStore;
use store::cash::GetBalance;
use store::quests::SeedQuests;
use testkit::events::{ApiEvent, call, parts};
use testkit::tokens::token;

/// A quest of one opening, on from `starts` to `ends` days from now, of 5 cents.
fn one_opening(id: &str, starts: i64, ends: i64) -> Quest {
    let now = Timestamp::now();
    Quest {
        id: domain::ids::QuestId::parse(id).unwrap(),
        name: id.into(),
        description: String::new(),
        starts_at: now.plus_seconds(starts * 86_400).unwrap(),
        ends_at: now.plus_seconds(ends * 86_400).unwrap(),
        goal: Goal::OpenPacks {
            count: 1,
            league_id: None,
            pack_id: None,
        },
        reward: domain::quests::Reward::Cash {
            amount: 5,
            currency: "USD".into(),
        },
        league_packs: None,
    }
}

/// The shipped quests, one that ended 8 days ago (not listed, no longer claimable) and another
/// of one opening.
async fn state() -> Arc<MeState<MemoryStore>> {
    let store = MemoryStore::default();
    let mut quests = testkit::quests::shipped();
    quests.push(one_opening("long-gone", -30, -8));
    quests.push(one_opening("also-one", -30, 30));
    store.seed_quests(&quests).await.unwrap();
    Arc::new(MeState {
        store,
        verifier: testkit::tokens::verifier(),
        cursors: testkit::cursor_signer(),
        revealed: Default::default(),
    })
}

async fn open_one(state: &MeState<MemoryStore>, fan: &str) {
    testkit::quests::open_one(&state.store, fan).await;
}

async fn get(state: &Arc<MeState<MemoryStore>>, fan: &str, path: &str) -> (u16, Value) {
    let (path, query) = path.split_once('?').unwrap_or((path, ""));
    let event = ApiEvent::get(path).query(query).bearer(&token(fan, None));
    let routes = if path.starts_with("/api/me/cash") {
        me_cash_routes()
    } else {
        quests_routes()
    };
    parts(&call(routes, state, event.request()).await)
}

async fn claim(
    state: &Arc<MeState<MemoryStore>>,
    fan: &str,
    quest: &str,
    key: Option<&str>,
) -> (u16, Option<String>, Value) {
    let mut event = ApiEvent::post(&format!("/api/quests/{quest}/claim")).bearer(&token(fan, None));
    if let Some(key) = key {
        event = event.header("Idempotency-Key", key);
    }
    let response = call(quest_claims_routes(), state, event.request()).await;
    let replayed = response
        .headers()
        .get("Idempotent-Replayed")
        .map(|v| v.to_str().unwrap().to_owned());
    let (status, body) = parts(&response);
    (status, replayed, body)
}

fn code(body: &Value) -> &str {
    body["error"]["code"].as_str().unwrap_or("-")
}

async fn balance(state: &MeState<MemoryStore>, fan: &str) -> u64 {
    state
        .store
        .get_balance(&testkit::ids::user(fan), "USD")
        .await
        .unwrap()
}

#[tokio::test]
async fn the_active_quests_show_the_fans_progress() {
    let state = state().await;
    let (status, body) = get(&state, "fan_1", "/api/quests").await;
    assert_eq!(status, 200, "{body}");
    let ids: Vec<&str> = body["quests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "also-one",
            "first-pack",
            "gunners-trio",
            "legend-hunter",
            "nba-regular",
            "rookie-double"
        ]
    );
    let first = &body["quests"][1];
    assert_eq!(first["goal"], json!({"type": "open_packs", "count": 1}));
    assert_eq!(
        first["reward"],
        json!({"type": "cash", "amount": 100, "currency": "USD"})
    );
    assert_eq!(
        first["progress"],
        json!({"current": 0, "target": 1, "completed": false, "claimed": false})
    );
    assert!(first.get("leaguePacks").is_none(), "{first}");

    open_one(&state, "fan_1").await;
    let (status, body) = get(&state, "fan_1", "/api/quests/first-pack").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["quest"]["progress"],
        json!({"current": 1, "target": 1, "completed": true, "claimed": false})
    );
    // An ended quest is still there by id.
    assert_eq!(get(&state, "fan_1", "/api/quests/long-gone").await.0, 200);
    let unknown = get(&state, "fan_1", "/api/quests/nope").await;
    assert_eq!((unknown.0, code(&unknown.1)), (404, "quest_not_found"));
    let not_an_id = get(&state, "fan_1", "/api/quests/a%20b").await;
    assert_eq!((not_an_id.0, code(&not_an_id.1)), (404, "not_found"));
}

#[tokio::test]
async fn refused_claims_are_clear_and_write_nothing() {
    let state = state().await;
    let too_long = "k".repeat(256);
    for (quest, key, expected) in [
        ("first-pack", None, (400, "missing_idempotency_key")),
        (
            "first-pack",
            Some(too_long.as_str()),
            (400, "invalid_idempotency_key"),
        ),
        (
            "first-pack",
            Some("a key"),
            (400, "invalid_idempotency_key"),
        ),
        ("first-pack", Some("k1"), (409, "quest_not_completed")),
        ("nope", Some("k1"), (404, "quest_not_found")),
        ("a%20b", Some("k1"), (404, "not_found")),
    ] {
        let (status, _, body) = claim(&state, "fan_1", quest, key).await;
        assert_eq!((status, code(&body)), expected, "{quest} {key:?}");
    }
    open_one(&state, "fan_1").await;
    let (status, _, body) = claim(&state, "fan_1", "long-gone", Some("k2")).await;
    assert_eq!((status, code(&body)), (410, "quest_ended"));
    assert_eq!(balance(&state, "fan_1").await, 0);
    let (_, rewards) = get(&state, "fan_1", "/api/me/rewards").await;
    assert_eq!(rewards, json!({"rewards": [], "nextCursor": null}));
}

#[tokio::test]
async fn a_completed_quest_is_claimed_once_and_listed_with_its_ledger_entry() {
    let state = state().await;
    open_one(&state, "fan_1").await;
    let (status, replayed, first) = claim(&state, "fan_1", "first-pack", Some("k1")).await;
    assert_eq!((status, replayed), (201, None), "{first}");
    assert_eq!(first["reward"]["questId"], "first-pack");
    assert_eq!(
        first["reward"]["reward"],
        json!({"type": "cash", "amount": 100, "currency": "USD"})
    );
    // Again, with the same key or another: the first claim, replayed; credited once.
    for key in ["k1", "k2"] {
        let (status, replayed, again) = claim(&state, "fan_1", "first-pack", Some(key)).await;
        assert_eq!((status, replayed.as_deref()), (201, Some("true")));
        assert_eq!(again, first);
    }
    assert_eq!(balance(&state, "fan_1").await, 100);
    // The first claim's key names it: another quest's claim with it is refused.
    let (status, _, body) = claim(&state, "fan_1", "also-one", Some("k1")).await;
    assert_eq!((status, code(&body)), (422, "idempotency_key_reused"));

    let (_, quest) = get(&state, "fan_1", "/api/quests/first-pack").await;
    assert_eq!(quest["quest"]["progress"]["claimed"], true);
    let (_, rewards) = get(&state, "fan_1", "/api/me/rewards").await;
    assert_eq!(rewards["rewards"], json!([first["reward"]]));
    let (_, ledger) = get(&state, "fan_1", "/api/me/cash/transactions").await;
    let entry = &ledger["transactions"][0];
    assert_eq!(
        (
            &entry["type"],
            &entry["amount"],
            &entry["questId"],
            &entry["purchaseId"]
        ),
        (
            &json!("credit"),
            &json!(100),
            &json!("first-pack"),
            &Value::Null
        )
    );
    // Another fan's view is their own.
    let (_, theirs) = get(&state, "fan_2", "/api/me/rewards").await;
    assert_eq!(theirs["rewards"], json!([]));
}

#[tokio::test]
async fn a_pack_reward_sold_out_is_a_409_then_a_claim_names_its_purchase() {
    use store::purchases::{ReleaseHolds, StartPurchase};
    let state = state().await;
    let mut pack = testkit::packs::active("p", 60);
    (pack.total_supply, pack.remaining) = (1, 1);
    testkit::packs::save(&state.store, &pack).await;
    let pack_reward = Quest {
        reward: domain::quests::Reward::Pack {
            pack_id: testkit::ids::pack("p"),
        },
        ..one_opening("pack-one", -30, 30)
    };
    state.store.seed_quests(&[pack_reward]).await.unwrap();
    open_one(&state, "fan_1").await;
    // Another fan holds the only unit: sold out, nothing written, still claimable.
    let start = testkit::purchases::start_request("fan_2", "p", "s", Timestamp::now(), 600);
    state.store.start_purchase(&start).await.unwrap();
    let (status, _, body) = claim(&state, "fan_1", "pack-one", Some("k1")).await;
    assert_eq!((status, code(&body)), (409, "sold_out"));
    let (_, quest) = get(&state, "fan_1", "/api/quests/pack-one").await;
    assert_eq!(quest["quest"]["progress"]["claimed"], false);
    // The hold runs out and the sweep brings the unit back: the same key claims it.
    let later = testkit::packs::at(700);
    state
        .store
        .release_holds(Some(&testkit::ids::pack("p")), later, 10)
        .await
        .unwrap();
    let (status, replayed, first) = claim(&state, "fan_1", "pack-one", Some("k1")).await;
    assert_eq!((status, replayed), (201, None), "{first}");
    assert_eq!(
        first["reward"]["reward"],
        json!({"type": "pack", "packId": "p"})
    );
    let purchase_id = first["reward"]["purchaseId"].as_str().unwrap();
    assert_eq!(
        purchase_id,
        domain::quests::reward_purchase_id(
            &domain::ids::QuestId::parse("pack-one").unwrap(),
            &testkit::ids::user("fan_1")
        )
        .as_str()
    );
    let (status, replayed, again) = claim(&state, "fan_1", "pack-one", Some("k2")).await;
    assert_eq!(
        (status, replayed.as_deref(), &again),
        (201, Some("true"), &first)
    );
    let (_, rewards) = get(&state, "fan_1", "/api/me/rewards").await;
    assert_eq!(rewards["rewards"], json!([first["reward"]]));
    assert_eq!(balance(&state, "fan_1").await, 0, "nothing paid");
}

#[tokio::test]
async fn rewards_page_newest_first_on_the_fans_own_cursor() {
    let state = state().await;
    state
        .store
        .seed_quests(&[one_opening("r1", -30, 30), one_opening("r2", -30, 30)])
        .await
        .unwrap();
    open_one(&state, "fan_1").await;
    for (quest, key) in [("first-pack", "k1"), ("r1", "k2"), ("r2", "k3")] {
        let (status, _, body) = claim(&state, "fan_1", quest, Some(key)).await;
        assert_eq!(status, 201, "{quest}: {body}");
    }
    let (status, first) = get(&state, "fan_1", "/api/me/rewards?limit=2").await;
    assert_eq!(status, 200, "{first}");
    let cursor = first["nextCursor"]
        .as_str()
        .expect("a second page")
        .to_owned();
    let (status, second) = get(
        &state,
        "fan_1",
        &format!("/api/me/rewards?limit=2&cursor={cursor}"),
    )
    .await;
    assert_eq!(status, 200, "{second}");
    assert_eq!(second["nextCursor"], Value::Null);
    let quests: Vec<&str> = [&first, &second]
        .iter()
        .flat_map(|page| page["rewards"].as_array().unwrap())
        .map(|reward| reward["questId"].as_str().unwrap())
        .collect();
    assert_eq!(quests, ["r2", "r1", "first-pack"], "newest first");
    // Another fan's cursor, a bad limit: a clear 400.
    for (fan, query, expected) in [
        (
            "fan_2",
            format!("limit=2&cursor={cursor}"),
            "invalid_cursor",
        ),
        ("fan_1", "cursor=forged".to_owned(), "invalid_cursor"),
        ("fan_1", "limit=0".to_owned(), "invalid_limit"),
        ("fan_1", "limit=101".to_owned(), "invalid_limit"),
    ] {
        let (status, body) = get(&state, fan, &format!("/api/me/rewards?{query}")).await;
        assert_eq!((status, code(&body)), (400, expected), "{fan} {query}");
    }
}

#[tokio::test]
async fn a_claim_made_answers_again_after_the_quest_ended() {
    use store::quests::{ClaimQuest, GetQuest};
    let state = state().await;
    // fan_1 claimed `long-gone` the day before it ended (8 days ago).
    let quest_id = domain::ids::QuestId::parse("long-gone").unwrap();
    let quest = state.store.get_quest(&quest_id).await.unwrap().unwrap();
    let fan = testkit::ids::user("fan_1");
    let grant = domain::quests::grant(&quest, &fan);
    let then = quest.ends_at.plus_seconds(-86_400).unwrap();
    let made = domain::quests::Claim::new(&quest, &fan, "k-then", &grant, then);
    state.store.claim_quest(&made, &grant).await.unwrap();
    // Claimed again now, with another key: that claim, replayed, not 410.
    let (status, replayed, body) = claim(&state, "fan_1", "long-gone", Some("k-now")).await;
    assert_eq!((status, replayed.as_deref()), (201, Some("true")), "{body}");
    assert_eq!(
        (&body["reward"]["questId"], &body["reward"]["claimedAt"]),
        (&json!("long-gone"), &json!(then.to_string()))
    );
    assert_eq!(balance(&state, "fan_1").await, 5, "credited once");
    // A fan who never claimed it: 410.
    let (status, _, body) = claim(&state, "fan_2", "long-gone", Some("k")).await;
    assert_eq!((status, code(&body)), (410, "quest_ended"));
}
