//! scripts/local's waiting rooms (local only): the shipped seed's queued packs
//! (`nba-all-star-2027`) have absolute times months away, so a local run would show their lines
//! `upcoming` for ever. When local-api serves the shipped seed in memory it moves each line to
//! open as it starts and close [`DEFAULT_OPEN_SECONDS`] later ([`OPEN_SECONDS_VAR`]), the sale
//! starting at the close: a demo joins, sees the local keeper draw with the local beacon (the
//! round due 5 minutes after the close, as deployed) and buys. The store is in memory, so each
//! start is a fresh line.
//!
//! Only this in-memory copy changes: `infra/seed/packs.json` and its frozen terms are what
//! seed-packs writes to a deployed table, and `--seed FILE` and `--dynamodb` keep their times.

use domain::packs::Pack;
use domain::timestamp::Timestamp;

/// How long a demo line stays open: time for a reader of docs/api.md's walkthrough, started
/// with scripts/local, to reach the queued drop and join (a reader who comes later restarts with
/// a shorter line: [`OPEN_SECONDS_VAR`]).
pub const DEFAULT_OPEN_SECONDS: i64 = 900;

/// The variable that sets how long the demo line stays open.
pub const OPEN_SECONDS_VAR: &str = "LOCAL_API_DEMO_QUEUE_SECONDS";

/// [`OPEN_SECONDS_VAR`], else [`DEFAULT_OPEN_SECONDS`]: 1 to 3600.
pub fn open_seconds_from_env() -> Result<i64, String> {
    let Ok(value) = std::env::var(OPEN_SECONDS_VAR) else {
        return Ok(DEFAULT_OPEN_SECONDS);
    };
    match value.parse() {
        Ok(seconds @ 1..=3600) => Ok(seconds),
        _ => Err(format!(
            "{OPEN_SECONDS_VAR}: not a number of seconds 1-3600: {value}"
        )),
    }
}

/// Every queued pack of `packs` with its line open from `now` for `open_for` seconds and its
/// sale starting at the close (terms still valid: the close is the sale's start, well within the
/// 7 days a line may stay open, and before the seed's `saleEndsAt`).
pub fn open_at(packs: &mut [Pack], now: Timestamp, open_for: i64) {
    let closes_at = now
        .plus_seconds(open_for)
        .expect("an hour from now is a time");
    for pack in packs {
        if let Some(queue) = &mut pack.queue {
            queue.opens_at = now;
            queue.closes_at = closes_at;
            pack.sale_starts_at = Some(closes_at);
        }
    }
}
