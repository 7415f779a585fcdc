//! The real `leaderboards` binary (GET /api/leaderboards/{board} and .../me), run through a
//! Lambda Runtime API emulator against moto_server: a board reflects an opening the store wrote
//! (the open's own transaction), lists named fans only, and answers the fan's standing; and a
//! board's read makes the DynamoDB requests docs/design.md counts, whatever its limit.

use testkit::events::ApiEvent;
use testkit::fault_proxy::counts;
use testkit::openings::open_one;
use testkit::packs::at;
use testkit::purchases::PurchaseEnv;
use testkit::tokens::token;

const BINARY: &str = env!("CARGO_BIN_EXE_leaderboards");

#[tokio::test]
async fn a_board_shows_an_opening_and_the_fans_standing() {
    let env = PurchaseEnv::new().await;
    testkit::packs::save(&env.store, &testkit::packs::active("board-pack", 60)).await;
    open_one(&env.store, "anon", "board-pack", "k1", at(-40)).await;
    open_one(&env.store, "zoe", "board-pack", "k1", at(-30)).await;
    testkit::profiles::name(&env.store, "zoe", "Zoe.Hoops", None).await;
    let function = env.spawn(BINARY, &[]).await;
    let board = function
        .call(&ApiEvent::get("/api/leaderboards/league:nba"))
        .await;
    assert_eq!(board.status, 200, "{board:?}");
    assert_eq!(
        board.header("cache-control"),
        Some("public, max-age=10, stale-while-revalidate=30")
    );
    assert_eq!(
        board.body["entries"],
        serde_json::json!([{"rank": 2, "displayName": "Zoe.Hoops", "avatarUrl": null, "score": 5}])
    );
    let mine = function
        .call(&ApiEvent::get("/api/leaderboards/global/me").bearer(&token("anon", None)))
        .await;
    assert_eq!(
        (mine.status, &mine.body),
        (
            200,
            &serde_json::json!({"board": "global", "score": 5, "rank": 1, "percentile": null})
        )
    );
    let unknown = function
        .call(&ApiEvent::get("/api/leaderboards/team:nope"))
        .await;
    assert_eq!(
        (unknown.status, unknown.code()),
        (404, Some("team_not_found"))
    );
}

/// Fans without a display name, each scoring one point more than the next, on `board`.
async fn unnamed_fans(env: &PurchaseEnv, board: &str, fans: impl Iterator<Item = String>) {
    use domain::leaderboards::{Board, Score};
    use store::leaderboards::SeedScores;
    let fans: Vec<String> = fans.collect();
    let scores: Vec<_> = (1..)
        .zip(fans.iter().rev())
        .map(|(score, fan)| {
            let reached_at = at(-60);
            (testkit::ids::user(fan), Score { score, reached_at })
        })
        .collect();
    let board = Board::parse(board).unwrap();
    env.store.seed_scores(&board, &scores).await.unwrap();
}

/// The DynamoDB requests of a public board's read, counted at a proxy in front of moto: the
/// numbers docs/design.md states (What one request costs), whatever `limit` asks. The outside
/// test's board (150 fans, none named) and the walk's worst case (1,050 unnamed fans in one
/// shard: the walk stops after 1,000, a page of 100 at a time, their faces 100 at a time).
#[tokio::test]
async fn a_boards_read_makes_the_requests_the_docs_count_whatever_its_limit() {
    let (env, proxy) = PurchaseEnv::behind_proxy().await;
    testkit::packs::seed_catalog_entries(&env.store, &["nba"]).await;
    unnamed_fans(&env, "global", (0..150).map(|n| format!("fan-{n}"))).await;
    let one_shard = (0..)
        .map(|n| format!("deep-{n}"))
        .filter(|fan| domain::leaderboards::shard_of(&testkit::ids::user(fan)) == 0)
        .take(1_050);
    unnamed_fans(&env, "league:nba", one_shard).await;
    let function = env.spawn(BINARY, &[]).await;
    // The first call pays for what a cold start does once; the others are counted.
    let first = function
        .call(&ApiEvent::get("/api/leaderboards/global"))
        .await;
    assert_eq!(first.status, 200, "{first:?}");
    let read = |board: &str, limit: usize| {
        let event =
            ApiEvent::get(&format!("/api/leaderboards/{board}")).query(&format!("limit={limit}"));
        let (function, proxy) = (&function, &proxy);
        async move { function.requests_of(proxy, &event, 200).await }
    };
    for limit in [1, 100] {
        assert_eq!(
            read("global", limit).await,
            // Each shard's page; the faces of 100 fans, then of 50 (no rate counter).
            counts(&[("BatchGetItem", 2), ("Query", 16)]),
            "global, limit {limit}"
        );
        assert_eq!(
            read("league:nba", limit).await,
            // Each shard's page, and 9 more of the full shard; 10 batches of faces; nobody
            // listed, so the league's item (a 404 for a league the catalogue lacks).
            counts(&[("BatchGetItem", 10), ("GetItem", 1), ("Query", 16 + 9),]),
            "league:nba, limit {limit}"
        );
    }
}
