//! The real `list-packs` binary, run through a Lambda Runtime API emulator against moto_server.

use std::time::Duration;

use serde_json::Value;
use testkit::events::ApiEvent;
use testkit::fault_proxy::{Fault, FaultProxy, THROTTLING, counts};
use testkit::moto::MotoServer;
use testkit::packs::active;
use testkit::runtime_api::{RuntimeApi, http_parts};

const BINARY: &str = env!("CARGO_BIN_EXE_list-packs");
const TIMEOUT: Duration = Duration::from_secs(30);

/// `GET /api/packs?{query}` through `runtime`, answered.
async fn list(runtime: &RuntimeApi, query: &str) -> testkit::runtime_api::Outcome {
    runtime
        .invoke(ApiEvent::get("/api/packs").query(query).to_json(), TIMEOUT)
        .await
        .expect("answered")
}

/// The binary on `table` of the shared moto_server, behind `runtime`.
fn spawn(runtime: &RuntimeApi, table: &str) -> tokio::process::Child {
    runtime.spawn(
        BINARY,
        &[
            ("TABLE_NAME", table),
            ("CURSOR_SECRET", testkit::CURSOR_SECRET),
            (
                "AWS_ENDPOINT_URL_DYNAMODB",
                testkit::moto::shared_endpoint(),
            ),
            ("RUST_LOG", "warn"),
        ],
    )
}

#[tokio::test]
async fn serves_the_packs_of_the_table_over_the_runtime_api() {
    let store = testkit::moto::shared_table().await;
    for pack in [active("first", 10), active("second", 20)] {
        testkit::packs::save(&store, &pack).await;
    }
    let runtime = RuntimeApi::start().await;
    let _function = spawn(&runtime, store.table());

    let outcome = list(&runtime, "limit=1").await;
    let (status, body) = http_parts(&outcome);
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["packs"].as_array().map(|p| p.len()), Some(1));
    assert_eq!(body["packs"][0]["id"], "first");
    assert!(body["nextCursor"].is_string());

    // The same warm process answers again, and routes other paths to the JSON 404.
    let (status, body) = http_parts(
        &runtime
            .invoke(ApiEvent::get("/api/unknown").to_json(), TIMEOUT)
            .await
            .unwrap(),
    );
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (404, Some("not_found"))
    );
    let Some(testkit::runtime_api::Outcome::Response(document)) = runtime
        .invoke(ApiEvent::get("/api/packs").to_json(), TIMEOUT)
        .await
    else {
        panic!("no answer")
    };
    assert_eq!(document["headers"]["content-type"], "application/json");
    let body: Value = serde_json::from_str(document["body"].as_str().unwrap()).unwrap();
    assert_eq!(body["packs"].as_array().map(|p| p.len()), Some(2));
}

#[tokio::test]
async fn missing_table_name_stops_the_function_with_a_clear_message() {
    testkit::runtime_api::assert_init_fails_naming(BINARY, &[], "TABLE_NAME").await;
}

#[tokio::test]
async fn a_dynamodb_outage_is_a_503_and_the_same_process_serves_again_after_it() {
    let moto = MotoServer::start().await;
    let store = moto.new_table().await;
    testkit::packs::save(&store, &active("p", 10)).await;
    let proxy = FaultProxy::start(&moto.endpoint).await;
    let runtime = RuntimeApi::start().await;
    let mut function = runtime.spawn(
        BINARY,
        &[
            ("TABLE_NAME", store.table()),
            ("CURSOR_SECRET", testkit::CURSOR_SECRET),
            ("AWS_ENDPOINT_URL_DYNAMODB", &proxy.endpoint()),
            ("RUST_LOG", "off"),
        ],
    );
    let list = || runtime.invoke(ApiEvent::get("/api/packs").to_json(), TIMEOUT);
    for fault in [
        THROTTLING,
        Fault::Delay(Duration::from_secs(10)),
        Fault::Hangup,
    ] {
        proxy.set(fault.clone());
        let (status, body) = http_parts(&list().await.expect("answered"));
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (503, Some("service_unavailable")),
            "{fault:?}"
        );
        proxy.set(Fault::None);
        assert_eq!(
            http_parts(&list().await.expect("answered")).0,
            200,
            "after {fault:?}"
        );
    }
    assert!(
        function.try_wait().unwrap().is_none(),
        "the function process is still running"
    );
}

/// A query with bytes a URI cannot hold, sent unencoded (`"`, `<`, a space), gets the API's JSON
/// 400 from the same warm process: lambda_http alone panics building the request's URI.
#[tokio::test]
async fn a_raw_query_a_uri_cannot_hold_gets_the_json_400() {
    let store = testkit::moto::shared_table().await;
    testkit::packs::save(&store, &active("first", 10)).await;
    let runtime = RuntimeApi::start().await;
    let mut function = spawn(&runtime, store.table());
    for (query, code) in [
        ("cursor=\"x\"", "invalid_cursor"),
        ("cursor=<x>", "invalid_cursor"),
        ("limit=5 ", "invalid_limit"),
        ("limit=\"1\"", "invalid_limit"),
    ] {
        let (status, body) = http_parts(&list(&runtime, query).await);
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (400, Some(code)),
            "{query}: {body}"
        );
    }
    let outcome = list(&runtime, "limit=1").await;
    assert_eq!(http_parts(&outcome).0, 200);
    assert!(
        function.try_wait().unwrap().is_none(),
        "the same process answered throughout"
    );
}

/// Forwarded headers that make no URI (`x-forwarded-proto: http, https`, `host: [::1`, ...) get
/// the list from the same warm process: lambda_http alone panics building the request's URI.
#[tokio::test]
async fn forwarded_headers_that_make_no_uri_get_the_list() {
    let store = testkit::moto::shared_table().await;
    testkit::packs::save(&store, &active("first", 10)).await;
    let runtime = RuntimeApi::start().await;
    let mut function = spawn(&runtime, store.table());
    for (name, value) in testkit::attacks::HEADERS_THAT_MAKE_NO_URI {
        let event = ApiEvent::get("/api/packs").header(name, value).to_json();
        let (status, body) = http_parts(&runtime.invoke(event, TIMEOUT).await.expect("answered"));
        assert_eq!(status, 200, "{name}: {value:?}: {body}");
        assert_eq!(body["packs"][0]["id"], "first", "{name}: {value:?}");
    }
    assert_eq!(http_parts(&list(&runtime, "limit=1").await).0, 200);
    assert!(
        function.try_wait().unwrap().is_none(),
        "the same process answered throughout"
    );
}

/// `leagueId` and `teamId` read the packs' own index entries (GSI2, GSI3: the policy's
/// `LEAGUE#` and `TEAM#` partitions) and tell an unknown league or team (404) from one without
/// active packs.
#[tokio::test]
async fn lists_a_leagues_and_a_teams_packs() {
    let store = testkit::moto::shared_table().await;
    testkit::packs::seed_catalog_entries(&store, &["nba", "nfl", "nba-lal"]).await;
    let mut lakers = active("lakers", 10);
    lakers.team_id = Some("nba-lal".into());
    for pack in [lakers, active("nba-other", 20)] {
        testkit::packs::save(&store, &pack).await;
    }
    let runtime = RuntimeApi::start().await;
    let _function = spawn(&runtime, store.table());
    let ids = |body: &Value| -> Vec<String> {
        body["packs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|pack| pack["id"].as_str().unwrap().to_owned())
            .collect()
    };
    let (status, body) = http_parts(&list(&runtime, "teamId=nba-lal").await);
    assert_eq!(
        (status, ids(&body)),
        (200, vec!["lakers".to_owned()]),
        "{body}"
    );
    let (status, body) = http_parts(&list(&runtime, "leagueId=nba&limit=1").await);
    assert_eq!(
        (status, ids(&body)),
        (200, vec!["lakers".to_owned()]),
        "{body}"
    );
    let cursor = body["nextCursor"].as_str().expect("more follow").to_owned();
    let (status, body) =
        http_parts(&list(&runtime, &format!("leagueId=nba&cursor={cursor}")).await);
    assert_eq!(
        (status, ids(&body)),
        (200, vec!["nba-other".to_owned()]),
        "{body}"
    );
    let (status, body) = http_parts(&list(&runtime, "leagueId=nfl").await);
    assert_eq!((status, ids(&body).len()), (200, 0), "{body}");
    for (query, code) in [
        ("leagueId=mls", "league_not_found"),
        ("teamId=nfl-zzz", "team_not_found"),
    ] {
        let (status, body) = http_parts(&list(&runtime, query).await);
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (404, Some(code)),
            "{query}"
        );
    }
}

/// The DynamoDB requests of a page, counted at a proxy in front of moto: the numbers
/// docs/design.md states (What one request costs). The most: an empty page of two filters, each
/// then asked of the catalogue.
#[tokio::test]
async fn a_page_makes_the_requests_the_docs_count() {
    let (env, proxy) = testkit::purchases::PurchaseEnv::behind_proxy().await;
    testkit::packs::seed_catalog_entries(&env.store, &["nba", "nfl", "nba-lal"]).await;
    let function = env
        .spawn(BINARY, &[("CURSOR_SECRET", testkit::CURSOR_SECRET)])
        .await;
    let page = |query: &str| {
        let event = ApiEvent::get("/api/packs").query(query);
        let (function, proxy) = (&function, &proxy);
        async move { function.requests_of(proxy, &event, 200).await }
    };
    // The first call pays for what a cold start does once.
    page("").await;
    assert_eq!(page("limit=100").await, counts(&[("Query", 1)]));
    assert_eq!(
        page("leagueId=nfl&teamId=nba-lal").await,
        counts(&[("GetItem", 2), ("Query", 1)])
    );
}
