//! The real `local-api` binary (embedded store, local identity provider, the production token
//! verifier fetching the local JWKS over loopback) answers as `openapi.yaml` says: every status
//! it returns is documented for the operation, and every body matches the documented schema.

use crate::common;

use common::LocalApi;
use serde_json::{Value, json};

#[tokio::test]
async fn both_operations_answer_as_documented() {
    let api = LocalApi::start().await;
    let client = reqwest::Client::new();
    let packs = format!("{}/api/packs", api.base);
    let link = format!("{}/api/web3-link", api.base);

    // The checks below can fail: the document's schemas refuse a malformed list.
    let list_schema = api.response_schema("get", "/api/packs", 200);
    assert!(!jsonschema::is_valid(
        &list_schema,
        &json!({"packs": [{"id": "x"}], "nextCursor": null})
    ));
    assert!(jsonschema::is_valid(
        &list_schema,
        &json!({"packs": [], "nextCursor": null})
    ));

    let (status, body) = api.call(client.get(&packs), "get", "/api/packs").await;
    assert_eq!(status, 200);
    assert!(
        body["packs"].as_array().unwrap().len() >= 5,
        "the shipped seed is listed"
    );
    let (status, page) = api
        .call(
            client.get(&packs).query(&[("limit", "2")]),
            "get",
            "/api/packs",
        )
        .await;
    assert_eq!((status, page["packs"].as_array().unwrap().len()), (200, 2));
    let cursor = page["nextCursor"].as_str().unwrap();
    let (status, _) = api
        .call(
            client
                .get(&packs)
                .query(&[("limit", "2"), ("cursor", cursor)]),
            "get",
            "/api/packs",
        )
        .await;
    assert_eq!(status, 200);
    for query in [("limit", "0"), ("limit", "x"), ("cursor", "forged")] {
        assert_eq!(
            api.call(client.get(&packs).query(&[query]), "get", "/api/packs")
                .await
                .0,
            400
        );
    }

    let token = api.token("contract-user", Some("fan@example.com")).await;
    let (status, body) = api
        .call(
            client
                .post(&link)
                .bearer_auth(&token)
                .json(&json!({"payload": {"address": "0x1"}})),
            "post",
            "/api/web3-link",
        )
        .await;
    assert_eq!(
        (status, &body["data"]["userId"]),
        (200, &json!("contract-user"))
    );
    let no_email = api.token("no-email", None).await;
    let (status, body) = api
        .call(
            client
                .post(&link)
                .bearer_auth(&no_email)
                .json(&json!({"payload": 1})),
            "post",
            "/api/web3-link",
        )
        .await;
    assert_eq!((status, &body["data"]["email"]), (200, &Value::Null));

    let cases = [
        (client.post(&link).json(&json!({"payload": 1})), 401),
        (
            client
                .post(&link)
                .bearer_auth("x.y.z")
                .json(&json!({"payload": 1})),
            401,
        ),
        (
            client
                .post(&link)
                .bearer_auth(&token)
                .json(&json!({"payload": 0})),
            400,
        ),
        (
            client
                .post(&link)
                .bearer_auth(&token)
                .header("content-type", "application/json")
                .body("{"),
            400,
        ),
        (
            client
                .post(&link)
                .bearer_auth(&token)
                .header("content-type", "text/plain")
                .body("{}"),
            415,
        ),
        (
            client
                .post(&link)
                .bearer_auth(&token)
                .header("content-type", "application/json")
                .body(vec![b' '; 70_000]),
            413,
        ),
    ];
    for (request, expected) in cases {
        assert_eq!(
            api.call(request, "post", "/api/web3-link").await.0,
            expected
        );
    }
}

#[tokio::test]
async fn unknown_routes_and_methods_get_json_404_and_405() {
    let api = LocalApi::start().await;
    let client = reqwest::Client::new();
    let response = client
        .get(format!("{}/api/nothing", api.base))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], "not_found");
    for (method, path, allow) in [
        ("DELETE", "/api/packs", "GET"),
        ("GET", "/api/web3-link", "POST"),
    ] {
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let response = client
            .request(method, format!("{}{path}", api.base))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 405, "{path}");
        assert_eq!(response.headers()["allow"], allow);
    }
    let jwks: Value = client
        .get(format!("{}/.well-known/jwks.json", api.base))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(jwks["keys"][0]["alg"], "ES256");
}

/// The wallets through the real local-api: a link adds one, the list and the refusals answer as
/// documented, a removal is a 204 without a body.
#[tokio::test]
async fn the_wallets_answer_as_documented() {
    let api = LocalApi::start().await;
    let client = reqwest::Client::new();
    let token = api.token("wallet-fan", None).await;
    let link = format!("{}/api/web3-link", api.base);
    let wallets = format!("{}/api/me/wallets", api.base);
    for n in 0..20 {
        let payload = json!({"payload": {"address": format!("0x{n:040x}")}});
        let (status, _) = api
            .call(
                client.post(&link).bearer_auth(&token).json(&payload),
                "post",
                "/api/web3-link",
            )
            .await;
        assert_eq!(status, 200);
    }
    let (status, body) = api
        .call(
            client
                .post(&link)
                .bearer_auth(&token)
                .json(&json!({"payload": "one too many"})),
            "post",
            "/api/web3-link",
        )
        .await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (409, &json!("wallet_limit_reached"))
    );

    let (status, body) = api
        .call(
            client.get(&wallets).bearer_auth(&token),
            "get",
            "/api/me/wallets",
        )
        .await;
    assert_eq!(status, 200);
    let listed = body["wallets"].as_array().unwrap();
    assert_eq!(listed.len(), 20);
    let id = listed[0]["id"].as_str().unwrap();

    let one = format!("{wallets}/{id}");
    let removed = client
        .delete(&one)
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(removed.status(), 204);
    assert!(removed.bytes().await.unwrap().is_empty());
    let (status, body) = api
        .call(
            client.delete(&one).bearer_auth(&token),
            "delete",
            "/api/me/wallets/{walletId}",
        )
        .await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (404, &json!("wallet_not_found"))
    );
}
