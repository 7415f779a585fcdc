//! The operations on the leaderboards: a board's top and a fan's standing. Scores are written by
//! the opening's transaction (`FAN#<userId>` / `SCORE#<board>`, one item per board the pack
//! counts for, with its entry in the board's shard of `GSI4`); nothing here writes.

use std::future::Future;

use crate::StoreError;
use domain::ids::UserId;
use domain::leaderboards::{Board, BoardEntry, Score, Standing};

/// The first `limit` (at most [`MAX_BOARD_ENTRIES`](domain::leaderboards::MAX_BOARD_ENTRIES))
/// named fans of `board`, in its order (score, then who reached it first), each with their rank
/// among every fan with a score. Empty for a board nobody scored on (known or not).
pub trait ReadBoard: Send + Sync {
    fn read_board(
        &self,
        board: &Board,
        limit: usize,
    ) -> impl Future<Output = Result<Vec<BoardEntry>, StoreError>> + Send;
}

/// The fan's score and rank on `board`, `None` while they have none on it.
pub trait GetStanding: Send + Sync {
    fn get_standing(
        &self,
        board: &Board,
        user_id: &UserId,
    ) -> impl Future<Output = Result<Option<Standing>, StoreError>> + Send;
}

/// Writes fans' scores on `board` as they are, each with its index entries, outside any
/// opening: how tests make a board of more than [`EXACT_RANK_LIMIT`] fans in a few requests,
/// where each opening is a transaction.
///
/// [`EXACT_RANK_LIMIT`]: domain::leaderboards::EXACT_RANK_LIMIT
pub trait SeedScores: Send + Sync {
    fn seed_scores(
        &self,
        board: &Board,
        scores: &[(UserId, Score)],
    ) -> impl Future<Output = Result<(), StoreError>> + Send;
}

/// Every leaderboard operation.
pub trait LeaderboardStore: ReadBoard + GetStanding + SeedScores {}
impl<S: ReadBoard + GetStanding + SeedScores> LeaderboardStore for S {}
