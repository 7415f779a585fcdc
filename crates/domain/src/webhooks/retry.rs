//! What an attempt's answer decides, and when the next attempt is due: Standard Webhooks'
//! schedule (immediately, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and 24 h after
//! each failure, with jitter), only 2xx a success, 410 disabling the endpoint, `Retry-After`
//! honoured on 429, 502 and 504 (never sooner than the schedule, never later than a day), and an
//! endpoint whose every attempt failed for 3 days disabled.

use std::time::Duration;

use super::delivery::Failure;
use super::endpoint::DisabledReason;
use crate::timestamp::Timestamp;

/// The wait before each attempt, from the previous one's failure: attempt `n` (1-based) waits
/// `SCHEDULE[n - 1]`; after the last, the delivery fails for good.
pub const SCHEDULE: [Duration; 10] = [
    Duration::ZERO,
    Duration::from_secs(5),
    Duration::from_secs(5 * 60),
    Duration::from_secs(30 * 60),
    Duration::from_secs(2 * 3600),
    Duration::from_secs(5 * 3600),
    Duration::from_secs(10 * 3600),
    Duration::from_secs(14 * 3600),
    Duration::from_secs(20 * 3600),
    Duration::from_secs(24 * 3600),
];

/// The most attempts a delivery gets.
pub const MAX_ATTEMPTS: u32 = SCHEDULE.len() as u32;
/// How far jitter moves a wait, either way, in per cent.
pub const JITTER_PERCENT: u64 = 10;
/// The longest `Retry-After` honoured.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(24 * 3600);
/// How long an endpoint fails every attempt before it is disabled.
pub const FAILING_DISABLES_SECONDS: i64 = 3 * 24 * 3600;

/// How an attempt ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// The receiver answered with this status (and this `Retry-After`, if any).
    Status {
        code: u16,
        retry_after: Option<String>,
    },
    /// No answer: a timeout, a refused address, a connection or TLS failure.
    Failed(Failure),
}

/// What the sender does after an attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Delivered,
    /// The next attempt, after this wait.
    Retry(Duration),
    /// No attempt left: the delivery failed.
    Exhausted,
    /// 410 Gone: the endpoint is disabled, and this delivery ends.
    Gone,
}

/// The wait before attempt `attempt + 1` after attempt `attempt` failed, moved by jitter:
/// `jitter` is a random value that picks a point in ±[`JITTER_PERCENT`]. `None` when
/// `attempt` was the last.
pub fn next_wait(attempt: u32, jitter: u64) -> Option<Duration> {
    let base = *SCHEDULE.get(usize::try_from(attempt).ok()?)?;
    let span = base.as_millis() as u64 * JITTER_PERCENT / 100;
    let millis = (base.as_millis() as u64 - span) + jitter % (2 * span + 1);
    Some(Duration::from_millis(millis))
}

/// The wait a `Retry-After` value asks for at `now`: delta seconds or an HTTP date.
pub fn retry_after(value: &str, now: Timestamp) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at =
        time::OffsetDateTime::parse(value, &time::format_description::well_known::Rfc2822).ok()?;
    let millis = (at - now.datetime()).whole_milliseconds();
    Some(Duration::from_millis(u64::try_from(millis).unwrap_or(0)))
}

/// What attempt `attempt` (1-based) answering `answer` at `now` decides.
pub fn verdict(answer: &Answer, attempt: u32, now: Timestamp, jitter: u64) -> Verdict {
    let retry = |wait: Option<Duration>| wait.map_or(Verdict::Exhausted, Verdict::Retry);
    match answer {
        Answer::Status {
            code: 200..=299, ..
        } => Verdict::Delivered,
        Answer::Status { code: 410, .. } => Verdict::Gone,
        Answer::Status {
            code: 429 | 502 | 504,
            retry_after: Some(value),
        } => {
            let asked = retry_after(value, now).map(|wait| wait.min(MAX_RETRY_AFTER));
            retry(next_wait(attempt, jitter).map(|wait| wait.max(asked.unwrap_or_default())))
        }
        _ => retry(next_wait(attempt, jitter)),
    }
}

/// An endpoint's failing streak after an attempt at `now`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Streak {
    /// Nothing to write: the endpoint's item stays as it is (no write on every delivery).
    Unchanged,
    /// The first failure after a success: the streak starts at `now`.
    Started(Timestamp),
    /// A success after failures: the streak ends.
    Recovered,
    /// Disabled, for this reason.
    Disable(DisabledReason),
}

/// How the endpoint's state changes after an attempt with `verdict` at `now`, given when its
/// streak of failures began (`failing_since`).
pub fn streak(verdict: &Verdict, failing_since: Option<Timestamp>, now: Timestamp) -> Streak {
    match (verdict, failing_since) {
        (Verdict::Gone, _) => Streak::Disable(DisabledReason::Gone),
        (Verdict::Delivered, Some(_)) => Streak::Recovered,
        (Verdict::Delivered, None) => Streak::Unchanged,
        (_, None) => Streak::Started(now),
        (_, Some(since)) => {
            let limit = since.plus_seconds(FAILING_DISABLES_SECONDS);
            if limit.is_some_and(|limit| now >= limit) {
                Streak::Disable(DisabledReason::Failing)
            } else {
                Streak::Unchanged
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::webhooks::delivery::Failure;

    fn at(text: &str) -> Timestamp {
        Timestamp::parse(text).unwrap()
    }

    fn status(code: u16) -> Answer {
        Answer::Status {
            code,
            retry_after: None,
        }
    }

    #[test]
    fn the_schedule_is_standard_webhooks_with_jitter() {
        let seconds: Vec<u64> = (0..MAX_ATTEMPTS)
            .map(|attempt| next_wait(attempt, 0).unwrap().as_secs())
            .collect();
        // The lowest jitter: 90 % of 0, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h.
        assert_eq!(
            seconds,
            [0, 4, 270, 1620, 6480, 16200, 32400, 45360, 64800, 77760]
        );
        assert_eq!(next_wait(1, 500), Some(Duration::from_millis(5000)));
        assert_eq!(next_wait(1, 1000), Some(Duration::from_millis(5500)));
        assert_eq!(next_wait(1, 1001), Some(Duration::from_millis(4500)));
        assert!(next_wait(1, u64::MAX).unwrap() <= Duration::from_millis(5500));
        assert_eq!(next_wait(MAX_ATTEMPTS, 0), None);
    }

    #[test]
    fn only_2xx_delivers_and_410_disables() {
        let now = at("2026-11-29T08:00:00Z");
        for code in [200, 201, 204, 299] {
            assert_eq!(verdict(&status(code), 1, now, 0), Verdict::Delivered);
        }
        assert_eq!(verdict(&status(410), 1, now, 0), Verdict::Gone);
        for code in [
            100, 301, 302, 304, 400, 401, 404, 409, 429, 500, 502, 503, 504,
        ] {
            assert!(
                matches!(verdict(&status(code), 1, now, 0), Verdict::Retry(_)),
                "{code}"
            );
        }
        let timeout = Answer::Failed(Failure::Timeout);
        assert!(matches!(verdict(&timeout, 3, now, 0), Verdict::Retry(_)));
        assert_eq!(verdict(&timeout, MAX_ATTEMPTS, now, 0), Verdict::Exhausted);
        assert_eq!(
            verdict(&status(500), MAX_ATTEMPTS, now, 0),
            Verdict::Exhausted
        );
    }

    #[test]
    fn retry_after_is_honoured_on_429_502_504_within_bounds() {
        let now = at("2026-11-29T08:00:00Z");
        let asking = |code, value: &str| Answer::Status {
            code,
            retry_after: Some(value.to_owned()),
        };
        for code in [429, 502, 504] {
            assert_eq!(
                verdict(&asking(code, "120"), 1, now, 500),
                Verdict::Retry(Duration::from_secs(120))
            );
        }
        // An HTTP date, 10 minutes on.
        assert_eq!(
            verdict(&asking(429, "Sun, 29 Nov 2026 08:10:00 GMT"), 1, now, 500),
            Verdict::Retry(Duration::from_secs(600))
        );
        // Never sooner than the schedule, never later than a day.
        assert_eq!(
            verdict(&asking(429, "1"), 2, now, 30_000),
            Verdict::Retry(Duration::from_secs(300))
        );
        assert_eq!(
            verdict(&asking(429, "999999999"), 1, now, 500),
            Verdict::Retry(MAX_RETRY_AFTER)
        );
        // Another status's Retry-After is the schedule's.
        assert_eq!(
            verdict(&asking(500, "120"), 1, now, 500),
            Verdict::Retry(Duration::from_secs(5))
        );
        assert_eq!(
            verdict(&asking(429, "soon"), 1, now, 500),
            Verdict::Retry(Duration::from_secs(5))
        );
    }

    #[test]
    fn an_endpoint_failing_for_3_days_is_disabled_and_its_item_written_only_on_changes() {
        let start = at("2026-11-29T08:00:00Z");
        let failed = Verdict::Retry(Duration::from_secs(5));
        assert_eq!(streak(&failed, None, start), Streak::Started(start));
        assert_eq!(
            streak(&failed, Some(start), at("2026-12-02T07:59:59Z")),
            Streak::Unchanged
        );
        assert_eq!(
            streak(&Verdict::Exhausted, Some(start), at("2026-12-02T08:00:00Z")),
            Streak::Disable(DisabledReason::Failing)
        );
        assert_eq!(
            streak(&Verdict::Delivered, Some(start), start),
            Streak::Recovered
        );
        assert_eq!(streak(&Verdict::Delivered, None, start), Streak::Unchanged);
        assert_eq!(
            streak(&Verdict::Gone, None, start),
            Streak::Disable(DisabledReason::Gone)
        );
    }
}
