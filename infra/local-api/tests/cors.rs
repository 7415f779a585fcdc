//! local-api answers CORS as API Gateway does with `template.yaml`'s `CorsConfiguration` (both
//! from `api::http::cors`): a preflight is answered before any route, with the declared methods,
//! headers and max age for a listed origin and no CORS header for another; an actual answer to a
//! listed origin names it and exposes the declared headers, to another origin it has none; an
//! `OPTIONS` that is no preflight is routed like any request. (A browser's view of the same:
//! browser::cors_page.)

use crate::common;

use api::http::cors;
use common::LocalApi;
use reqwest::Method;
use reqwest::header::HeaderMap;

const ALLOWED: &str = "http://127.0.0.1:5173";
const OTHER: &str = "http://127.0.0.1:5174";

/// A comma-separated header's items, lower case.
fn items(headers: &HeaderMap, name: &str) -> Vec<String> {
    let value = headers.get(name).map(|v| v.to_str().unwrap()).unwrap_or("");
    value
        .split(',')
        .map(|item| item.trim().to_ascii_lowercase())
        .filter(|item| !item.is_empty())
        .collect()
}

fn lower(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| n.to_ascii_lowercase()).collect()
}

fn cors_headers(headers: &HeaderMap) -> Vec<String> {
    headers
        .keys()
        .map(ToString::to_string)
        .filter(|name| name.starts_with("access-control-"))
        .collect()
}

#[tokio::test]
async fn preflights_and_answers_carry_cors_headers_for_listed_origins_only() {
    let api = LocalApi::start_with(&[("LOCAL_API_CORS_ORIGINS", ALLOWED)]).await;
    let client = reqwest::Client::new();
    let url = format!("{}/api/packs/nba-rookie-2026/purchases", api.base);
    let preflight = |origin: &'static str| {
        client
            .request(Method::OPTIONS, &url)
            .header("origin", origin)
            .header("access-control-request-method", "POST")
            .header(
                "access-control-request-headers",
                "authorization,idempotency-key",
            )
            .send()
    };

    let allowed = preflight(ALLOWED).await.unwrap();
    assert_eq!(allowed.status(), 204);
    let headers = allowed.headers();
    assert_eq!(headers["access-control-allow-origin"], ALLOWED);
    let methods: Vec<String> = cors::allow_methods()
        .iter()
        .map(|m| m.as_str().to_ascii_lowercase())
        .collect();
    assert_eq!(items(headers, "access-control-allow-methods"), methods);
    assert_eq!(
        items(headers, "access-control-allow-headers"),
        lower(cors::ALLOW_HEADERS)
    );
    assert_eq!(
        headers["access-control-max-age"],
        cors::MAX_AGE_SECONDS.to_string().as_str()
    );
    assert!(!headers.contains_key("access-control-allow-credentials"));
    // Answered before any route: no rate limit counted, no function's answer.
    assert!(!headers.contains_key("ratelimit"), "{headers:?}");

    let other = preflight(OTHER).await.unwrap();
    assert_eq!(other.status(), 204);
    assert_eq!(cors_headers(other.headers()), Vec::<String>::new());

    // No Access-Control-Request-Method: no preflight, routed (the $default route's 405).
    let plain = client
        .request(Method::OPTIONS, &url)
        .header("origin", ALLOWED)
        .send()
        .await
        .unwrap();
    assert_eq!(plain.status(), 405);

    let read = |origin: &'static str| {
        client
            .get(format!("{}/api/packs", api.base))
            .header("origin", origin)
            .send()
    };
    let answer = read(ALLOWED).await.unwrap();
    assert_eq!(answer.status(), 200);
    assert_eq!(answer.headers()["access-control-allow-origin"], ALLOWED);
    assert_eq!(
        items(answer.headers(), "access-control-expose-headers"),
        lower(cors::EXPOSE_HEADERS)
    );
    let refused = read(OTHER).await.unwrap();
    assert_eq!(
        refused.status(),
        200,
        "served: the browser keeps it from the page"
    );
    assert_eq!(cors_headers(refused.headers()), Vec::<String>::new());
}

#[tokio::test]
async fn the_usual_dev_servers_are_allowed_by_default_and_a_bad_origin_stops_the_start() {
    let api = LocalApi::start().await;
    assert!(
        api.printed_line("CORS")
            .await
            .contains("http://localhost:5173, http://localhost:3000"),
    );
    let answer = reqwest::Client::new()
        .get(format!("{}/api/packs", api.base))
        .header("origin", "http://localhost:5173")
        .send()
        .await
        .unwrap();
    assert_eq!(
        answer.headers()["access-control-allow-origin"],
        "http://localhost:5173"
    );

    let refused = tokio::process::Command::new(common::BINARY)
        .args(["--port", "0"])
        .env("FAN_API_STATE_DIR", &api.state_dir)
        .env("LOCAL_API_CORS_ORIGINS", "*")
        .output()
        .await
        .unwrap();
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("LOCAL_API_CORS_ORIGINS"), "{said}");
}
