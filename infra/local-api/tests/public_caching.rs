//! Issue 45: each public read answers the `Cache-Control` its route declares
//! (`Routes::public`), an `ETag` of its bytes, and 304 without a body to a matching
//! `If-None-Match` (an answer that holds its own moment never matches another's); a
//! request carrying a session token is answered `private` (the edge keeps none); on both stores:
//! local-api in process, and `--dynamodb` on moto, seeded alike.

use crate::common::LocalApi;

/// Public reads the shipped seed answers 200, with the `Cache-Control` each declares
/// (docs/edge.md, "Freshness per route").
const READS: &[(&str, &str)] = &[
    ("/api/packs", "public, max-age=2, stale-while-revalidate=2"),
    (
        "/api/packs/nba-rookie-2026",
        "public, max-age=2, stale-while-revalidate=2",
    ),
    (
        "/api/leagues",
        "public, max-age=60, stale-while-revalidate=600",
    ),
    (
        "/api/leagues/nba",
        "public, max-age=60, stale-while-revalidate=600",
    ),
    (
        "/api/teams",
        "public, max-age=60, stale-while-revalidate=600",
    ),
    (
        "/api/teams/nba-lal",
        "public, max-age=60, stale-while-revalidate=600",
    ),
    (
        "/api/leaderboards/global",
        "public, max-age=10, stale-while-revalidate=30",
    ),
    (
        "/api/config",
        "public, max-age=5, stale-while-revalidate=25",
    ),
];

/// Reads whose answer holds the moment it was made (the packs' countdowns, `…InMs`; a board's
/// `updatedAt`), so that no two answers are the same bytes: each has its own tag.
const CHANGING: &[&str] = &["/api/packs", "/api/leaderboards/global"];

async fn get(api: &LocalApi, path: &str, headers: &[(&str, &str)]) -> reqwest::Response {
    let mut request = reqwest::Client::new().get(format!("{}{path}", api.base));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.send().await.unwrap()
}

fn header<'a>(response: &'a reqwest::Response, name: &str) -> Option<&'a str> {
    response
        .headers()
        .get(name)
        .and_then(|value| value.to_str().ok())
}

async fn each_public_read_is_tagged_and_kept_as_declared(api: &LocalApi, store: &str) {
    let token = api.token("fan-caching", None).await;
    let bearer = format!("Bearer {token}");
    for (path, declared) in READS {
        let first = get(api, path, &[]).await;
        assert_eq!(first.status(), 200, "{store}: {path}");
        assert_eq!(
            header(&first, "cache-control"),
            Some(*declared),
            "{store}: {path}"
        );
        let tag = header(&first, "etag").expect("an ETag").to_owned();
        let again = get(api, path, &[("if-none-match", &tag)]).await;
        if CHANGING.contains(path) {
            // The moment of the answer is in it: another answer, another tag.
            assert_eq!(again.status(), 200, "{store}: {path}");
        } else {
            assert_eq!(
                (again.status().as_u16(), header(&again, "etag")),
                (304, Some(tag.as_str())),
                "{store}: {path}"
            );
            assert_eq!(again.bytes().await.unwrap().len(), 0, "{store}: {path}");
        }
        let stale = get(api, path, &[("if-none-match", "\"00\"")]).await;
        assert_eq!(stale.status(), 200, "{store}: {path}");
        let signed = get(api, path, &[("authorization", &bearer)]).await;
        assert_eq!(
            header(&signed, "cache-control"),
            Some(declared.replacen("public", "private", 1).as_str()),
            "{store}: {path} with a token"
        );
    }
    // What no route marks public is kept by no cache: a fan's own read, and an error.
    let mine = get(api, "/api/me/cash", &[("authorization", &bearer)]).await;
    assert_eq!(header(&mine, "cache-control"), Some("no-store"), "{store}");
    let missing = get(api, "/api/packs/no-such-pack", &[]).await;
    assert_eq!(
        (missing.status().as_u16(), header(&missing, "cache-control")),
        (404, Some("no-store")),
        "{store}"
    );
}

#[tokio::test]
async fn in_memory() {
    let api = LocalApi::start().await;
    each_public_read_is_tagged_and_kept_as_declared(&api, "in memory").await;
}

#[tokio::test]
async fn on_dynamodb() {
    let store = testkit::moto::shared_table().await;
    let packs = domain::packs::seed::parse_seed(include_bytes!("../../seed/packs.json")).unwrap();
    for pack in &packs {
        testkit::packs::save(&store, pack).await;
    }
    let catalog = domain::catalog::parse_catalog(include_str!("../../seed/catalog.json")).unwrap();
    store::catalog::seed_catalog(&store, &catalog)
        .await
        .unwrap();
    let api = LocalApi::start_args(
        &["--dynamodb"],
        &[
            ("TABLE_NAME", store.table()),
            (
                "AWS_ENDPOINT_URL_DYNAMODB",
                testkit::moto::shared_endpoint(),
            ),
            ("AWS_ACCESS_KEY_ID", "testing"),
            ("AWS_SECRET_ACCESS_KEY", "testing"),
            ("AWS_REGION", "us-east-1"),
        ],
    )
    .await;
    each_public_read_is_tagged_and_kept_as_declared(&api, "on DynamoDB").await;
}
