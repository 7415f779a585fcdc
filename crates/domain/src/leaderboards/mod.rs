//! The collector-score leaderboards: which boards an opening counts for, what it adds to a fan's
//! score (each item its rarity's weight), the order of a board (score, then who reached it
//! first) as one number, the write shards that keep every board's index partition cool, and a
//! fan's standing (an exact rank within the top [`EXACT_RANK_LIMIT`], else a percentile).
//! The keys and costs: docs/leaderboards.md.

pub mod standing;
pub mod weights;

use std::fmt;

use crate::ids::{LeagueId, TeamId, UserId};
use crate::timestamp::Timestamp;

pub use standing::{EXACT_RANK_LIMIT, Rank, Standing};
pub use weights::ScoreWeights;

/// The most entries a board's page shows.
pub const MAX_BOARD_ENTRIES: usize = 100;

/// The most fans a board's read walks past (fans without a display name hold their place but
/// are not listed): a board whose first 1,000 fans are mostly unnamed shows fewer lines, and a
/// read costs a bounded number of store requests whatever the board (docs/design.md, What one
/// request costs).
pub const MAX_WALKED: usize = 1_000;

/// How many index partitions each board is written across: a fan's entries always go to the
/// same one ([`shard_of`]), and the top of a board is the merge of every shard's top.
pub const BOARD_SHARDS: u32 = 16;

/// One fan in [`SAMPLE_ONE_IN`] also has a copy of each of their entries in the board's sample
/// partition, from which a rank beyond the exact top is estimated as a percentile.
pub const SAMPLE_ONE_IN: u32 = 256;

/// A leaderboard: everyone's, a league's or a team's (items from packs of that league or team).
/// Its path segment is `global`, `league:<leagueId>` or `team:<teamId>`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Board {
    Global,
    League(LeagueId),
    Team(TeamId),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a board is `global`, `league:<leagueId>` or `team:<teamId>`")]
pub struct InvalidBoard;

impl Board {
    pub fn parse(text: &str) -> Result<Self, InvalidBoard> {
        match text.split_once(':') {
            None if text == "global" => Ok(Self::Global),
            Some(("league", id)) => LeagueId::parse(id)
                .map(Self::League)
                .map_err(|_| InvalidBoard),
            Some(("team", id)) => TeamId::parse(id).map(Self::Team).map_err(|_| InvalidBoard),
            _ => Err(InvalidBoard),
        }
    }

    /// The boards an item of a pack of `league` and `team` counts for: always the global one.
    pub fn of_pack(league: Option<&LeagueId>, team: Option<&TeamId>) -> Vec<Self> {
        let mut boards = vec![Self::Global];
        boards.extend(league.cloned().map(Self::League));
        boards.extend(team.cloned().map(Self::Team));
        boards
    }
}

/// The grammar of the `{board}` path segment.
pub fn is_valid_board(text: &str) -> bool {
    Board::parse(text).is_ok()
}

impl fmt::Display for Board {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Global => f.write_str("global"),
            Self::League(id) => write!(f, "league:{id}"),
            Self::Team(id) => write!(f, "team:{id}"),
        }
    }
}

/// The rank key's unit of score: the reached-at part stays below it for any instant up to 9999
/// (2.5e20 ns), and a score up to 10^17 keeps the key within DynamoDB's 38 digits.
pub const SCORE_UNIT: u128 = 10u128.pow(21);

/// The highest score a rank key holds (a higher one counts as this): 10^17 − 1, far above any
/// sum of weights a fan can open.
pub const MAX_SCORE: u64 = 10u64.pow(17) - 1;

/// A board's order as one number, larger first: the score, then who reached it first (an
/// earlier `reached_at` makes a larger key), so that an index sorted on it is the board.
pub fn rank_key(score: u64, reached_at: Timestamp) -> u128 {
    u128::from(score.min(MAX_SCORE)) * SCORE_UNIT + reached_part(reached_at)
}

/// The reached-at part of a rank key.
pub fn reached_part(reached_at: Timestamp) -> u128 {
    // Timestamps are 1970-9999: the nanoseconds are in 0..SCORE_UNIT.
    let nanos = u128::try_from(reached_at.unix_nanos()).unwrap_or(0);
    SCORE_UNIT - 1 - nanos.min(SCORE_UNIT - 1)
}

/// The score and reached-at instant a rank key was made of.
pub fn of_rank_key(key: u128) -> Option<(u64, Timestamp)> {
    let score = u64::try_from(key / SCORE_UNIT).ok()?;
    let nanos = SCORE_UNIT - 1 - key % SCORE_UNIT;
    Some((
        score,
        Timestamp::from_unix_nanos(i128::try_from(nanos).ok()?)?,
    ))
}

fn user_hash(user_id: &UserId) -> u32 {
    let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, user_id.as_str().as_bytes());
    let bytes = digest.as_ref();
    u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]])
}

/// The index shard a fan's entries go to (the same on every board, for ever).
pub fn shard_of(user_id: &UserId) -> u32 {
    user_hash(user_id) % BOARD_SHARDS
}

/// Whether a fan is in the boards' sample (independent of their shard: other bits of the hash).
pub fn is_sampled(user_id: &UserId) -> bool {
    (user_hash(user_id) / BOARD_SHARDS).is_multiple_of(SAMPLE_ONE_IN)
}

/// A fan's score on a board, and when they reached it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Score {
    pub score: u64,
    pub reached_at: Timestamp,
}

impl Score {
    pub fn rank_key(&self) -> u128 {
        rank_key(self.score, self.reached_at)
    }
}

/// One line of a board as the public sees it. `rank` counts every fan with a score (those
/// without a display name are not listed, but hold their place), so that a listed fan's rank is
/// the one `GET .../me` tells them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoardEntry {
    pub rank: u64,
    pub display_name: crate::profile::name::DisplayName,
    pub avatar_url: Option<crate::profile::AvatarUrl>,
    pub score: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Timestamp {
        Timestamp::parse(text).unwrap()
    }

    #[test]
    fn boards_parse_and_print_their_segment() {
        for text in ["global", "league:nba", "team:nba-lal"] {
            assert_eq!(Board::parse(text).unwrap().to_string(), text);
        }
        for bad in [
            "",
            "Global",
            "league:",
            "team:",
            "league",
            "league:a:b",
            "league:a/b",
            "pack:x",
            "global:x",
        ] {
            assert!(Board::parse(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            Board::of_pack(Some(&LeagueId::parse("nba").unwrap()), None),
            vec![Board::Global, Board::parse("league:nba").unwrap()]
        );
    }

    #[test]
    fn a_higher_score_then_an_earlier_arrival_makes_a_larger_key() {
        let early = at("2026-11-01T00:00:00Z");
        let late = at("2026-11-01T00:00:00.000000001Z");
        assert!(rank_key(11, late) > rank_key(10, early));
        assert!(rank_key(10, early) > rank_key(10, late));
        assert!(rank_key(1, at("9999-12-31T23:59:59Z")) > rank_key(0, at("1970-01-01T00:00:00Z")));
        assert_eq!(of_rank_key(rank_key(42, late)), Some((42, late)));
        assert!(
            rank_key(u64::MAX, early) < 10u128.pow(38),
            "DynamoDB's 38 digits"
        );
    }

    #[test]
    fn shards_and_sample_are_stable_and_spread() {
        let fans: Vec<UserId> = (0..4096)
            .map(|n| UserId::parse(format!("fan-{n}")).unwrap())
            .collect();
        let mut per_shard = [0u32; BOARD_SHARDS as usize];
        for fan in &fans {
            per_shard[shard_of(fan) as usize] += 1;
            assert_eq!(shard_of(fan), shard_of(&fan.clone()));
        }
        assert!(
            per_shard.iter().all(|&n| (160..=352).contains(&n)),
            "{per_shard:?}"
        );
        let sampled = fans.iter().filter(|fan| is_sampled(fan)).count();
        assert!((4..=40).contains(&sampled), "{sampled} of 4096");
    }
}
