//! A fan's place on a leaderboard: what `GET /api/leaderboards/{board}/me` answers and the home
//! dashboard shows.

use serde::Serialize;
use utoipa::ToSchema;

use domain::leaderboards::{Board, Rank, Standing};

/// A fan's place on a board.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = MyStanding)]
pub struct StandingJson {
    #[schema(example = "global")]
    pub board: String,
    /// 0 for a fan with nothing on the board.
    pub score: u64,
    /// Exact within the top 10,000 (1 is first); null beyond, or with no score.
    #[schema(minimum = 1, required)]
    pub rank: Option<u64>,
    /// Beyond the top 10,000: the share of the board's fans behind this one, in whole percent
    /// (0-99), estimated from a sample of one fan in 256; else null.
    #[schema(minimum = 0, maximum = 99, required)]
    pub percentile: Option<u8>,
}

impl StandingJson {
    pub fn of(board: &Board, standing: Option<&Standing>) -> Self {
        let (rank, percentile) = match standing.map(|standing| standing.rank) {
            Some(Rank::Exact(rank)) => (Some(rank), None),
            Some(Rank::Percentile(percentile)) => (None, Some(percentile)),
            None => (None, None),
        };
        Self {
            board: board.to_string(),
            score: standing.map_or(0, |standing| standing.score.score),
            rank,
            percentile,
        }
    }
}
