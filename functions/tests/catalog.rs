//! The real `catalog` binary, run through a Lambda Runtime API emulator against moto_server.

use std::time::Duration;

use domain::catalog::parse_catalog;
use serde_json::Value;
use store::DynamoStore;
use store::catalog::seed_catalog;
use testkit::events::ApiEvent;
use testkit::fault_proxy::{Fault, FaultProxy, THROTTLING, counts};
use testkit::runtime_api::{Outcome, RuntimeApi, http_parts};

const BINARY: &str = env!("CARGO_BIN_EXE_catalog");
const TIMEOUT: Duration = Duration::from_secs(30);
const CATALOG: &str = include_str!("../../infra/seed/catalog.json");

fn spawn(runtime: &RuntimeApi, table: &str, endpoint: &str) -> tokio::process::Child {
    runtime.spawn(
        BINARY,
        &[
            ("TABLE_NAME", table),
            ("CURSOR_SECRET", testkit::CURSOR_SECRET),
            ("AWS_ENDPOINT_URL_DYNAMODB", endpoint),
            ("RUST_LOG", "warn"),
        ],
    )
}

/// A table holding the shipped catalogue, written as seed-packs writes it.
async fn seeded() -> DynamoStore {
    let store = testkit::moto::shared_table().await;
    seed_catalog(&store, &parse_catalog(CATALOG).unwrap())
        .await
        .unwrap();
    store
}

/// Status, JSON body and headers of the answer to `event`.
async fn call(runtime: &RuntimeApi, event: Value) -> (u16, Value, Value) {
    let outcome = runtime.invoke(event, TIMEOUT).await.expect("answered");
    let (status, body) = http_parts(&outcome);
    let Outcome::Response(document) = outcome else {
        unreachable!("http_parts accepted it")
    };
    (status, body, document["headers"].clone())
}

async fn get(runtime: &RuntimeApi, path: &str, query: &str) -> (u16, Value, Value) {
    call(runtime, ApiEvent::get(path).query(query).to_json()).await
}

#[tokio::test]
async fn serves_the_catalogue_over_the_runtime_api() {
    let store = seeded().await;
    let runtime = RuntimeApi::start().await;
    let mut function = spawn(&runtime, store.table(), testkit::moto::shared_endpoint());

    let (status, body, headers) = get(&runtime, "/api/leagues", "").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        headers["cache-control"],
        "public, max-age=60, stale-while-revalidate=600"
    );
    assert_eq!(body["leagues"].as_array().map(Vec::len), Some(7));

    // The NBA's 30 teams, ten a page, each page one Query of GSI1.
    let (mut seen, mut query) = (Vec::new(), "leagueId=nba&limit=10".to_owned());
    loop {
        let (status, body, _) = get(&runtime, "/api/teams", &query).await;
        assert_eq!(status, 200, "{body}");
        for team in body["teams"].as_array().unwrap() {
            assert_eq!(team["leagueId"], "nba");
            seen.push(team["id"].as_str().unwrap().to_owned());
        }
        match body["nextCursor"].as_str() {
            Some(cursor) => query = format!("leagueId=nba&limit=10&cursor={cursor}"),
            None => break,
        }
    }
    assert_eq!(seen.len(), 30);
    assert_eq!(seen[0], "nba-phi", "the 76ers first: by name");

    let (status, body, _) = get(&runtime, "/api/teams/premier-league-ars", "").await;
    assert_eq!(
        (status, body["team"]["name"].as_str()),
        (200, Some("Arsenal"))
    );
    for (path, query, status, code) in [
        ("/api/leagues/mls", "", 404, "league_not_found"),
        ("/api/teams/nba-zzz", "", 404, "team_not_found"),
        ("/api/teams", "leagueId=mls", 404, "league_not_found"),
        ("/api/teams", "leagueId=a%2Fb", 400, "invalid_query"),
        ("/api/leagues", "cursor=x", 400, "invalid_cursor"),
        ("/api/teams/..", "", 404, "not_found"),
        ("/api/unknown", "", 404, "not_found"),
    ] {
        let (actual, body, _) = get(&runtime, path, query).await;
        assert_eq!(
            (actual, body["error"]["code"].as_str()),
            (status, Some(code)),
            "{path}?{query}: {body}"
        );
    }
    let (status, body, headers) = call(
        &runtime,
        ApiEvent::new("DELETE", "/api/teams/nba-lal").to_json(),
    )
    .await;
    assert_eq!(
        (status, headers["allow"].as_str()),
        (405, Some("GET")),
        "{body}"
    );
    assert!(
        function.try_wait().unwrap().is_none(),
        "the same process answered throughout"
    );
}

/// `infra/events/catalog.*.json`, as API Gateway sends them, answered over the shipped catalogue.
#[tokio::test]
async fn the_event_fixtures_get_the_shipped_catalogue() {
    let store = seeded().await;
    let runtime = RuntimeApi::start().await;
    let _function = spawn(&runtime, store.table(), testkit::moto::shared_endpoint());
    for (fixture, member) in [
        ("leagues", "leagues"),
        ("league", "league"),
        ("teams", "teams"),
        ("team", "team"),
    ] {
        let path = format!(
            "{}/../infra/events/catalog.{fixture}.json",
            env!("CARGO_MANIFEST_DIR")
        );
        let event: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let (status, body, _) = call(&runtime, event).await;
        assert_eq!(status, 200, "{fixture}: {body}");
        assert!(!body[member].is_null(), "{fixture}: {body}");
    }
}

#[tokio::test]
async fn missing_settings_stop_the_function_with_a_clear_message() {
    testkit::runtime_api::assert_init_fails_naming(BINARY, &[], "TABLE_NAME").await;
    testkit::runtime_api::assert_init_fails_naming(
        BINARY,
        &[("TABLE_NAME", "fan-api")],
        "CURSOR_SECRET",
    )
    .await;
}

#[tokio::test]
async fn a_dynamodb_outage_is_a_503_and_the_same_process_serves_again_after_it() {
    let store = seeded().await;
    let proxy = FaultProxy::start(testkit::moto::shared_endpoint()).await;
    let runtime = RuntimeApi::start().await;
    let mut function = spawn(&runtime, store.table(), &proxy.endpoint());
    for fault in [THROTTLING, Fault::Hangup] {
        proxy.set(fault.clone());
        let (status, body, headers) = get(&runtime, "/api/teams/nba-lal", "").await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (503, Some("service_unavailable")),
            "{fault:?}"
        );
        assert!(headers["retry-after"].is_string(), "{headers}");
        proxy.set(Fault::None);
        assert_eq!(get(&runtime, "/api/teams/nba-lal", "").await.0, 200);
    }
    assert!(function.try_wait().unwrap().is_none());
}

/// The DynamoDB requests of each catalogue read, counted at a proxy in front of moto: the
/// numbers docs/design.md states (What one request costs). The most: a league's teams when it
/// has none, then the league asked for (a 404 for one the catalogue lacks).
#[tokio::test]
async fn each_read_makes_the_requests_the_docs_count() {
    let (env, proxy) = testkit::purchases::PurchaseEnv::behind_proxy().await;
    testkit::packs::seed_catalog_entries(&env.store, &["nba", "nba-lal"]).await;
    let function = env
        .spawn(BINARY, &[("CURSOR_SECRET", testkit::CURSOR_SECRET)])
        .await;
    // The first call pays for what a cold start does once.
    function
        .requests_of(&proxy, &ApiEvent::get("/api/leagues"), 200)
        .await;
    for (path, query, status, made) in [
        ("/api/leagues", "limit=100", 200, ("Query", 1)),
        ("/api/leagues/nba", "", 200, ("GetItem", 1)),
        ("/api/teams/nba-lal", "", 200, ("GetItem", 1)),
        ("/api/teams", "limit=100", 200, ("Query", 1)),
    ] {
        let event = ApiEvent::get(path).query(query);
        assert_eq!(
            function.requests_of(&proxy, &event, status).await,
            counts(&[made]),
            "{path}?{query}"
        );
    }
    let event = ApiEvent::get("/api/teams").query("leagueId=mls");
    assert_eq!(
        function.requests_of(&proxy, &event, 404).await,
        counts(&[("GetItem", 1), ("Query", 1)])
    );
}
