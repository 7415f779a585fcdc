//! `scripts/local`'s example flow (start, pay, open a pack as the demo user) completes the
//! shipped quest `first-pack`, which the demo user then claims, once: every answer checked
//! against `openapi.yaml`. Two openings of the rookie pack complete `rookie-double`, whose
//! reward is a rookie pack: a purchase at 0, paid, that the demo user opens. An opening puts the
//! demo user on the global board, scored with `SCORE_WEIGHTS` as the functions score; the home
//! screen (`GET /api/dashboard`) then shows the Cash, the completed quest, the drops and the rank.

use crate::common;

use common::LocalApi;
use serde_json::{Value, json};

/// The flow local-api prints at start: a rookie pack started with `key`, paid in Cash, opened.
async fn buy_and_open(api: &LocalApi, token: &str, key: &str) {
    let client = reqwest::Client::new();
    let url = |path: &str| format!("{}{path}", api.base);
    let purchases = "/api/packs/nba-rookie-2026/purchases";
    let send = |request: reqwest::RequestBuilder| async {
        let response = request.bearer_auth(token).send().await.unwrap();
        response.json::<Value>().await.unwrap()
    };
    let started = send(client.post(url(purchases)).header("idempotency-key", key)).await;
    let id = started["purchase"]["id"].as_str().unwrap().to_owned();
    send(
        client
            .put(url(&format!("{purchases}/{id}")))
            .json(&json!({"payment": {"method": "cash"}})),
    )
    .await;
    let opened = send(client.post(url(&format!("{purchases}/{id}/open")))).await;
    assert_eq!(opened["purchase"]["status"], "opened", "{opened}");
}

#[tokio::test]
async fn the_example_flow_completes_first_pack_and_its_claim_credits_once() {
    let api = LocalApi::start().await;
    let client = reqwest::Client::new();
    let token = api.token("demo-user", None).await;
    let url = |path: &str| format!("{}{path}", api.base);
    let quest = |quests: &Value| {
        quests["quests"]
            .as_array()
            .unwrap()
            .iter()
            .find(|q| q["id"] == "first-pack")
            .cloned()
            .unwrap()
    };
    let (status, before) = api.get_as(&token, "/api/quests").await;
    assert_eq!(status, 200, "{before}");
    assert_eq!(quest(&before)["progress"]["completed"], false);

    // The flow local-api prints at start.
    buy_and_open(&api, &token, "my-first-buy").await;

    let (_, after) = api.get_as(&token, "/api/quests").await;
    assert_eq!(
        quest(&after)["progress"],
        json!({"current": 1, "target": 1, "completed": true, "claimed": false})
    );
    let claim = |key: &'static str| {
        client
            .post(url("/api/quests/first-pack/claim"))
            .bearer_auth(&token)
            .header("idempotency-key", key)
    };
    let (status, claimed) = api
        .call(
            claim("my-first-claim"),
            "post",
            "/api/quests/{questId}/claim",
        )
        .await;
    assert_eq!(status, 201, "{claimed}");
    let (status, again) = api
        .call(claim("another-key"), "post", "/api/quests/{questId}/claim")
        .await;
    assert_eq!((status, &again), (201, &claimed));

    let (_, rewards) = api.get_as(&token, "/api/me/rewards").await;
    assert_eq!(rewards["rewards"], json!([claimed["reward"]]));
    let (_, ledger) = api.get_as(&token, "/api/me/cash/transactions").await;
    let credits: Vec<&Value> = ledger["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|entry| entry["questId"] == "first-pack")
        .collect();
    assert_eq!(credits.len(), 1, "{ledger}");
    assert_eq!(
        (
            &credits[0]["type"],
            &credits[0]["amount"],
            &credits[0]["currency"]
        ),
        (&json!("credit"), &json!(100), &json!("USD"))
    );
}

#[tokio::test]
async fn two_openings_complete_rookie_double_whose_pack_reward_opens() {
    let api = LocalApi::start().await;
    let client = reqwest::Client::new();
    let token = api.token("demo-user", None).await;
    for key in ["rookie-1", "rookie-2"] {
        buy_and_open(&api, &token, key).await;
    }
    let (status, quest) = api
        .call(
            client
                .get(format!("{}/api/quests/rookie-double", api.base))
                .bearer_auth(&token),
            "get",
            "/api/quests/{questId}",
        )
        .await;
    assert_eq!(status, 200, "{quest}");
    assert_eq!(quest["quest"]["progress"]["completed"], true, "{quest}");
    let (status, claimed) = api
        .call(
            client
                .post(format!("{}/api/quests/rookie-double/claim", api.base))
                .bearer_auth(&token)
                .header("idempotency-key", "my-pack-reward"),
            "post",
            "/api/quests/{questId}/claim",
        )
        .await;
    assert_eq!(status, 201, "{claimed}");
    assert_eq!(
        claimed["reward"]["reward"],
        json!({"type": "pack", "packId": "nba-rookie-2026"})
    );
    let id = claimed["reward"]["purchaseId"].as_str().unwrap();
    let purchase = format!("/api/packs/nba-rookie-2026/purchases/{id}");
    let (status, paid) = api
        .call(
            client
                .get(format!("{}{purchase}", api.base))
                .bearer_auth(&token),
            "get",
            "/api/packs/{packId}/purchases/{purchaseId}",
        )
        .await;
    assert_eq!(status, 200, "{paid}");
    assert_eq!(
        (
            &paid["purchase"]["status"],
            &paid["purchase"]["price"]["amount"]
        ),
        (&json!("completed"), &json!(0))
    );
    let (status, opened) = api
        .call(
            client
                .post(format!("{}{purchase}/open", api.base))
                .bearer_auth(&token),
            "post",
            "/api/packs/{packId}/purchases/{purchaseId}/open",
        )
        .await;
    assert_eq!(status, 200, "{opened}");
    assert_eq!(opened["purchase"]["status"], "opened");
    assert_eq!(
        opened["purchase"]["items"].as_array().map(Vec::len),
        Some(5),
        "{opened}"
    );
    let (_, rewards) = api.get_as(&token, "/api/me/rewards").await;
    assert_eq!(rewards["rewards"], json!([claimed["reward"]]));
}

#[tokio::test]
async fn an_opening_scores_on_the_board_with_the_configured_weights() {
    // Every rarity of the rookie pack at 7: whatever the draw, five items make 35.
    let weights = "common=7,rare=7,epic=7,legendary=7";
    let api = LocalApi::start_with(&[("SCORE_WEIGHTS", weights)]).await;
    let token = api.token("demo-user", None).await;
    buy_and_open(&api, &token, "scored").await;
    let (status, mine) = api
        .call(
            reqwest::Client::new()
                .get(format!("{}/api/leaderboards/global/me", api.base))
                .bearer_auth(&token),
            "get",
            "/api/leaderboards/{board}/me",
        )
        .await;
    assert_eq!(status, 200, "{mine}");
    assert_eq!(
        mine,
        json!({"board": "global", "score": 35, "rank": 1, "percentile": null})
    );
}

#[tokio::test]
async fn the_home_screen_after_the_example_flow() {
    let api = LocalApi::start().await;
    let token = api.token("demo-user", None).await;
    buy_and_open(&api, &token, "my-first-buy").await;
    let (status, home) = api.get_as(&token, "/api/dashboard").await;
    assert_eq!(status, 200, "{home}");
    let usd = home["cash"]["balances"]
        .as_array()
        .unwrap()
        .iter()
        .find(|money| money["currency"] == "USD")
        .cloned();
    assert!(
        usd.is_some_and(|usd| usd["amount"].as_u64() > Some(0)),
        "{home}"
    );
    assert_eq!(home["unopened"], json!([]), "the flow's purchase is opened");
    let first = home["quests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|quest| quest["id"] == "first-pack")
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        first["progress"],
        json!({"current": 1, "target": 1, "completed": true, "claimed": false}),
        "{home}"
    );
    let drops = home["drops"].as_array().unwrap();
    assert!(
        drops
            .iter()
            .any(|drop| drop["pack"]["id"] == "nba-rookie-2026" && drop["phase"] == "live"),
        "{home}"
    );
    assert_eq!(home["rank"]["board"], "global");
    assert_eq!(home["rank"]["rank"], 1, "{home}");
    assert!(home["rank"]["score"].as_u64() >= Some(5), "{home}");
}
