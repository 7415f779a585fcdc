//! The leaderboards, run against both stores (DynamoStore on moto_server through the
//! one-request-at-a-time proxy, MemoryStore): an opening puts its fan on the global board and
//! the pack's league's and team's (each item its rarity's weight), ties go to who reached the
//! score first, fans without a display name hold their rank but are not listed, a repeated open
//! adds nothing, a board's read walks past at most 1,000 fans, and a fan's standing is their
//! exact rank within the top 10,000, beyond it the percentile of the board's sample.

use std::sync::Arc;

use domain::leaderboards::{Board, Rank};
use store::Store;
use testkit::ids;
use testkit::openings::open_one;
use testkit::packs::at;
use testkit::profiles::name;

testkit::store_contract!(
    arc:
    openings_rank_fans_by_score_then_who_reached_it_first,
    a_repeated_open_and_an_unscored_board_change_nothing,
    an_opening_of_a_teams_pack_scores_on_its_team_and_league_boards,
    a_boards_read_walks_past_at_most_a_thousand_fans,
    beyond_the_top_ten_thousand_a_rank_is_the_samples_percentile,
);

fn lines(entries: &[domain::leaderboards::BoardEntry]) -> Vec<(u64, String, u64)> {
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

async fn an_opening_of_a_teams_pack_scores_on_its_team_and_league_boards(store: Arc<impl Store>) {
    let store = &*store;
    let mut pack = testkit::packs::active("lakers-pack", 60);
    pack.team_id = Some("nba-lal".into());
    testkit::packs::save(store, &pack).await;
    open_one(store, "alpha", "lakers-pack", "k1", at(-20)).await;
    for (board, scored) in [
        ("global", true),
        ("league:nba", true),
        ("team:nba-lal", true),
        ("team:nba-bos", false),
        ("league:nfl", false),
    ] {
        let standing = store
            .get_standing(&Board::parse(board).unwrap(), &ids::user("alpha"))
            .await
            .unwrap()
            .map(|standing| (standing.score.score, standing.rank));
        assert_eq!(standing, scored.then_some((5, Rank::Exact(1))), "{board}");
    }
}

/// A named fan first, 999 without a name, a named fan 1,000th and one 1,001st: a read lists the
/// first two and stops there, on both stores (the same lines whatever the store).
async fn a_boards_read_walks_past_at_most_a_thousand_fans(store: Arc<impl Store>) {
    use domain::leaderboards::{MAX_WALKED, Score};
    let fans: Vec<String> = (1..=MAX_WALKED + 1).map(|n| format!("fan-{n}")).collect();
    // The fan at `fans[i]` is i + 1st: they score `MAX_WALKED + 1 - i`.
    let scores: Vec<_> = (1..)
        .zip(fans.iter().rev())
        .map(|(score, fan)| {
            let reached_at = at(-60);
            (ids::user(fan), Score { score, reached_at })
        })
        .collect();
    store.seed_scores(&Board::Global, &scores).await.unwrap();
    for (place, display_name) in [
        (1, "First"),
        (MAX_WALKED, "Last.Walked"),
        (MAX_WALKED + 1, "Beyond"),
    ] {
        name(&*store, &fans[place - 1], display_name, None).await;
    }
    let lines_of = |limit| {
        let store = &store;
        async move { lines(&store.read_board(&Board::Global, limit).await.unwrap()) }
    };
    let walked = MAX_WALKED as u64;
    let listed = vec![
        (1, "First".to_owned(), walked + 1),
        (walked, "Last.Walked".to_owned(), 2),
    ];
    assert_eq!(lines_of(100).await, listed);
    assert_eq!(lines_of(2).await, listed);
    assert_eq!(lines_of(1).await, listed[..1]);
}

async fn beyond_the_top_ten_thousand_a_rank_is_the_samples_percentile(store: Arc<impl Store>) {
    use domain::leaderboards::{EXACT_RANK_LIMIT, Score, is_sampled};
    // 10,050 fans, the board's order chosen: half the sampled fans (one in 256) at the bottom,
    // the others, then the other half of the sample at the top. Every shard of the index holds
    // about 628 fans, past a shard's first count of 625.
    let fans: Vec<_> = (0..10_050)
        .map(|n| ids::user(&format!("fan-{n}")))
        .collect();
    let (sample, others): (Vec<_>, Vec<_>) = fans.into_iter().partition(is_sampled);
    assert!(sample.len() >= 4, "{} sampled", sample.len());
    let half = sample.len() / 2;
    let board: Vec<_> = sample[..half]
        .iter()
        .chain(&others)
        .chain(&sample[half..])
        .cloned()
        .collect();
    // The fan at `board[i]` scores i + 1.
    let scores: Vec<_> = (1..)
        .zip(&board)
        .map(|(score, fan)| {
            let reached_at = at(-60);
            (fan.clone(), Score { score, reached_at })
        })
        .collect();
    store.seed_scores(&Board::Global, &scores).await.unwrap();
    let standing = |score: u64| {
        let fan = board[score as usize - 1].clone();
        let store = &store;
        async move {
            let standing = store.get_standing(&Board::Global, &fan).await.unwrap();
            standing.map(|standing| (standing.score.score, standing.rank))
        }
    };
    let top = board.len() as u64;
    assert_eq!(standing(top).await, Some((top, Rank::Exact(1))));
    let last_exact = top + 1 - EXACT_RANK_LIMIT;
    assert_eq!(
        standing(last_exact).await,
        Some((last_exact, Rank::Exact(EXACT_RANK_LIMIT)))
    );
    // One more ahead: a percentile, the share of the sample behind (the fan, when sampled, in
    // neither part): about half at the top of the rest (checked below), 0 for the last.
    let mut percentiles = Vec::new();
    for score in [last_exact - 1, half as u64, 1] {
        let sampled = |wanted: &dyn Fn(u64) -> bool| {
            (1..=top)
                .filter(|&other| wanted(other) && is_sampled(&board[other as usize - 1]))
                .count() as u64
        };
        let expected = Rank::estimated(
            sampled(&|other| other > score),
            sampled(&|other| other < score),
        );
        assert_eq!(standing(score).await, Some((score, expected)), "{score}");
        percentiles.push(expected);
    }
    let Rank::Percentile(middle) = percentiles[0] else {
        panic!("a percentile: {percentiles:?}");
    };
    assert!((30..=70).contains(&middle), "{middle}");
}
