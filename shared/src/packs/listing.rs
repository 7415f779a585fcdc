//! The active-pack list: its order, its pages and the opaque cursor between pages.
//!
//! Order: `saleStartsAt` newest first, then `id` ascending. A [`ListingKey`] is a string that sorts
//! ascending in exactly that order, so a store can keep listable packs sorted by it (the DynamoDB
//! index's sort key) and start a page after any key.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::error::ApiError;
use crate::packs::{Pack, is_valid_id};
use crate::timestamp::Timestamp;

pub const DEFAULT_LIMIT: usize = 50;
pub const MAX_LIMIT: usize = 100;

/// 9999-12-31T23:59:59Z in Unix seconds: the latest instant a [`Timestamp`] holds.
const MAX_SECONDS: u64 = 253_402_300_799;
const SECONDS_DIGITS: usize = 12;
const NANOS_DIGITS: usize = 9;
const PREFIX_LEN: usize = SECONDS_DIGITS + NANOS_DIGITS;
const CURSOR_VERSION: &str = "1:";
const MAX_CURSOR_LEN: usize = 256;

/// `<inverted seconds><inverted nanoseconds>#<id>`: ascending order of these strings is newest
/// `saleStartsAt` first, then `id` ascending.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ListingKey(String);

fn inverted_prefix(at: Timestamp) -> String {
    format!(
        "{:0s$}{:0n$}",
        MAX_SECONDS - at.unix_seconds(),
        999_999_999 - at.subsec_nanos(),
        s = SECONDS_DIGITS,
        n = NANOS_DIGITS
    )
}

impl ListingKey {
    pub fn new(sale_starts_at: Timestamp, id: &str) -> Self {
        Self(format!("{}#{id}", inverted_prefix(sale_starts_at)))
    }

    /// The key of a pack that can be listed (status active, with a start), else `None`.
    pub fn of(pack: &Pack) -> Option<Self> {
        match (pack.status, pack.sale_starts_at) {
            (super::PackStatus::Active, Some(starts)) => Some(Self::new(starts, &pack.id)),
            _ => None,
        }
    }

    /// Every key at or above this bound belongs to a pack whose sale started at or before `now`.
    pub fn started_bound(now: Timestamp) -> String {
        format!("{}#", inverted_prefix(now))
    }

    /// A key as written by [`ListingKey::new`], checked to the letter.
    pub fn parse(text: &str) -> Option<Self> {
        let (prefix, id) = text.split_at_checked(PREFIX_LEN)?;
        let id = id.strip_prefix('#')?;
        if !prefix.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let seconds: u64 = prefix[..SECONDS_DIGITS].parse().ok()?;
        let well_formed = seconds <= MAX_SECONDS && is_valid_id(id);
        well_formed.then(|| Self(text.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn pack_id(&self) -> &str {
        &self.0[PREFIX_LEN + 1..]
    }

    /// The opaque cursor a client gets as `nextCursor`.
    pub fn to_cursor(&self) -> String {
        URL_SAFE_NO_PAD.encode(format!("{CURSOR_VERSION}{}", self.0))
    }

    /// Reads a cursor: it must decode to a key this API could have issued at or before `now`,
    /// so a forged one cannot reach past the list of started packs.
    pub fn from_cursor(cursor: &str, now: Timestamp) -> Result<Self, ApiError> {
        let invalid = || {
            ApiError::bad_request(
                "invalid_cursor",
                "The cursor is not one this API issued; start again without it.",
            )
        };
        if cursor.len() > MAX_CURSOR_LEN {
            return Err(invalid());
        }
        let bytes = URL_SAFE_NO_PAD.decode(cursor).map_err(|_| invalid())?;
        let text = std::str::from_utf8(&bytes).map_err(|_| invalid())?;
        let key = text
            .strip_prefix(CURSOR_VERSION)
            .and_then(Self::parse)
            .ok_or_else(invalid)?;
        if key.0 < Self::started_bound(now) {
            return Err(invalid());
        }
        Ok(key)
    }
}

/// What a client asked of the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageRequest {
    pub now: Timestamp,
    pub limit: usize,
    pub after: Option<ListingKey>,
}

/// One page of active packs; `next` is set when more may follow.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Page {
    pub packs: Vec<Pack>,
    pub next: Option<ListingKey>,
}

/// `limit`: a whole number from 1 to 100; absent means 50.
pub fn parse_limit(value: Option<&str>) -> Result<usize, ApiError> {
    let Some(text) = value else {
        return Ok(DEFAULT_LIMIT);
    };
    let limit = (text.len() <= 3 && text.bytes().all(|b| b.is_ascii_digit()))
        .then(|| text.parse::<usize>().ok())
        .flatten();
    match limit {
        Some(limit) if (1..=MAX_LIMIT).contains(&limit) => Ok(limit),
        _ => Err(ApiError::bad_request(
            "invalid_limit",
            "The limit must be a whole number from 1 to 100.",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packs::tests::sample_pack;

    fn ts(text: &str) -> Timestamp {
        Timestamp::parse(text).unwrap()
    }

    #[test]
    fn key_order_is_newest_start_first_then_id_ascending() {
        let starts = [
            ("b", "2026-01-01T00:00:00Z"),
            ("a", "2026-01-01T00:00:00Z"),
            ("c", "2026-02-01T00:00:00Z"),
            ("d", "2026-01-01T00:00:00.5Z"),
            ("e", "1970-01-01T00:00:00Z"),
            ("A", "2026-01-01T00:00:00Z"),
            ("a-1", "2026-01-01T00:00:00Z"),
        ];
        let mut keys: Vec<ListingKey> = starts
            .iter()
            .map(|(id, at)| ListingKey::new(ts(at), id))
            .collect();
        keys.sort();
        let ids: Vec<&str> = keys.iter().map(ListingKey::pack_id).collect();
        assert_eq!(ids, ["c", "d", "A", "a", "a-1", "b", "e"]);
    }

    #[test]
    fn started_bound_splits_started_from_future() {
        let now = ts("2026-06-01T12:00:00Z");
        let bound = ListingKey::started_bound(now);
        for (at, started) in [
            ("2026-06-01T12:00:00Z", true),
            ("2026-06-01T11:59:59.999999999Z", true),
            ("1970-01-01T00:00:00Z", true),
            ("2026-06-01T12:00:00.000000001Z", false),
            ("9999-12-31T23:59:59Z", false),
        ] {
            for id in ["0", "zzz", "-", "_"] {
                assert_eq!(
                    ListingKey::new(ts(at), id).as_str() >= bound.as_str(),
                    started,
                    "{at} {id}"
                );
            }
        }
    }

    #[test]
    fn only_active_packs_with_a_start_have_a_key() {
        let mut pack = sample_pack("p");
        assert!(ListingKey::of(&pack).is_some());
        pack.status = crate::packs::PackStatus::Draft;
        assert!(ListingKey::of(&pack).is_none());
    }

    #[test]
    fn cursor_round_trips() {
        let now = ts("2026-06-01T12:00:00Z");
        for (at, id) in [
            ("2026-01-01T00:00:00Z", "p1"),
            ("1970-01-01T00:00:00Z", "x"),
            ("2026-06-01T12:00:00Z", &*"Z".repeat(64)),
        ] {
            let key = ListingKey::new(ts(at), id);
            let cursor = key.to_cursor();
            assert!(
                cursor
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
                "{cursor}"
            );
            assert_eq!(ListingKey::from_cursor(&cursor, now).unwrap(), key);
        }
    }

    #[test]
    fn forged_cursors_are_refused() {
        let now = ts("2026-06-01T12:00:00Z");
        let future = ListingKey::new(ts("2027-01-01T00:00:00Z"), "p").to_cursor();
        let encode = |text: &str| URL_SAFE_NO_PAD.encode(text);
        for cursor in [
            String::new(),
            "!!!".into(),
            future,
            encode("1:"),
            encode("2:253402300799999999999#p"),
            encode("1:999999999999999999999#p"),
            encode("1:000000000000000000000#p"),
            encode("1:07575339379999999999#p"),
            encode("1:075753393799999999999#"),
            encode("1:075753393799999999999#a b"),
            encode("1:075753393799999999999#p\u{0}"),
            encode("1:07575339379999999999a#p"),
            encode("1:+75753393799999999999#p"),
            URL_SAFE_NO_PAD.encode([0xff, 0xfe]),
            "A".repeat(MAX_CURSOR_LEN + 1),
        ] {
            let result = ListingKey::from_cursor(&cursor, now);
            assert!(
                matches!(
                    &result,
                    Err(ApiError::BadRequest {
                        code: "invalid_cursor",
                        ..
                    })
                ),
                "{cursor}: {result:?}"
            );
        }
    }

    #[test]
    fn limit_is_1_to_100_defaulting_to_50() {
        assert_eq!(parse_limit(None), Ok(50));
        for (text, limit) in [("1", 1), ("100", 100), ("007", 7)] {
            assert_eq!(parse_limit(Some(text)), Ok(limit));
        }
        for bad in [
            "0",
            "101",
            "-1",
            "+5",
            "1.0",
            "",
            " 5",
            "abc",
            "99999999999999999999",
            "1e2",
        ] {
            assert!(parse_limit(Some(bad)).is_err(), "{bad}");
        }
    }
}
