//! A fan's standing on a board: their exact rank while fewer than [`EXACT_RANK_LIMIT`] fans are
//! ahead of them (the store counts the index entries above theirs, and stops counting there),
//! else a percentile estimated from the board's sample (one fan in
//! [`SAMPLE_ONE_IN`](super::SAMPLE_ONE_IN), chosen by a hash of their id, so independent of
//! their score).

use super::Score;

/// Ranks are exact within the top 10,000.
pub const EXACT_RANK_LIMIT: u64 = 10_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rank {
    /// 1 + the fans ahead (a higher score, or the same reached earlier).
    Exact(u64),
    /// The share of the board's fans behind this one, in whole percent (0-99), estimated.
    Percentile(u8),
}

/// A fan's score and rank on a board (none while they have no score on it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Standing {
    pub score: Score,
    pub rank: Rank,
}

impl Rank {
    /// The rank from the count of fans ahead, when it is below the limit.
    pub fn exact(ahead: u64) -> Option<Self> {
        (ahead < EXACT_RANK_LIMIT).then_some(Self::Exact(ahead + 1))
    }

    /// The percentile from the sample: how many sampled fans are ahead and behind (the fan
    /// themselves, if sampled, in neither).
    pub fn estimated(sample_ahead: u64, sample_behind: u64) -> Self {
        let total = (sample_ahead + sample_behind).max(1);
        let percent = (sample_behind * 100 / total).min(99);
        Self::Percentile(u8::try_from(percent).unwrap_or(99))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_within_the_limit_then_a_percentile() {
        assert_eq!(Rank::exact(0), Some(Rank::Exact(1)));
        assert_eq!(Rank::exact(9_999), Some(Rank::Exact(10_000)));
        assert_eq!(Rank::exact(10_000), None);
        assert_eq!(Rank::estimated(40, 360), Rank::Percentile(90));
        assert_eq!(Rank::estimated(0, 10), Rank::Percentile(99));
        assert_eq!(Rank::estimated(10, 0), Rank::Percentile(0));
        assert_eq!(Rank::estimated(0, 0), Rank::Percentile(0));
    }
}
