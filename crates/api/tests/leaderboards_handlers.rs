//! `GET /api/leaderboards/{board}` and `.../me` over API Gateway events on the in-memory store:
//! the board's segment grammar, a board reflecting an opening, the public answer cacheable and
//! listing named fans only, an unknown league or team 404, the standing needing a token.

use std::sync::Arc;

use api::handlers::leaderboards::LeaderboardsState;
use api::http::routes::leaderboards_routes;
use domain::catalog::parse_catalog;
use serde_json::{Value, json};
use store::MemoryStore;
use store::catalog::seed_catalog;
use testkit::events::{self, ApiEvent, parts};
use testkit::openings::open_one;
use testkit::packs::at;
use testkit::profiles::name;
use testkit::tokens::token;

async fn api() -> Arc<LeaderboardsState<MemoryStore>> {
    let store = MemoryStore::default();
    let catalog = parse_catalog(include_str!("../../../infra/seed/catalog.json")).unwrap();
    seed_catalog(&store, &catalog).await.unwrap();
    testkit::packs::save(&store, &testkit::packs::active("board-pack", 60)).await;
    Arc::new(LeaderboardsState {
        store,
        verifier: testkit::tokens::verifier(),
    })
}

async fn call(
    state: &Arc<LeaderboardsState<MemoryStore>>,
    event: ApiEvent,
) -> (u16, Value, Option<String>) {
    let response = events::call(leaderboards_routes(), state, event.request()).await;
    let cache = response
        .headers()
        .get("cache-control")
        .map(|value| value.to_str().unwrap().to_owned());
    let (status, body) = parts(&response);
    (status, body, cache)
}

#[tokio::test]
async fn a_board_reflects_an_opening_and_lists_named_fans_only() {
    let api = api().await;
    let (status, empty, cache) = call(&api, ApiEvent::get("/api/leaderboards/league:nba")).await;
    assert_eq!((status, &empty["entries"]), (200, &json!([])), "{empty}");
    assert_eq!(
        cache.as_deref(),
        Some("public, max-age=10, stale-while-revalidate=30")
    );
    open_one(&api.store, "zoe", "board-pack", "k1", at(-30)).await;
    open_one(&api.store, "anon", "board-pack", "k1", at(-40)).await;
    name(&api.store, "zoe", "Zoe.Hoops", None).await;
    for path in [
        "/api/leaderboards/global",
        "/api/leaderboards/league:nba",
        "/api/leaderboards/league%3Anba",
    ] {
        let (status, board, _) = call(&api, ApiEvent::get(path)).await;
        assert_eq!(status, 200, "{path}: {board}");
        assert!(board["updatedAt"].is_string());
        assert_eq!(
            board["entries"],
            json!([{"rank": 2, "displayName": "Zoe.Hoops", "avatarUrl": null, "score": 5}]),
            "{path}: the unnamed fan who reached 5 first holds rank 1 unlisted"
        );
    }
    let (_, board, _) = call(&api, ApiEvent::get("/api/leaderboards/league:nba")).await;
    assert_eq!(board["board"], "league:nba");
    let (status, mine, cache) = call(
        &api,
        ApiEvent::get("/api/leaderboards/global/me").bearer(&token("zoe", None)),
    )
    .await;
    assert_eq!(status, 200, "{mine}");
    assert_eq!(
        mine,
        json!({"board": "global", "score": 5, "rank": 2, "percentile": null})
    );
    assert_eq!(
        cache.as_deref(),
        Some("no-store"),
        "a fan's own standing is kept by no cache"
    );
    let (_, nothing, _) = call(
        &api,
        ApiEvent::get("/api/leaderboards/team:nba-lal/me").bearer(&token("zoe", None)),
    )
    .await;
    assert_eq!(
        nothing,
        json!({"board": "team:nba-lal", "score": 0, "rank": null, "percentile": null})
    );
}

#[tokio::test]
async fn unknown_boards_and_bad_requests_are_refused() {
    let api = api().await;
    for (path, status, code) in [
        ("/api/leaderboards/league:nope", 404, "league_not_found"),
        ("/api/leaderboards/team:nope", 404, "team_not_found"),
        ("/api/leaderboards/pack:nba", 404, "not_found"),
        ("/api/leaderboards/Global", 404, "not_found"),
        ("/api/leaderboards/league:", 404, "not_found"),
        ("/api/leaderboards/league:a:b", 404, "not_found"),
    ] {
        let (got, body, _) = call(&api, ApiEvent::get(path)).await;
        assert_eq!(
            (got, body["error"]["code"].as_str()),
            (status, Some(code)),
            "{path}"
        );
    }
    for limit in ["0", "101", "x"] {
        let (got, body, _) = call(
            &api,
            ApiEvent::get("/api/leaderboards/global").query(&format!("limit={limit}")),
        )
        .await;
        assert_eq!(
            (got, body["error"]["code"].as_str()),
            (400, Some("invalid_limit")),
            "{limit}"
        );
    }
    let (got, body, _) = call(&api, ApiEvent::get("/api/leaderboards/global/me")).await;
    assert_eq!(
        (got, body["error"]["code"].as_str()),
        (401, Some("missing_token"))
    );
    let (got, body, _) = call(
        &api,
        ApiEvent::get("/api/leaderboards/league:nope/me").bearer(&token("zoe", None)),
    )
    .await;
    assert_eq!(
        (got, body["error"]["code"].as_str()),
        (404, Some("league_not_found"))
    );
}
