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

/// The allowance of a queued pack stored without `maxPerUser` (seeding now refuses one): one
/// unit a fan, so that its line still admits by its units.
pub const DEFAULT_ALLOWANCE: u32 = 1;

/// How many units one admitted fan may take: the pack's `maxPerUser`, which seeding requires of
/// a queued pack (a pack stored before that rule: [`DEFAULT_ALLOWANCE`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Allowance(u32);

impl Allowance {
    /// The allowance of a pack whose `maxPerUser` is `max_per_user`.
    pub fn of(max_per_user: Option<u32>) -> Self {
        Self(max_per_user.unwrap_or(DEFAULT_ALLOWANCE).max(1))
    }

    /// Units a fan who has `bought` may still take.
    pub fn still(self, bought: u32) -> u64 {
        u64::from(self.0.saturating_sub(bought))
    }

    /// Whether a fan who has `bought` has taken all they may.
    pub fn reached(self, bought: u32) -> bool {
        bought >= self.0
    }

    /// How many fans `units` serve, the last one partly covered (a unit is never left unsold
    /// while a fan waits).
    pub fn fans_for(self, units: u64) -> u64 {
        units.div_ceil(u64::from(self.0))
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
    allowance
        .fans_for(supply.left - supply.demand)
        .min(supply.waiting)
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

/// Whether an entry the keeper has admitted is over at `now` (the mark may pass it): lapsed or
/// sold out; done once its window has closed. A fan done inside their window is still live (with
/// no demand): a hold of theirs released unpaid gives them the unit back
/// ([`store::queue_conditions::allowance_back`]), and they may buy it again.
pub fn entry_over(entry: &QueueEntry, now: Timestamp) -> Option<WindowEnd> {
    match entry.status {
        EntryStatus::Lapsed => Some(WindowEnd::Lapsed),
        EntryStatus::SoldOut => Some(WindowEnd::Done),
        EntryStatus::Done if !window_open(entry, now) => Some(WindowEnd::Done),
        _ => None,
    }
}

/// Whether `entry`'s admission window is open at `now` (its end excluded, as the condition
/// `passExpiresAt > :now`).
pub fn window_open(entry: &QueueEntry, now: Timestamp) -> bool {
    entry.pass_expires_at.is_some_and(|end| end > now)
}

/// How a start on a queued pack passes the line's door.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Door {
    /// Through the fan's admission: the start's write updates their entry, conditioned on it as
    /// read (`bought` before the start).
    Admitted { bought: u32 },
    /// After the line finished: the units left (lapsed windows, holds released) sell to the
    /// line's entrants, whatever their entry's status; the pack's `maxPerUser` still counts what
    /// each bought through the line. The entry is not touched, and the line's end is final.
    AfterLine,
}

/// Which door a start by the fan of `entry` (`None`: they did not join) passes at `now`, the
/// line `finished` or not. Only entrants pass: the join's human check guards the units left too.
pub fn door(
    entry: Option<&QueueEntry>,
    finished: bool,
    now: Timestamp,
) -> Result<Door, AdmissionRefusal> {
    match (check_admitted(entry, now), entry) {
        (Ok(()), Some(entry)) => Ok(Door::Admitted {
            bought: entry.bought,
        }),
        (Err(AdmissionRefusal::NotJoined), _) | (Ok(()), None) => Err(AdmissionRefusal::NotJoined),
        (Err(_), _) if finished => Ok(Door::AfterLine),
        (Err(refusal), _) => Err(refusal),
    }
}

/// What a start asks of a pack's line, the same in both stores: nothing when the pack has none
/// (`queued` false) or the start passes after the line (`None`); else the fan's `bought` as read,
/// which the start's write conditions on and adds to (`Some`).
pub fn start_admission(
    queued: bool,
    entry: Option<&QueueEntry>,
    finished: bool,
    now: Timestamp,
) -> Result<Option<u32>, AdmissionRefusal> {
    if !queued {
        return Ok(None);
    }
    Ok(match door(entry, finished, now)? {
        Door::Admitted { bought } => Some(bought),
        Door::AfterLine => None,
    })
}

/// Whether a start by the fan of `entry` needs to know if the line has finished: only when their
/// entry does not admit them and they joined.
pub fn needs_line_state(entry: Option<&QueueEntry>, now: Timestamp) -> bool {
    entry.is_some() && check_admitted(entry, now).is_err()
}

/// What a released hold gives back to its fan's entry (on the condition
/// `store::queue_conditions::allowance_back`): one unit fewer bought, and admitted again.
pub fn give_back(entry: &mut QueueEntry) {
    entry.bought = entry.bought.saturating_sub(1);
    entry.status = EntryStatus::Admitted;
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
/// its transaction conditions on the same ([`store`]'s `entry_admits`); after a
/// cancellation, the entry as it is then says which refusal.
pub fn check_admitted(entry: Option<&QueueEntry>, now: Timestamp) -> Result<(), AdmissionRefusal> {
    let Some(entry) = entry else {
        return Err(AdmissionRefusal::NotJoined);
    };
    match entry.status {
        EntryStatus::Admitted if window_open(entry, now) => Ok(()),
        EntryStatus::Admitted | EntryStatus::Lapsed => Err(AdmissionRefusal::Lapsed),
        EntryStatus::Waiting | EntryStatus::Queued => Err(AdmissionRefusal::NotYetAdmitted),
        EntryStatus::Done => Err(AdmissionRefusal::Used),
        EntryStatus::SoldOut => Err(AdmissionRefusal::SoldOut),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO: Allowance = Allowance(2);

    #[test]
    fn admits_while_demand_is_under_the_units_left() {
        let supply = |left, demand, waiting| Supply {
            left,
            demand,
            waiting,
        };
        assert_eq!(to_admit(supply(10, 0, 100), Allowance::of(Some(1))), 10);
        // Five fans of two each cover ten units; an odd unit lets one more in, partly covered.
        assert_eq!(to_admit(supply(10, 0, 100), TWO), 5);
        assert_eq!(to_admit(supply(11, 0, 100), TWO), 6);
        assert_eq!(to_admit(supply(10, 9, 100), TWO), 1);
        assert_eq!(to_admit(supply(10, 10, 100), TWO), 0);
        assert_eq!(to_admit(supply(3, 7, 100), TWO), 0);
        // Never more than wait.
        assert_eq!(to_admit(supply(10, 0, 3), TWO), 3);
        // A pack stored without a limit admits one fan a unit, not one fan at a time.
        assert_eq!(Allowance::of(None), Allowance::of(Some(DEFAULT_ALLOWANCE)));
        assert_eq!(to_admit(supply(10, 0, 50), Allowance::of(None)), 10);
        let live = demand(Allowance::of(None), [0, 0, 0]);
        assert_eq!(to_admit(supply(10, live, 50), Allowance::of(None)), 7);
    }

    /// Issue 42, G1: a drop of 30,000 units and 189,000 entrants admits its first 30,000 /
    /// allowance fans in the first pass after the draw.
    #[test]
    fn a_big_drop_admits_every_fan_its_units_serve_at_once() {
        let first = Supply {
            left: 30_000,
            demand: 0,
            waiting: 189_000,
        };
        assert_eq!(to_admit(first, Allowance::of(Some(4))), 7_500);
        assert_eq!(to_admit(first, Allowance::of(Some(1))), 30_000);
        assert_eq!(to_admit(first, Allowance::of(Some(7))), 4_286);
    }

    #[test]
    fn demand_counts_what_live_fans_may_still_take() {
        assert_eq!(demand(TWO, [0, 1, 2]), 3);
        assert_eq!(demand(TWO, []), 0);
        assert_eq!(demand(Allowance::of(None), [0, 0, 1]), 2);
    }

    #[test]
    fn windows_end_done_or_lapsed_and_starts_finish_at_the_limit() {
        assert_eq!(window_end(0), WindowEnd::Lapsed);
        assert_eq!(window_end(1), WindowEnd::Done);
        assert!(!start_finishes(TWO, 1));
        assert!(start_finishes(TWO, 2));
        assert!(start_finishes(Allowance::of(None), 1));
    }

    fn entry_at(status: EntryStatus, now: Timestamp, end: Option<i64>, bought: u32) -> QueueEntry {
        QueueEntry {
            pack_id: crate::ids::PackId::parse("drop").unwrap(),
            entry_id: crate::ids::EntryId::parse("0123456789abcdef0123456789abcdef").unwrap(),
            user_id: crate::ids::UserId::parse("fan").unwrap(),
            joined_at: now,
            receipt: String::new(),
            status,
            position: Some(1),
            pass_expires_at: end.and_then(|s| now.plus_seconds(s)),
            bought,
        }
    }

    /// Issue 42, G7: a fan done inside their window is not over: a released hold gives the unit
    /// back, and the keeper's mark must not pass them before their window closes.
    #[test]
    fn a_fan_done_inside_their_window_is_not_over_yet() {
        let now = Timestamp::parse("2026-12-01T18:00:00Z").unwrap();
        let over = |status, end, bought| entry_over(&entry_at(status, now, end, bought), now);
        assert_eq!(over(EntryStatus::Done, Some(60), 2), None);
        assert_eq!(over(EntryStatus::Done, Some(0), 2), Some(WindowEnd::Done));
        assert_eq!(
            over(EntryStatus::Lapsed, Some(0), 0),
            Some(WindowEnd::Lapsed)
        );
        assert_eq!(over(EntryStatus::SoldOut, None, 0), Some(WindowEnd::Done));
        assert_eq!(over(EntryStatus::Admitted, Some(60), 0), None);
        assert_eq!(over(EntryStatus::Queued, None, 0), None);
    }

    /// Issue 42, G5: after the line finished, its entrants (whatever their entry says) may buy
    /// the units left; fans who did not join never may, and an admitted fan still goes through
    /// their admission.
    #[test]
    fn after_the_line_its_entrants_buy_what_is_left() {
        let now = Timestamp::parse("2026-12-01T18:00:00Z").unwrap();
        let open = entry_at(EntryStatus::Admitted, now, Some(60), 1);
        assert_eq!(
            door(Some(&open), false, now),
            Ok(Door::Admitted { bought: 1 })
        );
        assert_eq!(
            door(Some(&open), true, now),
            Ok(Door::Admitted { bought: 1 })
        );
        assert!(!needs_line_state(Some(&open), now));
        for status in [
            EntryStatus::Lapsed,
            EntryStatus::Done,
            EntryStatus::SoldOut,
            EntryStatus::Queued,
        ] {
            let entry = entry_at(status, now, Some(0), 0);
            assert!(needs_line_state(Some(&entry), now));
            assert!(door(Some(&entry), false, now).is_err(), "{status:?}");
            assert_eq!(door(Some(&entry), true, now), Ok(Door::AfterLine));
        }
        assert!(!needs_line_state(None, now));
        assert_eq!(door(None, true, now), Err(AdmissionRefusal::NotJoined));
    }

    #[test]
    fn a_refused_start_is_told_which_case() {
        let now = Timestamp::parse("2026-12-01T18:00:00Z").unwrap();
        let entry = |status, end: Option<i64>| entry_at(status, now, end, 0);
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
