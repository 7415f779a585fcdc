//! The leaderboards, run against both stores (DynamoStore on moto_server through the
//! one-request-at-a-time proxy, MemoryStore): an opening puts its fan on the global board and
//! the pack's league's (each item its rarity's weight), ties go to who reached the score first,
//! fans without a display name hold their rank but are not listed, a repeated open adds nothing,
//! and a fan's standing is their exact rank.

use std::sync::Arc;

use shared::leaderboards::{Board, Rank};
use shared::store::Store;
use testkit::ids;
use testkit::openings::open_one;
use testkit::packs::at;
use testkit::profiles::name;

testkit::store_contract!(
    arc:
    openings_rank_fans_by_score_then_who_reached_it_first,
    a_repeated_open_and_an_unscored_board_change_nothing,
);

fn lines(entries: &[shared::leaderboards::BoardEntry]) -> Vec<(u64, String, u64)> {
    entries
        .iter()
        .map(|entry| (entry.rank, entry.display_name.to_string(), entry.score))
        .collect()
}

/// The test pack: five commons an opening (1 point each by default), of the NBA.
async fn pack(store: &impl Store) {
    testkit::packs::save(store, &testkit::packs::active("board-pack", 60)).await;
}

async fn openings_rank_fans_by_score_then_who_reached_it_first(store: Arc<impl Store>) {
    let store = &*store;
    pack(store).await;
    // Bravo reaches 5 before Alpha does; the unnamed fan opens twice (10).
    open_one(store, "bravo", "board-pack", "k1", at(-50)).await;
    open_one(store, "alpha", "board-pack", "k1", at(-40)).await;
    open_one(store, "nameless", "board-pack", "k1", at(-30)).await;
    open_one(store, "nameless", "board-pack", "k2", at(-20)).await;
    name(
        store,
        "alpha",
        "Alpha",
        Some("https://cdn.example.com/alpha.png"),
    )
    .await;
    name(
        store,
        "bravo",
        "Bravo",
        Some("https://cdn.example.com/bravo.png"),
    )
    .await;
    let expected = vec![(2, "Bravo".to_owned(), 5), (3, "Alpha".to_owned(), 5)];
    for board in ["global", "league:nba"] {
        let board = Board::parse(board).unwrap();
        let entries = store.read_board(&board, 100).await.unwrap();
        assert_eq!(lines(&entries), expected, "{board}");
        assert_eq!(
            entries[0].avatar_url.as_ref().map(|url| url.as_str()),
            Some("https://cdn.example.com/bravo.png")
        );
        let first = store.read_board(&board, 1).await.unwrap();
        assert_eq!(lines(&first), expected[..1], "{board}: limit 1");
    }
    let standing = |fan: &'static str| async move {
        store
            .get_standing(&Board::Global, &ids::user(fan))
            .await
            .unwrap()
            .map(|standing| (standing.score.score, standing.rank))
    };
    assert_eq!(standing("nameless").await, Some((10, Rank::Exact(1))));
    assert_eq!(standing("bravo").await, Some((5, Rank::Exact(2))));
    assert_eq!(standing("alpha").await, Some((5, Rank::Exact(3))));
    assert_eq!(standing("nobody").await, None);
    // Alpha passes everyone with one more opening.
    open_one(store, "alpha", "board-pack", "k2", at(-10)).await;
    open_one(store, "alpha", "board-pack", "k3", at(-5)).await;
    let entries = store.read_board(&Board::Global, 100).await.unwrap();
    assert_eq!(
        lines(&entries),
        [(1, "Alpha".to_owned(), 15), (3, "Bravo".to_owned(), 5)]
    );
}

async fn a_repeated_open_and_an_unscored_board_change_nothing(store: Arc<impl Store>) {
    let store = &*store;
    pack(store).await;
    let first = at(-20);
    let opened = open_one(store, "alpha", "board-pack", "k1", first).await;
    name(
        store,
        "alpha",
        "Alpha",
        Some("https://cdn.example.com/alpha.png"),
    )
    .await;
    store
        .open_purchase(&opened.user_id, &opened.pack_id, &opened.id, at(-10))
        .await
        .unwrap();
    let standing = store
        .get_standing(&Board::parse("league:nba").unwrap(), &ids::user("alpha"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (
            standing.score.score,
            standing.score.reached_at,
            standing.rank
        ),
        (5, first, Rank::Exact(1)),
        "the repeated open neither added nor moved the arrival"
    );
    for board in ["team:nba-lal", "league:nfl"] {
        let board = Board::parse(board).unwrap();
        assert_eq!(store.read_board(&board, 100).await.unwrap(), vec![]);
        let none = store
            .get_standing(&board, &ids::user("alpha"))
            .await
            .unwrap();
        assert_eq!(none, None, "{board}");
    }
}
