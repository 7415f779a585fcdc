//! Admission to a queued drop (pure): how many fans the keeper lets in on a pass, which way an
//! entry moves when the keeper or a start touches it, and what a start refused for want of
//! admission is told.
//!
//! Fans are admitted by position. The rule counts *demand*, not fans: each live admitted fan
//! (window open, under the pack's limit) may still take `allowance - bought` units, and a fan is
//! admitted only while that demand is under the units left (neither sold nor held). Counting fans
//! alone would let a fan who already bought take the unit a fan admitted after them was let in
//! for; counting demand keeps every fan admitted and not yet bought within the units left (the
//! last one admitted may be partly covered: a unit is never left unsold while a fan waits).

use crate::queue::entry::{EntryStatus, QueueEntry};
use crate::timestamp::Timestamp;

/// How many units one admitted fan may take: the pack's `maxPerUser`, or without one any number
/// (such a fan's demand covers all the units left, so fans are let in one at a time).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Allowance(pub Option<u32>);

impl Allowance {
    /// Units a fan who has `bought` may still take (saturated for no limit).
    pub fn still(self, bought: u32) -> u64 {
        match self.0 {
            Some(max) => u64::from(max.saturating_sub(bought)),
            None => u64::MAX / 4,
        }
    }

    /// Whether a fan who has `bought` has taken all they may.
    pub fn reached(self, bought: u32) -> bool {
        self.0.is_some_and(|max| bought >= max)
    }
}

/// What a pass decides on: the units left in the pack's shares, the demand of the fans already
/// admitted whose windows are open ([`demand`]) and how many fans wait unadmitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Supply {
    pub left: u64,
    pub demand: u64,
    pub waiting: u64,
}

/// The demand of live admitted fans, each given by what they have `bought` so far.
pub fn demand(allowance: Allowance, bought: impl IntoIterator<Item = u32>) -> u64 {
    bought
        .into_iter()
        .map(|bought| allowance.still(bought))
        .fold(0u64, u64::saturating_add)
}

/// How many more fans to admit, next by position: while the demand is under the units left,
/// one more fan (and their allowance) at a time, up to those who wait.
pub fn to_admit(supply: Supply, allowance: Allowance) -> u64 {
    if supply.demand >= supply.left {
        return 0;
    }
    let free = supply.left - supply.demand;
    let each = allowance.still(0).max(1);
    free.div_ceil(each).min(supply.waiting)
}

/// Where an admitted fan's entry goes when its window closes: `done` if they bought anything
/// (they were served), else `lapsed` (the window passed unused; the report counts them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowEnd {
    Done,
    Lapsed,
}

pub fn window_end(bought: u32) -> WindowEnd {
    if bought == 0 {
        WindowEnd::Lapsed
    } else {
        WindowEnd::Done
    }
}

/// Whether a start that brings an admitted fan to `bought` (after it) ends their admission.
pub fn start_finishes(allowance: Allowance, bought_after: u32) -> bool {
    allowance.reached(bought_after)
}

/// Why a start on a queued pack was refused: the fan's entry did not let them buy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AdmissionRefusal {
    #[error("the fan did not join the pack's queue")]
    NotJoined,
    #[error("the fan's turn has not come yet")]
    NotYetAdmitted,
    #[error("the fan's admission window passed")]
    Lapsed,
    #[error("the fan bought as many as their admission allows")]
    Used,
    #[error("the pack sold out before the fan's turn")]
    SoldOut,
}

impl AdmissionRefusal {
    /// What the fan is told (the 403's message).
    pub fn message(self) -> &'static str {
        match self {
            Self::NotJoined => {
                "This pack sells only to fans admitted from its queue, and you did not join it."
            }
            Self::NotYetAdmitted => {
                "This pack sells only to fans admitted from its queue: your turn has not come yet."
            }
            Self::Lapsed => {
                "This pack sells only to fans admitted from its queue: your admission window has passed."
            }
            Self::Used => {
                "This pack sells only to fans admitted from its queue: you bought as many as your admission allows."
            }
            Self::SoldOut => {
                "This pack sells only to fans admitted from its queue: it sold out before your turn."
            }
        }
    }
}

/// Whether `entry` (`None`: the fan did not join) lets its fan start a purchase at `now`:
/// admitted, with the window open. A start on a queued pack checks this on what it read, and
/// its transaction conditions on the same ([`crate::store`]'s `entry_admits`); after a
/// cancellation, the entry as it is then says which refusal.
pub fn check_admitted(entry: Option<&QueueEntry>, now: Timestamp) -> Result<(), AdmissionRefusal> {
    let Some(entry) = entry else {
        return Err(AdmissionRefusal::NotJoined);
    };
    match entry.status {
        EntryStatus::Admitted if entry.pass_expires_at.is_some_and(|end| end > now) => Ok(()),
        EntryStatus::Admitted | EntryStatus::Lapsed => Err(AdmissionRefusal::Lapsed),
        EntryStatus::Waiting | EntryStatus::Queued => Err(AdmissionRefusal::NotYetAdmitted),
        EntryStatus::Done => Err(AdmissionRefusal::Used),
        EntryStatus::SoldOut => Err(AdmissionRefusal::SoldOut),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO: Allowance = Allowance(Some(2));

    #[test]
    fn admits_while_demand_is_under_the_units_left() {
        let supply = |left, demand, waiting| Supply {
            left,
            demand,
            waiting,
        };
        assert_eq!(to_admit(supply(10, 0, 100), Allowance(Some(1))), 10);
        // Five fans of two each cover ten units; an odd unit lets one more in, partly covered.
        assert_eq!(to_admit(supply(10, 0, 100), TWO), 5);
        assert_eq!(to_admit(supply(11, 0, 100), TWO), 6);
        assert_eq!(to_admit(supply(10, 9, 100), TWO), 1);
        assert_eq!(to_admit(supply(10, 10, 100), TWO), 0);
        assert_eq!(to_admit(supply(3, 7, 100), TWO), 0);
        // Never more than wait.
        assert_eq!(to_admit(supply(10, 0, 3), TWO), 3);
        // No limit: one fan at a time, only when no one is live.
        assert_eq!(to_admit(supply(10, 0, 5), Allowance(None)), 1);
        let live = demand(Allowance(None), [0]);
        assert_eq!(to_admit(supply(10, live, 5), Allowance(None)), 0);
    }

    #[test]
    fn demand_counts_what_live_fans_may_still_take() {
        assert_eq!(demand(TWO, [0, 1, 2]), 3);
        assert_eq!(demand(TWO, []), 0);
        assert!(demand(Allowance(None), [0, 0]) > 1_000_000);
    }

    #[test]
    fn windows_end_done_or_lapsed_and_starts_finish_at_the_limit() {
        assert_eq!(window_end(0), WindowEnd::Lapsed);
        assert_eq!(window_end(1), WindowEnd::Done);
        assert!(!start_finishes(TWO, 1));
        assert!(start_finishes(TWO, 2));
        assert!(!start_finishes(Allowance(None), 50));
    }

    #[test]
    fn a_refused_start_is_told_which_case() {
        let now = Timestamp::parse("2026-12-01T18:00:00Z").unwrap();
        let entry = |status, end: Option<i64>| QueueEntry {
            pack_id: crate::ids::PackId::parse("drop").unwrap(),
            entry_id: crate::ids::EntryId::parse("0123456789abcdef0123456789abcdef").unwrap(),
            user_id: crate::ids::UserId::parse("fan").unwrap(),
            joined_at: now,
            receipt: String::new(),
            status,
            position: Some(1),
            pass_expires_at: end.and_then(|s| now.plus_seconds(s)),
            bought: 0,
        };
        let check = |status, end| check_admitted(Some(&entry(status, end)), now);
        assert_eq!(check_admitted(None, now), Err(AdmissionRefusal::NotJoined));
        assert_eq!(check(EntryStatus::Admitted, Some(1)), Ok(()));
        // The window ends at passExpiresAt, excluded (as the condition `passExpiresAt > :now`).
        assert_eq!(
            check(EntryStatus::Admitted, Some(0)),
            Err(AdmissionRefusal::Lapsed)
        );
        assert_eq!(
            check(EntryStatus::Lapsed, None),
            Err(AdmissionRefusal::Lapsed)
        );
        assert_eq!(
            check(EntryStatus::Waiting, None),
            Err(AdmissionRefusal::NotYetAdmitted)
        );
        assert_eq!(
            check(EntryStatus::Queued, None),
            Err(AdmissionRefusal::NotYetAdmitted)
        );
        assert_eq!(
            check(EntryStatus::Done, Some(1)),
            Err(AdmissionRefusal::Used)
        );
        assert_eq!(
            check(EntryStatus::SoldOut, None),
            Err(AdmissionRefusal::SoldOut)
        );
        for refusal in [
            AdmissionRefusal::NotJoined,
            AdmissionRefusal::NotYetAdmitted,
            AdmissionRefusal::Lapsed,
            AdmissionRefusal::Used,
            AdmissionRefusal::SoldOut,
        ] {
            assert!(refusal.message().starts_with("This pack sells only"));
        }
    }
}
