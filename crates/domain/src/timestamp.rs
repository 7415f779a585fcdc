//! RFC 3339 UTC timestamps, as they appear in the API and in the table.

use std::fmt;
use std::sync::atomic::{AtomicI64, Ordering};

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use time::format_description::well_known::Rfc3339;
use time::{OffsetDateTime, UtcDateTime};

/// An instant, written as RFC 3339 in UTC (`2026-03-01T18:00:00Z`), between 1970 and 9999.
/// Held as a `UtcDateTime`, not an `OffsetDateTime`: compared as it is, with no offset to convert
/// (a pack list compares two per pack listed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(UtcDateTime);

/// The years an instant may fall in.
const YEARS: std::ops::RangeInclusive<i32> = 1970..=9999;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TimestampError {
    #[error("must be an RFC 3339 timestamp such as 2026-03-01T18:00:00Z")]
    Syntax,
    #[error("must be in UTC (end with Z)")]
    NotUtc,
    #[error("must be between 1970 and 9999")]
    OutOfRange,
}

/// Seconds this process's clock runs ahead of the system's: 0, except in a function a test
/// started with `CLOCK_SKEW_SECONDS` (never deployed: a test checks the template), so that a
/// line's close or its beacon round is reached in seconds instead of minutes. Set once at cold
/// start ([`skew_clock`]), never by a test in its own process.
static SKEW: AtomicI64 = AtomicI64::new(0);

/// Moves this process's clock `seconds` ahead: [`Timestamp::now`] and [`unix_now`] read it.
pub fn skew_clock(seconds: i64) {
    SKEW.store(seconds, Ordering::Relaxed);
}

/// Whole seconds since the Unix epoch now, read off the system clock with no calendar
/// conversion ([`Timestamp::now`] builds a date, 185 instructions, and the rate limits ask for
/// the time on every request).
pub fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| {
            i64::try_from(since.as_secs()).unwrap_or(i64::MAX)
        })
        .saturating_add(SKEW.load(Ordering::Relaxed))
}

impl Timestamp {
    pub fn now() -> Self {
        let now = UtcDateTime::now();
        match SKEW.load(Ordering::Relaxed) {
            0 => Self(now),
            skew => Self(now.saturating_add(time::Duration::seconds(skew))),
        }
    }

    pub fn parse(text: &str) -> Result<Self, TimestampError> {
        // RFC 3339 lets applications use a space for `T`; this API writes and accepts `T` only.
        if !matches!(text.as_bytes().get(10), Some(b'T' | b't')) {
            return Err(TimestampError::Syntax);
        }
        let parsed = OffsetDateTime::parse(text, &Rfc3339).map_err(|_| TimestampError::Syntax)?;
        if !parsed.offset().is_utc() {
            return Err(TimestampError::NotUtc);
        }
        Self::from_datetime(parsed)
    }

    pub fn from_datetime(datetime: OffsetDateTime) -> Result<Self, TimestampError> {
        if !YEARS.contains(&datetime.year()) {
            return Err(TimestampError::OutOfRange);
        }
        Ok(Self(datetime.to_utc()))
    }

    fn from_utc(datetime: UtcDateTime) -> Option<Self> {
        YEARS.contains(&datetime.year()).then_some(Self(datetime))
    }

    /// Whole seconds since the Unix epoch (never negative).
    pub fn unix_seconds(self) -> u64 {
        self.0.unix_timestamp().unsigned_abs()
    }

    /// The sub-second part, in nanoseconds.
    pub fn subsec_nanos(self) -> u32 {
        self.0.nanosecond()
    }

    /// The instant `nanos` nanoseconds after the Unix epoch, `None` outside 1970-9999.
    pub fn from_unix_nanos(nanos: i128) -> Option<Self> {
        OffsetDateTime::from_unix_timestamp_nanos(nanos)
            .ok()
            .and_then(|datetime| Self::from_datetime(datetime).ok())
    }

    /// Nanoseconds since the Unix epoch: a number that orders like the instant.
    pub fn unix_nanos(self) -> i128 {
        self.0.unix_timestamp_nanos()
    }

    /// Milliseconds since the Unix epoch (rounded down).
    pub fn unix_millis(self) -> i64 {
        // 1970-9999 in milliseconds fits an i64 many times over.
        (self.unix_nanos().div_euclid(1_000_000)) as i64
    }

    /// Milliseconds from `self` until `later` (0 once `later` has passed): how far a client
    /// counting down to `later` is from it at `self`.
    pub fn millis_until(self, later: Timestamp) -> u64 {
        u64::try_from(later.unix_millis() - self.unix_millis()).unwrap_or(0)
    }

    pub fn datetime(self) -> OffsetDateTime {
        self.0.into()
    }

    /// This instant moved by `seconds` (negative: earlier), `None` outside 1970-9999.
    pub fn plus_seconds(self, seconds: i64) -> Option<Self> {
        self.0
            .checked_add(time::Duration::seconds(seconds))
            .and_then(Self::from_utc)
    }
}

/// A fan's list key at `at`: fixed-width nanoseconds, then the id, so that key order is time
/// order (the lists read it backwards: newest first, ties by id descending).
pub fn time_key(at: Timestamp, id: &str) -> String {
    format!("{:020}#{id}", at.unix_nanos())
}

/// Whether `text` is a key [`time_key`] could have written (of an id of the id grammar).
pub fn is_time_key(text: &str) -> bool {
    text.split_once('#').is_some_and(|(nanos, id)| {
        nanos.len() == 20
            && nanos.bytes().all(|b| b.is_ascii_digit())
            && crate::ids::is_valid_id(id)
    })
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // At most 30 bytes (`9999-12-31T23:59:59.999999999Z`): formatted on the stack, since
        // every pack in a list response writes two of these.
        let mut buffer = [0u8; 32];
        let mut cursor = std::io::Cursor::new(&mut buffer[..]);
        self.0
            .format_into(&mut cursor, &Rfc3339)
            .map_err(|_| fmt::Error)?;
        let written = cursor.position() as usize;
        f.write_str(std::str::from_utf8(&buffer[..written]).map_err(|_| fmt::Error)?)
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        Self::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_in_utc() {
        for text in [
            "2026-03-01T18:00:00Z",
            "1970-01-01T00:00:00Z",
            "2026-03-01T18:00:00.123456789Z",
            "9999-12-31T23:59:59Z",
        ] {
            assert_eq!(Timestamp::parse(text).unwrap().to_string(), text);
        }
        assert_eq!(
            Timestamp::parse("2026-03-01T18:00:00+00:00")
                .unwrap()
                .to_string(),
            "2026-03-01T18:00:00Z"
        );
    }

    #[test]
    fn rejects_offsets_bad_syntax_and_range() {
        assert_eq!(
            Timestamp::parse("2026-03-01T18:00:00+01:00"),
            Err(TimestampError::NotUtc)
        );
        assert_eq!(
            Timestamp::parse("1969-12-31T23:59:59Z"),
            Err(TimestampError::OutOfRange)
        );
        for bad in [
            "2026-03-01",
            "yesterday",
            "2026-03-01 18:00:00Z",
            "",
            "2026-13-01T00:00:00Z",
        ] {
            assert_eq!(Timestamp::parse(bad), Err(TimestampError::Syntax), "{bad}");
        }
    }
}
