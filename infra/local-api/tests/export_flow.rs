//! `scripts/local`'s example flow (start, pay, open a pack as the demo user), then the fan's
//! export, walked page by page, holds what it did; every page checked against `openapi.yaml`.

use crate::common;

use common::LocalApi;
use serde_json::{Value, json};

#[tokio::test]
async fn after_the_example_flow_the_export_holds_what_it_did() {
    let api = LocalApi::start().await;
    let client = reqwest::Client::new();
    let token = api.token("demo-user", None).await;
    let url = |path: &str| format!("{}{path}", api.base);
    let purchases = "/api/packs/nba-rookie-2026/purchases";
    let send = |request: reqwest::RequestBuilder| async {
        let response = request.bearer_auth(&token).send().await.unwrap();
        response.json::<Value>().await.unwrap()
    };
    let started = send(
        client
            .post(url(purchases))
            .header("idempotency-key", "export-buy"),
    )
    .await;
    let id = started["purchase"]["id"].as_str().unwrap().to_owned();
    let pay = json!({"payment": {"method": "cash"}});
    send(client.put(url(&format!("{purchases}/{id}"))).json(&pay)).await;
    let opened = send(client.post(url(&format!("{purchases}/{id}/open")))).await;
    assert_eq!(opened["purchase"]["status"], "opened", "{opened}");

    let pages = testkit::mine::pages("", |query| {
        let request = client
            .get(url(&format!("/api/me/export?{query}")))
            .bearer_auth(&token);
        api.call(request, "get", "/api/me/export")
    })
    .await;
    let items = |section| testkit::mine::export_items(&pages, section);
    let exported = items("purchases");
    let mine = exported.iter().find(|p| p["id"] == id.as_str()).unwrap();
    assert_eq!(mine["items"], opened["purchase"]["items"]);
    assert!(
        items("ledger")
            .iter()
            .any(|entry| entry["type"] == "debit" && entry["purchaseId"] == id.as_str())
    );
    assert!(!items("balances").is_empty());
    assert_eq!(pages.last().unwrap()["section"], "sessions");
}
