//! An account's deletion on local-api (issue 47), as `scripts/local` serves it: the demo fan
//! (who holds Cash) names themselves and is told what a deletion loses, confirms, and then no
//! public route shows them and every private route refuses their token; a repeat answers the
//! first outcome. Every answer checked against `openapi.yaml`.

use crate::common;

use common::LocalApi;
use serde_json::json;

#[tokio::test]
async fn the_demo_fan_confirms_and_leaves_no_trace() {
    let api = LocalApi::start().await;
    let client = reqwest::Client::new();
    let token = api.token("demo-user", None).await;
    let url = |path: &str| format!("{}{path}", api.base);
    let named = client
        .patch(url("/api/me"))
        .bearer_auth(&token)
        .json(&json!({"displayName": "LeavingFan"}))
        .send()
        .await
        .unwrap();
    assert_eq!(named.status(), 200);
    let public_face = || async {
        let request = client.get(url("/api/locker-rooms/LeavingFan"));
        let path = "/api/locker-rooms/{displayName}";
        api.call(request, "get", path).await.0
    };
    assert_eq!(public_face().await, 200);

    let delete = |body: Option<serde_json::Value>| {
        let request = client
            .delete(url("/api/me"))
            .bearer_auth(&token)
            .header("idempotency-key", "leave-1");
        match body {
            Some(body) => request.json(&body),
            None => request,
        }
    };
    let (status, told) = api.call(delete(None), "delete", "/api/me").await;
    assert_eq!(
        (status, &told["error"]["code"]),
        (409, &json!("confirmation_required"))
    );
    assert!(told["error"]["losses"]["cash"]["USD"].as_u64().unwrap() > 0);
    let (status, _) = api.get_as(&token, "/api/me/cash").await;
    assert_eq!(status, 200, "nothing deleted before the confirmation");

    let (status, done) = api
        .call(delete(Some(json!({"confirm": true}))), "delete", "/api/me")
        .await;
    assert_eq!(
        (status, &done["status"]),
        (200, &json!("deleted")),
        "{done}"
    );
    assert_eq!(public_face().await, 404, "the public face is gone");
    for path in [
        "/api/me",
        "/api/me/cash",
        "/api/me/purchases",
        "/api/dashboard",
    ] {
        let (status, refused) = api.get_as(&token, path).await;
        assert_eq!(
            (status, &refused["error"]["code"]),
            (401, &json!("session_revoked")),
            "{path}"
        );
    }
    let (status, again) = api.call(delete(None), "delete", "/api/me").await;
    assert_eq!(status, 200);
    assert_eq!(again["requestedAt"], done["requestedAt"]);
}
