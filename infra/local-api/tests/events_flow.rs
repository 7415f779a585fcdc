//! The events' feeds on local-api (issue 46): a fan's change is in their own feed, with the same
//! body an operator reads by id; the operators' routes take the printed key (local-api's stand-in
//! for IAM) and nothing else. Every answer checked against `openapi.yaml`.

use crate::common;

use common::LocalApi;
use serde_json::json;

const KEY: &str = "opk_local_events_flow_test_key";

#[tokio::test]
async fn a_link_is_in_the_fans_feed_and_operators_read_it_with_the_printed_key() {
    let api = LocalApi::start_with(&[("LOCAL_API_OPERATOR_KEY", KEY)]).await;
    assert!(api.printed_line(KEY).await.contains("/api/events"));
    let client = reqwest::Client::new();
    let token = api.token("events-fan", None).await;
    let linked = client
        .post(format!("{}/api/web3-link", api.base))
        .bearer_auth(&token)
        .json(&json!({"payload": {"address": "0xfeed"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(linked.status(), 200);

    let (status, mine) = api.get_as(&token, "/api/me/events").await;
    assert_eq!(status, 200, "{mine}");
    assert_eq!(mine["events"][0]["type"], "wallet.linked");
    assert_eq!(mine["events"][0]["sequence"], 1);
    assert_eq!(mine["nextAfter"], 1);

    let id = mine["events"][0]["id"].as_str().unwrap();
    let by_id = client
        .get(format!("{}/api/events/{id}", api.base))
        .bearer_auth(KEY);
    let (status, read) = api.call(by_id, "get", "/api/events/{eventId}").await;
    assert_eq!(status, 200);
    assert_eq!(read, mine["events"][0], "the same body in both");

    // A fan's token is no operator's key, and the key is no fan's token.
    let (status, refused) = api.get_as(&token, "/api/events").await;
    assert_eq!(
        (status, &refused["error"]["code"]),
        (403, &json!("operator_required"))
    );
    let (status, _) = api.get_as(KEY, "/api/me/events").await;
    assert_eq!(status, 401);
}
