//! The leaderboards in memory: every fan's score by board, sorted on read (the same order, ranks
//! and standing as on DynamoDB, where the index keeps them sorted).

use super::{MemoryStore, Tables};
use crate::StoreError;
use crate::leaderboards::{GetStanding, ReadBoard, SeedScores};
use domain::ids::UserId;
use domain::leaderboards::{
    Board, BoardEntry, MAX_BOARD_ENTRIES, MAX_WALKED, Rank, Score, Standing, is_sampled,
};
use domain::timestamp::Timestamp;

impl Tables {
    /// Adds an opening worth `points` to the fan's score on each of `boards`.
    pub(super) fn add_score(
        &mut self,
        user_id: &UserId,
        boards: &[Board],
        points: u64,
        now: Timestamp,
    ) {
        if points == 0 {
            return;
        }
        for board in boards {
            let score = self
                .scores
                .entry((board.clone(), user_id.clone()))
                .or_insert(Score {
                    score: 0,
                    reached_at: now,
                });
            score.score += points;
            score.reached_at = now;
        }
    }

    /// Every (rank key, fan) of `board`, the board's order.
    fn board(&self, board: &Board) -> Vec<(u128, &UserId, &Score)> {
        let mut entries: Vec<_> = self
            .scores
            .iter()
            .filter(|((on, _), _)| on == board)
            .map(|((_, user_id), score)| (score.rank_key(), user_id, score))
            .collect();
        entries.sort_by_key(|entry| std::cmp::Reverse(entry.0));
        entries
    }
}

impl ReadBoard for MemoryStore {
    async fn read_board(&self, board: &Board, limit: usize) -> Result<Vec<BoardEntry>, StoreError> {
        let tables = self.read();
        let limit = limit.clamp(1, MAX_BOARD_ENTRIES);
        Ok(tables
            .board(board)
            .into_iter()
            .take(MAX_WALKED)
            .zip(1..)
            .filter_map(|((_, user_id, score), rank)| {
                let profile = &tables.profiles.get(user_id)?.profile;
                Some(BoardEntry {
                    rank,
                    display_name: profile.display_name.clone()?,
                    avatar_url: profile.avatar_url.clone(),
                    score: score.score,
                })
            })
            .take(limit)
            .collect())
    }
}

impl GetStanding for MemoryStore {
    async fn get_standing(
        &self,
        board: &Board,
        user_id: &UserId,
    ) -> Result<Option<Standing>, StoreError> {
        let tables = self.read();
        let Some(&score) = tables.scores.get(&(board.clone(), user_id.clone())) else {
            return Ok(None);
        };
        let mine = score.rank_key();
        let entries = tables.board(board);
        let ahead = entries.iter().filter(|(key, ..)| *key > mine).count() as u64;
        let rank = Rank::exact(ahead).unwrap_or_else(|| {
            let sampled = |wanted: fn(u128, u128) -> bool| {
                entries
                    .iter()
                    .filter(|(key, fan, _)| is_sampled(fan) && wanted(*key, mine))
                    .count() as u64
            };
            Rank::estimated(
                sampled(|key, mine| key > mine),
                sampled(|key, mine| key < mine),
            )
        });
        Ok(Some(Standing { score, rank }))
    }
}

impl SeedScores for MemoryStore {
    async fn seed_scores(
        &self,
        board: &Board,
        scores: &[(UserId, Score)],
    ) -> Result<(), StoreError> {
        let mut tables = self.write();
        for (user_id, score) in scores {
            tables
                .scores
                .insert((board.clone(), user_id.clone()), *score);
        }
        Ok(())
    }
}
