//! A web app on another origin uses the API through local-api in Chromium: with a bearer token
//! it lists packs, reads the fan's Cash, starts a purchase with an `Idempotency-Key` (and again,
//! replayed), and reads `RateLimit`, `Location` and `Idempotent-Replayed` (exposed headers).
//! The same page from an origin not allowed gets nothing: fetch rejects every call, and its
//! purchase start never reaches the function (its preflight is refused).

use crate::common;

use common::LocalApi;
use serde_json::Value;

use super::{dump_dom, serve_page, text_of};

const PAGE: &str = include_str!("cors_page.html");
const PACK: &str = "nba-rookie-2026";

/// What the page from `origin` wrote, calling `api` with `token` and starting a purchase with
/// `key`: its calls' outcomes.
async fn outcome(origin: &str, api: &LocalApi, token: &str, key: &str) -> Value {
    let url = format!(
        "{origin}/?api={}&token={token}&pack={PACK}&key={key}",
        api.base
    );
    let dom = dump_dom(&url, &api.state_dir.join(format!("chromium-{key}"))).await;
    let written = text_of(&dom, "pre", "outcome")
        .unwrap_or_else(|| panic!("no outcome in the page from {origin}:\n{dom}"));
    serde_json::from_str(&written)
        .unwrap_or_else(|_| panic!("the page from {origin} did not finish: {written}\n{dom}"))
}

#[tokio::test]
async fn a_page_on_an_allowed_origin_uses_the_api_and_another_origin_is_refused() {
    // The same page from two origins; only the first is allowed.
    let allowed = serve_page(PAGE).await;
    let other = serve_page(PAGE).await;
    let api = LocalApi::start_with(&[("LOCAL_API_CORS_ORIGINS", &allowed)]).await;
    let token = api.token("demo-user", None).await;

    let seen = outcome(&allowed, &api, &token, "browser-buy").await;
    assert_eq!(seen["packs"]["status"], 200, "{seen}");
    assert!(seen["packs"]["packs"].as_u64().unwrap() > 0, "{seen}");
    for call in ["packs", "simple"] {
        let limit = seen[call]["rateLimit"].as_str().unwrap_or_default();
        assert!(
            limit.contains(";r="),
            "{call}: RateLimit not readable: {seen}"
        );
    }
    assert!(seen["packs"]["rateLimitPolicy"].is_string(), "{seen}");
    let balances = seen["cash"]["balances"].as_array().expect("balances read");
    assert!(!balances.is_empty(), "{seen}");
    assert_eq!(seen["start"]["status"], 201, "{seen}");
    let id = seen["start"]["id"].as_str().unwrap();
    assert!(
        seen["start"]["location"]
            .as_str()
            .is_some_and(|location| location.ends_with(id)),
        "{seen}"
    );
    assert_eq!(seen["again"]["id"], id, "{seen}");
    assert_eq!(seen["again"]["replayed"], "true", "{seen}");

    let refused = outcome(&other, &api, &token, "refused-buy").await;
    for call in ["packs", "simple", "cash", "start", "again"] {
        assert_eq!(
            refused[call]["error"], "TypeError: Failed to fetch",
            "{call}: {refused}"
        );
    }
    let (status, mine) = api.get_as(&token, "/api/me/purchases").await;
    assert_eq!(status, 200);
    let ids: Vec<&str> = mine["purchases"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|purchase| purchase["id"].as_str())
        .collect();
    assert_eq!(
        ids,
        [id],
        "the refused origin's start reached the API: {mine}"
    );
}
