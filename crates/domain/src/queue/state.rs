//! A line's state (`QUEUE#<packId>` / `STATE`): created by seeding with the commitment (the
//! queue seed's hash and the beacon round), then moved on by the keeper (close: the entrants and
//! their root; draw: the beacon and the seed; admission: how far it got and the report's
//! counters). The public sees it through [`QueueStatus`], computed with the clock while the
//! stored status is still `open`.

use serde::{Deserialize, Serialize};
use strum::{EnumString, IntoStaticStr};
use utoipa::ToSchema;

use crate::beacon::quicknet;
use crate::ids::{EntryId, PackId, UserId};
use crate::queue::terms::{BEACON_MARGIN_SECONDS, Phase, QueueTerms};
use crate::timestamp::Timestamp;

/// How long before its beacon round's time a line's entrants must be committed for the draw to
/// use that round: the committed root is public (the queue's answer, cached for a few seconds)
/// for at least a minute before the round's randomness exists (docs/fairness.md, "The margin").
pub const COMMIT_LEAD_SECONDS: i64 = 60;

/// The round the draw of a set committed at `committed_at` uses: `fixed` (the terms' round) when
/// the commit came at least [`COMMIT_LEAD_SECONDS`] before that round's time; otherwise (a keeper
/// that was down past it) the round due [`BEACON_MARGIN_SECONDS`] after the commit, whose
/// randomness cannot exist yet. A line is never drawn with a round that may already have been
/// out when its set was fixed.
pub fn round_for_commit(fixed: u64, committed_at: Timestamp) -> u64 {
    let at = i64::try_from(committed_at.unix_seconds()).unwrap_or(i64::MAX);
    if at.saturating_add(COMMIT_LEAD_SECONDS) <= quicknet::time_of(fixed) {
        fixed
    } else {
        quicknet::round_at(at.saturating_add(BEACON_MARGIN_SECONDS))
    }
}

/// Why a beacon may not draw a line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DrawRefused {
    #[error("the beacon is round {given}, the line's is {fixed}")]
    OtherRound { given: u64, fixed: u64 },
    #[error("the entrants were committed less than {COMMIT_LEAD_SECONDS} s before round {round}")]
    CommittedLate { round: u64 },
}

/// The stored status: only the keeper moves it on, in this order.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    IntoStaticStr,
    EnumString,
    Serialize,
    Deserialize,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum StoredStatus {
    /// Seeded; fans join between `opensAt` and `closesAt`.
    Open,
    /// The entrants are committed (`entrants`, `entrantsRoot`, the entrant pages).
    Closed,
    /// The beacon is fetched, the seed revealed, positions written; admission runs.
    Drawn,
    /// Sold out or everyone admitted: the keeper no longer looks at it.
    Finished,
}

/// The status the API shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum QueueStatus {
    Upcoming,
    Open,
    Closed,
    /// Positions drawn; admission runs.
    Drawn,
    /// The sale through the line is over (every window closed with nobody left waiting, or every
    /// unit paid for): units left sell to the line's entrants.
    Finished,
}

pub use crate::beacon::Beacon;

/// A line's state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueState {
    pub pack_id: PackId,
    pub status: StoredStatus,
    /// The close, copied from the terms (it orders the keeper's pending index).
    pub closes_at: Timestamp,
    /// SHA-256 of the queue's secret seed, published before the line opens.
    pub seed_hash: [u8; 32],
    /// The quicknet round the draw uses: fixed with the terms, moved by a late close
    /// ([`round_for_commit`]).
    pub beacon_round: u64,
    /// When the close committed the entrants (`None` before the close).
    pub committed_at: Option<Timestamp>,
    /// How many fans joined (from the close).
    pub entrants: Option<u64>,
    /// The Merkle root of the sorted entry ids (from the close).
    pub entrants_root: Option<[u8; 32]>,
    /// How many entrant pages the close wrote (from the close).
    pub entrant_pages: Option<u32>,
    /// The beacon (from the draw).
    pub beacon: Option<Beacon>,
    /// The queue's secret seed (revealed by the draw).
    pub seed: Option<[u8; 32]>,
    /// The last position admitted so far (0: nobody yet). Every position up to it is admitted
    /// (a pass admits the fans a claim gave it, or the next pass does), so it is the report's
    /// `admitted` too: admissions write no counter on this item, which would make every one of
    /// a wave's writes a transaction on one key.
    pub admitted_through: u64,
    /// When the keeper last claimed positions (a wave of fans let in).
    pub last_wave_at: Option<Timestamp>,
    /// The report's counters, each added to by the write that moves the mark past an entry.
    pub bought: u64,
    pub lapsed: u64,
}

impl QueueState {
    /// The state seeding creates for `pack_id`'s line under `terms`, committed to a seed of hash
    /// `seed_hash`.
    pub fn seeded(pack_id: PackId, terms: &QueueTerms, seed_hash: [u8; 32]) -> Self {
        Self {
            pack_id,
            status: StoredStatus::Open,
            closes_at: terms.closes_at,
            seed_hash,
            beacon_round: terms.beacon_round(),
            committed_at: None,
            entrants: None,
            entrants_root: None,
            entrant_pages: None,
            beacon: None,
            seed: None,
            admitted_through: 0,
            last_wave_at: None,
            bought: 0,
            lapsed: 0,
        }
    }

    /// The status the API shows at `now` under `terms`.
    pub fn public_status(&self, terms: &QueueTerms, now: Timestamp) -> QueueStatus {
        match self.status {
            StoredStatus::Open => match terms.phase_at(now) {
                Phase::Upcoming => QueueStatus::Upcoming,
                Phase::Open => QueueStatus::Open,
                Phase::Closed => QueueStatus::Closed,
            },
            StoredStatus::Closed => QueueStatus::Closed,
            StoredStatus::Drawn => QueueStatus::Drawn,
            StoredStatus::Finished => QueueStatus::Finished,
        }
    }

    /// Whether the entrant set is committed (entrants listed, proofs given).
    pub fn committed(&self) -> bool {
        self.status >= StoredStatus::Closed
    }

    /// Whether `beacon` may draw this line: the line's round, and a set committed at least
    /// [`COMMIT_LEAD_SECONDS`] before that round's time. A line closed before the commit's time
    /// was kept (no `committed_at`) is checked on its round only.
    pub fn drawable_with(&self, beacon: &Beacon) -> Result<(), DrawRefused> {
        if beacon.round != self.beacon_round {
            return Err(DrawRefused::OtherRound {
                given: beacon.round,
                fixed: self.beacon_round,
            });
        }
        match self.committed_at {
            Some(at) if round_for_commit(self.beacon_round, at) != self.beacon_round => {
                Err(DrawRefused::CommittedLate {
                    round: self.beacon_round,
                })
            }
            _ => Ok(()),
        }
    }
}

/// Entry ids per entrant page: 2,048 ids of 32 characters are about 72 KB, far within an item's
/// 400 KB, and a page of the entrants list is one item read. A power of two, so that each page
/// is a whole subtree of the Merkle tree: a fan's proof needs their own page and the pages' roots
/// ([`EntrantsIndex`]), never the other pages (`merkle::paged_proof`).
pub const ENTRANTS_PAGE_SIZE: usize = 2_048;
const _: () = assert!(ENTRANTS_PAGE_SIZE.is_power_of_two());
/// Entries per order page: a user id may take 255 bytes, so 1,000 entries of at most about 300
/// bytes each stay within an item's 400 KB (2,000 would not).
pub const ORDER_PAGE_SIZE: usize = 1_000;

/// What a proof needs of a closed line's entrant pages besides the fan's own, written by the close
/// as one item: each page's first id (which page holds an id) and its Merkle root. 96 bytes a page
/// stored: an item's 400 KB holds the index of some 4,000 pages, 8 million entrants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntrantsIndex {
    pub first_ids: Vec<EntryId>,
    pub page_roots: Vec<[u8; 32]>,
}

impl EntrantsIndex {
    /// The page that holds `id` if it is an entrant: the last whose first id is not after it.
    pub fn page_of(&self, id: &EntryId) -> Option<u32> {
        let after = self.first_ids.partition_point(|first| first <= id);
        after
            .checked_sub(1)
            .and_then(|page| u32::try_from(page).ok())
    }
}

/// A page of the sorted entry ids, as the close commits them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntrantPage {
    /// From 0.
    pub page: u32,
    pub ids: Vec<EntryId>,
}

impl EntrantPage {
    /// The ids as the Merkle tree hashes them.
    pub fn strings(&self) -> Vec<String> {
        self.ids.iter().map(|id| id.as_str().to_owned()).collect()
    }
}

/// One entry of the drawn order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderedEntry {
    pub entry_id: EntryId,
    pub user_id: UserId,
}

/// A page of the drawn order: positions `page * ORDER_PAGE_SIZE + 1` onwards.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderPage {
    /// From 0.
    pub page: u32,
    pub entries: Vec<OrderedEntry>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(text: &str) -> Timestamp {
        Timestamp::parse(text).unwrap()
    }

    #[test]
    fn the_public_status_follows_the_clock_until_the_keeper_moves_it() {
        let terms = QueueTerms {
            opens_at: ts("2026-12-01T17:00:00Z"),
            closes_at: ts("2026-12-01T17:50:00Z"),
            pass_seconds: 600,
        };
        let mut state = QueueState::seeded(PackId::parse("p").unwrap(), &terms, [1; 32]);
        assert_eq!(state.beacon_round, terms.beacon_round());
        let show = |state: &QueueState, at| state.public_status(&terms, ts(at));
        assert_eq!(show(&state, "2026-12-01T16:00:00Z"), QueueStatus::Upcoming);
        assert_eq!(show(&state, "2026-12-01T17:00:00Z"), QueueStatus::Open);
        assert_eq!(show(&state, "2026-12-01T17:50:00Z"), QueueStatus::Closed);
        assert!(!state.committed(), "closed by the clock, not yet committed");
        state.status = StoredStatus::Closed;
        assert!(state.committed());
        state.status = StoredStatus::Drawn;
        assert_eq!(show(&state, "2026-12-01T19:00:00Z"), QueueStatus::Drawn);
        state.status = StoredStatus::Finished;
        assert_eq!(show(&state, "2026-12-01T19:00:00Z"), QueueStatus::Finished);
    }

    fn at_round_time(round: u64, plus: i64) -> Timestamp {
        Timestamp::from_unix_nanos(i128::from(quicknet::time_of(round) + plus) * 1_000_000_000)
            .unwrap()
    }

    #[test]
    fn a_close_too_late_for_the_terms_round_moves_it_after_the_commit() {
        let fixed = 9_367_912;
        // A minute or more before the round's time: the terms' round.
        assert_eq!(round_for_commit(fixed, at_round_time(fixed, -300)), fixed);
        assert_eq!(round_for_commit(fixed, at_round_time(fixed, -60)), fixed);
        // Less than a minute before, or after: the round due 5 minutes after the commit.
        for late in [-59, 0, 3_600] {
            let committed = at_round_time(fixed, late);
            let moved = round_for_commit(fixed, committed);
            assert_eq!(moved, fixed + ((300 + late) / 3) as u64, "{late}");
            let lead = quicknet::time_of(moved) - (quicknet::time_of(fixed) + late);
            assert!((298..=300).contains(&lead), "{late}: {lead}");
        }
    }

    #[test]
    fn only_the_line_s_round_committed_in_time_draws_it() {
        let terms = QueueTerms {
            opens_at: ts("2026-12-01T17:00:00Z"),
            closes_at: ts("2026-12-01T17:50:00Z"),
            pass_seconds: 600,
        };
        let mut state = QueueState::seeded(PackId::parse("p").unwrap(), &terms, [1; 32]);
        let round = state.beacon_round;
        let beacon = |round| crate::beacon::local(round);
        // Closed before the commit's time was kept: its round only.
        assert_eq!(state.drawable_with(&beacon(round)), Ok(()));
        assert_eq!(
            state.drawable_with(&beacon(round + 1)),
            Err(DrawRefused::OtherRound {
                given: round + 1,
                fixed: round
            })
        );
        state.committed_at = Some(at_round_time(round, -240));
        assert_eq!(state.drawable_with(&beacon(round)), Ok(()));
        // A state that says it was committed after its round's time is never drawn.
        state.committed_at = Some(at_round_time(round, 10));
        assert_eq!(
            state.drawable_with(&beacon(round)),
            Err(DrawRefused::CommittedLate { round })
        );
    }
}
