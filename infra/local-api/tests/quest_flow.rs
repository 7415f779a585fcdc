//! `scripts/local`'s example flow (start, pay, open a pack as the demo user) completes the
//! shipped quest `first-pack`, which the demo user then claims, once: every answer checked
//! against `openapi.yaml`.

mod common;

use common::LocalApi;
use serde_json::{Value, json};

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
    let (status, before) = api
        .call(
            client.get(url("/api/quests")).bearer_auth(&token),
            "get",
            "/api/quests",
        )
        .await;
    assert_eq!(status, 200, "{before}");
    assert_eq!(quest(&before)["progress"]["completed"], false);

    // The flow local-api prints at start.
    let purchases = "/api/packs/nba-rookie-2026/purchases";
    let send = |request: reqwest::RequestBuilder| async {
        let response = request.bearer_auth(&token).send().await.unwrap();
        response.json::<Value>().await.unwrap()
    };
    let started = send(
        client
            .post(url(purchases))
            .header("idempotency-key", "my-first-buy"),
    )
    .await;
    let id = started["purchase"]["id"].as_str().unwrap().to_owned();
    send(
        client
            .put(url(&format!("{purchases}/{id}")))
            .json(&json!({"payment": {"method": "cash"}})),
    )
    .await;
    let opened = send(client.post(url(&format!("{purchases}/{id}/open")))).await;
    assert_eq!(opened["purchase"]["status"], "opened", "{opened}");

    let (_, after) = api
        .call(
            client.get(url("/api/quests")).bearer_auth(&token),
            "get",
            "/api/quests",
        )
        .await;
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

    let (_, rewards) = api
        .call(
            client.get(url("/api/me/rewards")).bearer_auth(&token),
            "get",
            "/api/me/rewards",
        )
        .await;
    assert_eq!(rewards["rewards"], json!([claimed["reward"]]));
    let (_, ledger) = api
        .call(
            client
                .get(url("/api/me/cash/transactions"))
                .bearer_auth(&token),
            "get",
            "/api/me/cash/transactions",
        )
        .await;
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
