//! `scripts/local`'s example flow (start, pay, open a pack as the demo user), then the fan's own
//! view answers what it did, every answer checked against `openapi.yaml`.

use crate::common;

use common::LocalApi;
use serde_json::{Value, json};

#[tokio::test]
async fn after_the_example_flow_the_fans_view_shows_what_it_did() {
    let api = LocalApi::start().await;
    let client = reqwest::Client::new();
    let token = api.token("demo-user", None).await;
    let url = |path: &str| format!("{}{path}", api.base);
    let (_, before) = api
        .call(
            client.get(url("/api/me/cash")).bearer_auth(&token),
            "get",
            "/api/me/cash",
        )
        .await;

    // The flow local-api prints at start.
    let purchases = "/api/packs/nba-rookie-2026/purchases";
    let send = |request: reqwest::RequestBuilder| async {
        let response = request.bearer_auth(&token).send().await.unwrap();
        (
            response.status().as_u16(),
            response.json::<Value>().await.unwrap(),
        )
    };
    let (status, started) = send(
        client
            .post(url(purchases))
            .header("idempotency-key", "my-first-buy"),
    )
    .await;
    assert_eq!(status, 201, "{started}");
    let id = started["purchase"]["id"].as_str().unwrap().to_owned();
    let (_, paid) = send(
        client
            .put(url(&format!("{purchases}/{id}")))
            .json(&json!({"payment": {"method": "cash"}})),
    )
    .await;
    assert_eq!(paid["purchase"]["status"], "completed", "{paid}");
    let (_, paid_list) = api
        .call(
            client
                .get(url("/api/me/purchases?status=completed"))
                .bearer_auth(&token),
            "get",
            "/api/me/purchases",
        )
        .await;
    assert_eq!(
        paid_list["purchases"][0]["id"],
        id.as_str(),
        "paid, not opened: {paid_list}"
    );
    let (_, opened) = send(client.post(url(&format!("{purchases}/{id}/open")))).await;
    assert_eq!(opened["purchase"]["status"], "opened", "{opened}");

    let (status, mine) = api
        .call(
            client
                .get(url("/api/me/purchases?status=opened"))
                .bearer_auth(&token),
            "get",
            "/api/me/purchases",
        )
        .await;
    assert_eq!(status, 200);
    let listed = mine["purchases"].as_array().unwrap();
    assert_eq!(listed.len(), 1, "{mine}");
    assert_eq!(listed[0]["id"], id.as_str());
    assert_eq!(listed[0]["items"], opened["purchase"]["items"]);
    assert_eq!(mine["nextCursor"], Value::Null);

    let (_, items) = api
        .call(
            client.get(url("/api/me/items")).bearer_auth(&token),
            "get",
            "/api/me/items",
        )
        .await;
    let drawn = opened["purchase"]["items"].as_array().unwrap();
    let items = items["items"].as_array().unwrap();
    assert_eq!(items.len(), drawn.len());
    for (item, drawn) in items.iter().zip(drawn) {
        for field in ["slot", "itemId", "name", "rarity", "imageUrl"] {
            assert_eq!(item[field], drawn[field], "{field}");
        }
        assert_eq!(item["purchaseId"], id.as_str());
        assert_eq!(item["packId"], "nba-rookie-2026");
        assert_eq!(item["openedAt"], opened["purchase"]["openedAt"]);
    }

    // The price left the balance, and the ledger says so: newest first, the debit.
    let price = &paid["purchase"]["price"];
    let (_, after) = api
        .call(
            client.get(url("/api/me/cash")).bearer_auth(&token),
            "get",
            "/api/me/cash",
        )
        .await;
    let balance = |cash: &Value| {
        cash["balances"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["currency"] == price["currency"])
            .map(|b| b["amount"].as_u64().unwrap())
            .unwrap()
    };
    assert_eq!(
        balance(&after),
        balance(&before) - price["amount"].as_u64().unwrap()
    );
    let (_, ledger) = api
        .call(
            client
                .get(url("/api/me/cash/transactions"))
                .bearer_auth(&token),
            "get",
            "/api/me/cash/transactions",
        )
        .await;
    let newest = &ledger["transactions"][0];
    assert_eq!(newest["type"], "debit");
    assert_eq!(newest["purchaseId"], id.as_str());
    assert_eq!(newest["amount"], price["amount"]);
    assert_eq!(newest["currency"], price["currency"]);
}
