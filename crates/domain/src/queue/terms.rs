//! A pack's waiting-room terms (`queue` in its seed file and its API JSON): when the line opens
//! and closes and how long an admitted fan's window lasts; and what seeding fixes with them (the
//! beacon round the draw will use).

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::packs::FieldError;
use crate::packs::seed::freeze_bound;
use crate::timestamp::Timestamp;

/// An admitted fan's window when the seed file does not say.
pub const DEFAULT_PASS_SECONDS: u32 = 600;
/// The shortest window: a fan admitted must load the pack and start a purchase; under a minute,
/// a fan on a slow phone lapses before their first request lands.
pub const MIN_PASS_SECONDS: u32 = 60;
/// The longest window: every unit an admitted fan may still buy is kept from the fans after
/// them for the whole window, so an hour (the longest hold, `REVEAL_DELAY_SECONDS`) bounds it.
pub const MAX_PASS_SECONDS: u32 = 3600;
/// The longest a line stays open: a drop's waiting room, not a standing list; the queue's
/// secret seed stays unrevealed (and so must be kept safe) from seeding until the draw.
pub const MAX_OPEN_SECONDS: i64 = 7 * 24 * 3600;
/// How long after `closesAt` the beacon round comes (docs/fairness.md, "Margin"): the keeper
/// runs every minute and commits the entrants within one run (at most about a minute and a
/// half after the close, on a late schedule and a slow run), so five minutes leave the
/// entrant set committed well before the round's randomness exists.
pub const BEACON_MARGIN_SECONDS: i64 = 300;

/// The terms of a pack's waiting room.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct QueueTerms {
    /// When fans may start to join (RFC 3339, UTC).
    pub opens_at: Timestamp,
    /// When the line closes: at or before `saleStartsAt`.
    pub closes_at: Timestamp,
    /// An admitted fan's window to start their purchases, in seconds.
    #[serde(default = "default_pass_seconds")]
    #[schema(minimum = 60, maximum = 3600)]
    pub pass_seconds: u32,
}

fn default_pass_seconds() -> u32 {
    DEFAULT_PASS_SECONDS
}

/// Where a line is at a given instant, from its terms alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Upcoming,
    Open,
    Closed,
}

fn problem(field: &str, problem: impl Into<String>) -> FieldError {
    FieldError {
        field: format!("queue.{field}"),
        problem: problem.into(),
    }
}

impl QueueTerms {
    /// Checks the terms of a pack whose sale starts at `sale_starts_at`.
    pub fn validate(&self, sale_starts_at: Option<Timestamp>) -> Result<(), FieldError> {
        if self.opens_at >= self.closes_at {
            return Err(problem("closesAt", "must be after queue.opensAt"));
        }
        if self
            .opens_at
            .plus_seconds(MAX_OPEN_SECONDS)
            .is_some_and(|latest| self.closes_at > latest)
        {
            return Err(problem("closesAt", "must be at most 7 days after opensAt"));
        }
        match sale_starts_at {
            None => return Err(problem("closesAt", "needs the pack's saleStartsAt")),
            Some(starts) if self.closes_at > starts => {
                return Err(problem("closesAt", "must be at or before saleStartsAt"));
            }
            Some(_) => {}
        }
        if !(MIN_PASS_SECONDS..=MAX_PASS_SECONDS).contains(&self.pass_seconds) {
            return Err(problem(
                "passSeconds",
                format!("must be {MIN_PASS_SECONDS}-{MAX_PASS_SECONDS}"),
            ));
        }
        Ok(())
    }

    /// The phase of the line at `now`: open from `opensAt` (included) to `closesAt` (excluded).
    pub fn phase_at(&self, now: Timestamp) -> Phase {
        if now < self.opens_at {
            Phase::Upcoming
        } else if now < self.closes_at {
            Phase::Open
        } else {
            Phase::Closed
        }
    }

    /// Whether the terms are frozen at `now` (the operator's clock): the line opens within
    /// `TERMS_FREEZE_SECONDS`, after which its seed's hash and beacon round are public and fans
    /// may have joined under them.
    pub fn frozen_at(&self, now: Timestamp) -> bool {
        self.opens_at <= freeze_bound(now)
    }

    /// The drand quicknet round the draw uses: the round at `closesAt` +
    /// [`BEACON_MARGIN_SECONDS`].
    pub fn beacon_round(&self) -> u64 {
        let at = i64::try_from(self.closes_at.unix_seconds()).unwrap_or(i64::MAX);
        crate::beacon::quicknet::round_at(at.saturating_add(BEACON_MARGIN_SECONDS))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(text: &str) -> Timestamp {
        Timestamp::parse(text).unwrap()
    }

    fn terms() -> QueueTerms {
        QueueTerms {
            opens_at: ts("2026-12-01T17:00:00Z"),
            closes_at: ts("2026-12-01T17:50:00Z"),
            pass_seconds: 600,
        }
    }

    #[test]
    fn terms_name_the_broken_field() {
        let starts = Some(ts("2026-12-01T18:00:00Z"));
        assert_eq!(terms().validate(starts), Ok(()));
        let at_the_start = QueueTerms {
            closes_at: ts("2026-12-01T18:00:00Z"),
            ..terms()
        };
        assert_eq!(
            at_the_start.validate(starts),
            Ok(()),
            "closes as the sale starts"
        );
        type Breaker = fn(&mut QueueTerms);
        let cases: [(&str, Breaker); 5] = [
            ("queue.closesAt", |t| t.closes_at = t.opens_at),
            ("queue.closesAt", |t| {
                t.closes_at = ts("2026-12-01T18:00:00.000000001Z")
            }),
            ("queue.closesAt", |t| {
                t.opens_at = ts("2026-11-24T17:49:59Z")
            }),
            ("queue.passSeconds", |t| t.pass_seconds = 59),
            ("queue.passSeconds", |t| t.pass_seconds = 3601),
        ];
        for (field, break_it) in cases {
            let mut broken = terms();
            break_it(&mut broken);
            assert_eq!(broken.validate(starts).unwrap_err().field, field);
        }
        assert_eq!(
            terms().validate(None).unwrap_err().field,
            "queue.closesAt",
            "a queue needs a sale start"
        );
    }

    #[test]
    fn pass_seconds_default_to_ten_minutes_and_unknown_fields_are_refused() {
        let read: QueueTerms = serde_json::from_value(serde_json::json!({
            "opensAt": "2026-12-01T17:00:00Z", "closesAt": "2026-12-01T17:50:00Z"
        }))
        .unwrap();
        assert_eq!(read, terms());
        assert!(
            serde_json::from_value::<QueueTerms>(serde_json::json!({
                "opensAt": "2026-12-01T17:00:00Z", "closesAt": "2026-12-01T17:50:00Z",
                "seedHash": "00"
            }))
            .is_err()
        );
    }

    #[test]
    fn the_phase_turns_at_the_opening_and_the_close() {
        let t = terms();
        assert_eq!(
            t.phase_at(ts("2026-12-01T16:59:59.999999999Z")),
            Phase::Upcoming
        );
        assert_eq!(t.phase_at(ts("2026-12-01T17:00:00Z")), Phase::Open);
        assert_eq!(
            t.phase_at(ts("2026-12-01T17:49:59.999999999Z")),
            Phase::Open
        );
        assert_eq!(t.phase_at(ts("2026-12-01T17:50:00Z")), Phase::Closed);
        assert!(!t.frozen_at(ts("2026-12-01T16:54:59Z")));
        assert!(t.frozen_at(ts("2026-12-01T16:55:00Z")));
    }

    #[test]
    fn the_beacon_round_comes_five_minutes_after_the_close() {
        // quicknet round 1 is at its genesis; the close + 300 s is 2026-12-01T17:55:00Z.
        let round = terms().beacon_round();
        let close_plus_margin: i64 = 1_796_147_700;
        assert_eq!(round, ((close_plus_margin - 1_692_803_367) / 3 + 1) as u64);
        let round_time = 1_692_803_367 + (round as i64 - 1) * 3;
        assert!(round_time <= close_plus_margin && close_plus_margin - round_time < 3);
    }
}
