//! The real `leaderboards` binary (GET /api/leaderboards/{board} and .../me), run through a
//! Lambda Runtime API emulator against moto_server: a board reflects an opening the store wrote
//! (the open's own transaction), lists named fans only, and answers the fan's standing.

use testkit::events::ApiEvent;
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
    assert_eq!(board.header("cache-control"), Some("public, max-age=5"));
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
