//! local-api counts each request on its connection's peer address and on the signed-in fan, as
//! the functions count on API Gateway's `sourceIp` (`RATE_LIMIT_*`): the fields on every answer of
//! a limited route, the 429 past a quota, and the routes outside the API not limited.

use crate::common;

use common::LocalApi;

#[tokio::test]
async fn reads_past_the_address_quota_are_refused_with_the_fields() {
    let api = LocalApi::start_with(&[("RATE_LIMIT_READ", "fan=100/60,addr=2/60")]).await;
    let client = reqwest::Client::new();
    let get = |path: &str| client.get(format!("{}{path}", api.base)).send();

    for remaining in ["1", "0"] {
        let served = get("/api/packs").await.unwrap();
        assert_eq!(served.status(), 200);
        assert_eq!(
            served.headers()["ratelimit-policy"],
            r#""addr-read";q=2;w=60"#
        );
        let limit = served.headers()["ratelimit"].to_str().unwrap().to_owned();
        assert!(
            limit.starts_with(&format!(r#""addr-read";r={remaining};t="#)),
            "{limit}"
        );
    }

    let refused = get("/api/packs").await.unwrap();
    assert_eq!(refused.status(), 429);
    let retry_after: u32 = refused.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=63).contains(&retry_after), "{retry_after}");
    assert!(refused.headers().contains_key("ratelimit"));
    let body: serde_json::Value = refused.json().await.unwrap();
    assert_eq!(body["error"]["code"], "rate_limited");

    // The server's own pages are no route of the API: never counted.
    let document = get("/openapi.json").await.unwrap();
    assert_eq!(document.status(), 200);
    assert!(!document.headers().contains_key("ratelimit"));
}
