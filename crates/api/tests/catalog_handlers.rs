//! The catalogue's handlers and the packs' league and team filters, driven with API Gateway
//! events over the in-memory store seeded with the shipped catalogue and packs.

use std::sync::Arc;

use api::handlers::catalog::CatalogState;
use api::handlers::list_packs::ListPacksState;
use api::http::routes::{catalog_routes, list_packs_routes};
use domain::catalog::parse_catalog;
use domain::packs::Pack;
use serde_json::Value;
use store::MemoryStore;
use store::catalog::seed_catalog;
use testkit::events::{ApiEvent, call, parts};
use testkit::packs::active;

/// A store with the shipped catalogue and packs of the NBA (two of the Lakers') and the NFL.
async fn store() -> MemoryStore {
    let mut lakers = active("lakers-a", 60);
    lakers.team_id = Some("nba-lal".into());
    let mut lakers_older = active("lakers-b", 120);
    lakers_older.team_id = Some("nba-lal".into());
    let mut nfl = active("nfl-pack", 30);
    nfl.league_id = Some("nfl".into());
    let packs: Vec<Pack> = vec![lakers, lakers_older, active("nba-pack", 90), nfl];
    let store = MemoryStore::with_packs(&packs);
    let catalog = parse_catalog(include_str!("../../../infra/seed/catalog.json")).unwrap();
    seed_catalog(&store, &catalog).await.unwrap();
    store
}

async fn catalog_get(store: &MemoryStore, path: &str, query: &str) -> (u16, Value, String) {
    let state = Arc::new(CatalogState {
        store: store.clone(),
        cursors: testkit::cursor_signer(),
    });
    let response = call(
        catalog_routes(),
        &state,
        ApiEvent::get(path).query(query).request(),
    )
    .await;
    let cache = response
        .headers()
        .get("cache-control")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    let (status, body) = parts(&response);
    (status, body, cache)
}

async fn packs_get(store: &MemoryStore, query: &str) -> (u16, Value) {
    let state = Arc::new(ListPacksState {
        store: store.clone(),
        cursors: testkit::cursor_signer(),
    });
    let response = call(
        list_packs_routes(),
        &state,
        ApiEvent::get("/api/packs").query(query).request(),
    )
    .await;
    parts(&response)
}

fn ids(list: &Value) -> Vec<&str> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["id"].as_str().unwrap())
        .collect()
}

fn code(body: &Value) -> &str {
    body["error"]["code"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn leagues_and_teams_answer_as_written_and_publicly_cacheable() {
    let store = store().await;
    let (status, body, cache) = catalog_get(&store, "/api/leagues", "").await;
    assert_eq!(
        (status, cache.as_str()),
        (200, "public, max-age=60, stale-while-revalidate=600"),
        "{body}"
    );
    assert_eq!(body.as_object().unwrap().len(), 2, "leagues and nextCursor");
    assert_eq!(body["nextCursor"], Value::Null);
    assert_eq!(ids(&body["leagues"]).len(), 7);
    assert_eq!(
        body["leagues"][0],
        serde_json::json!({"id": "fifa-world-cup", "name": "FIFA World Cup", "sport": "soccer",
            "logoUrl": "https://cdn.fan-api.example/leagues/fifa-world-cup.png"})
    );

    let (status, body, cache) = catalog_get(&store, "/api/teams/nba-lal", "").await;
    assert_eq!(
        (status, cache.as_str()),
        (200, "public, max-age=60, stale-while-revalidate=600"),
        "{body}"
    );
    assert_eq!(
        body,
        serde_json::json!({"team": {"id": "nba-lal", "leagueId": "nba", "name": "Lakers",
            "city": "Los Angeles", "abbreviation": "LAL",
            "logoUrl": "https://cdn.fan-api.example/teams/nba-lal.png", "primaryColor": "#552583"}})
    );
    let (status, body, _) = catalog_get(&store, "/api/leagues/nfl", "").await;
    assert_eq!(
        (status, body["league"]["name"].as_str()),
        (200, Some("NFL"))
    );

    let (_, nfl, _) = catalog_get(&store, "/api/teams", "leagueId=nfl").await;
    assert_eq!(ids(&nfl["teams"]).len(), 32);
    assert!(
        nfl["teams"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["leagueId"] == "nfl")
    );
    let (_, mlb, _) = catalog_get(&store, "/api/teams", "leagueId=mlb").await;
    assert_eq!(
        (ids(&mlb["teams"]).len(), &mlb["nextCursor"]),
        (0, &Value::Null),
        "a league without teams: an empty page"
    );
}

#[tokio::test]
async fn unknown_ids_are_404_and_bad_input_a_clear_400() {
    let store = store().await;
    for (path, query, status, expected) in [
        ("/api/leagues/mls", "", 404, "league_not_found"),
        ("/api/teams/nba-zzz", "", 404, "team_not_found"),
        ("/api/teams", "leagueId=mls", 404, "league_not_found"),
        ("/api/teams/a%2Fb", "", 404, "not_found"),
        ("/api/teams", "leagueId=a%20b", 400, "invalid_query"),
        (
            "/api/teams",
            "leagueId=nba&leagueId=nfl",
            400,
            "invalid_query",
        ),
        ("/api/teams", "limit=0", 400, "invalid_limit"),
        ("/api/leagues", "limit=101", 400, "invalid_limit"),
        ("/api/leagues", "cursor=forged", 400, "invalid_cursor"),
    ] {
        let (actual, body, _) = catalog_get(&store, path, query).await;
        assert_eq!(
            (actual, code(&body)),
            (status, expected),
            "{path}?{query}: {body}"
        );
        assert_eq!(body["success"], false);
    }
}

/// Every team, a page at a time, and each cursor resumes only the list it was issued for.
#[tokio::test]
async fn team_pages_walk_the_list_and_cursors_are_bound_to_the_filter() {
    let store = store().await;
    let mut seen = Vec::new();
    let mut query = "leagueId=nba&limit=7".to_owned();
    let mut cursors = Vec::new();
    loop {
        let (status, body, _) = catalog_get(&store, "/api/teams", &query).await;
        assert_eq!(status, 200, "{body}");
        seen.extend(ids(&body["teams"]).into_iter().map(str::to_owned));
        match body["nextCursor"].as_str() {
            Some(cursor) => {
                cursors.push(cursor.to_owned());
                query = format!("leagueId=nba&limit=7&cursor={cursor}");
            }
            None => break,
        }
    }
    assert_eq!(seen.len(), 30);
    let mut sorted = seen.clone();
    sorted.dedup();
    assert_eq!(sorted.len(), 30, "no repeats");
    let first = &cursors[0];
    for (path, query) in [
        ("/api/teams", format!("leagueId=nfl&cursor={first}")),
        ("/api/teams", format!("cursor={first}")),
        ("/api/leagues", format!("cursor={first}")),
    ] {
        let (status, body, _) = catalog_get(&store, path, &query).await;
        assert_eq!(
            (status, code(&body)),
            (400, "invalid_cursor"),
            "{path}?{query}"
        );
    }
}

#[tokio::test]
async fn packs_filter_by_league_and_team_with_cursors_bound_to_the_filters() {
    let store = store().await;
    let (status, body) = packs_get(&store, "teamId=nba-lal").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(ids(&body["packs"]), ["lakers-a", "lakers-b"]);
    let (_, body) = packs_get(&store, "leagueId=nba").await;
    assert_eq!(ids(&body["packs"]), ["lakers-a", "nba-pack", "lakers-b"]);
    let (_, body) = packs_get(&store, "leagueId=nfl&teamId=nba-lal").await;
    assert_eq!(ids(&body["packs"]), Vec::<&str>::new());
    let (status, body) = packs_get(&store, "leagueId=mlb").await;
    assert_eq!(
        (status, body["packs"].as_array().map(Vec::len)),
        (200, Some(0))
    );

    for (query, status, expected) in [
        ("leagueId=mls", 404, "league_not_found"),
        ("teamId=nba-zzz", 404, "team_not_found"),
        ("leagueId=nba&teamId=nba-zzz", 404, "team_not_found"),
        ("leagueId=..", 400, "invalid_query"),
        ("teamId=", 400, "invalid_query"),
    ] {
        let (actual, body) = packs_get(&store, query).await;
        assert_eq!((actual, code(&body)), (status, expected), "{query}: {body}");
    }

    let (_, first) = packs_get(&store, "leagueId=nba&limit=1").await;
    let cursor = first["nextCursor"].as_str().expect("more follow");
    let (status, next) = packs_get(&store, &format!("leagueId=nba&limit=1&cursor={cursor}")).await;
    assert_eq!((status, ids(&next["packs"])), (200, vec!["nba-pack"]));
    for other in [
        format!("cursor={cursor}"),
        format!("leagueId=nfl&cursor={cursor}"),
        format!("leagueId=nba&teamId=nba-lal&cursor={cursor}"),
    ] {
        let (status, body) = packs_get(&store, &other).await;
        assert_eq!((status, code(&body)), (400, "invalid_cursor"), "{other}");
    }
    let (_, unfiltered) = packs_get(&store, "limit=1").await;
    let cursor = unfiltered["nextCursor"].as_str().unwrap();
    let (status, body) = packs_get(&store, &format!("teamId=nba-lal&cursor={cursor}")).await;
    assert_eq!((status, code(&body)), (400, "invalid_cursor"));
}
