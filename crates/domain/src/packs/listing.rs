//! The active-pack list: its order, its pages and the opaque cursor between pages.
//!
//! Order: `saleStartsAt` newest first, then `id` ascending. A [`ListingKey`] is a string that sorts
//! ascending in exactly that order, so a store can keep listable packs sorted by it (the DynamoDB
//! index's sort key) and start a page after any key.
//!
//! A cursor is a listing key signed by [`CursorSigner`] (HMAC-SHA256): a forged or tampered one
//! is refused, so a client can only resume at positions this API handed out.

use aws_lc_rs::constant_time::verify_slices_are_equal;
use aws_lc_rs::hmac;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::ids::{LeagueId, TeamId};
use crate::packs::document::PackDocument;
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
/// Bytes of the HMAC-SHA256 tag kept in a cursor.
const TAG_LEN: usize = 16;
/// The shortest accepted signing secret.
pub const MIN_CURSOR_SECRET_LEN: usize = 32;

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
}

/// A cursor this API did not issue, or one it can no longer honour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("invalid cursor")]
pub struct InvalidCursor;

/// Signs listing keys into opaque cursors and checks them back.
pub struct CursorSigner {
    key: hmac::Key,
}

impl CursorSigner {
    /// A signer with `secret` (at least [`MIN_CURSOR_SECRET_LEN`] bytes; every instance of the
    /// function must share it).
    pub fn new(secret: &[u8]) -> Self {
        Self {
            key: hmac::Key::new(hmac::HMAC_SHA256, secret),
        }
    }

    /// A signer with a random secret: cursors are valid for the life of this process only.
    pub fn random() -> Self {
        let mut secret = [0u8; MIN_CURSOR_SECRET_LEN];
        aws_lc_rs::rand::fill(&mut secret).expect("the system random source works");
        Self::new(&secret)
    }

    fn tag(&self, payload: &str) -> [u8; TAG_LEN] {
        let full = hmac::sign(&self.key, payload.as_bytes());
        let mut tag = [0u8; TAG_LEN];
        tag.copy_from_slice(&full.as_ref()[..TAG_LEN]);
        tag
    }

    /// The opaque cursor a client gets as `nextCursor`: `<payload>.<tag>`, both base64url.
    pub fn encode(&self, key: &ListingKey) -> String {
        let payload = format!("{CURSOR_VERSION}{}", key.0);
        format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(&payload),
            URL_SAFE_NO_PAD.encode(self.tag(&payload))
        )
    }

    /// Reads a cursor: its tag must be ours, and the key must be one this API could have listed
    /// at or before `now`.
    pub fn decode(&self, cursor: &str, now: Timestamp) -> Result<ListingKey, InvalidCursor> {
        let invalid = || InvalidCursor;
        if cursor.len() > MAX_CURSOR_LEN {
            return Err(invalid());
        }
        let (payload, tag) = cursor.split_once('.').ok_or_else(invalid)?;
        let payload = URL_SAFE_NO_PAD.decode(payload).map_err(|_| invalid())?;
        let tag = URL_SAFE_NO_PAD.decode(tag).map_err(|_| invalid())?;
        let payload = std::str::from_utf8(&payload).map_err(|_| invalid())?;
        verify_slices_are_equal(&self.tag(payload), &tag).map_err(|_| invalid())?;
        let key = payload
            .strip_prefix(CURSOR_VERSION)
            .and_then(ListingKey::parse)
            .ok_or_else(invalid)?;
        if key.0 < ListingKey::started_bound(now) {
            return Err(invalid());
        }
        Ok(key)
    }
}

/// The version of cursors bound to a scope ([`CursorSigner::encode_scoped`]).
const SCOPED_VERSION: &str = "2:";

/// A scope of cursors: `parts` joined so that no two lists of parts give the same text (each
/// part prefixed by its length), e.g. the list, the caller and the filters a cursor was issued
/// for.
pub fn cursor_scope(parts: &[&str]) -> String {
    parts
        .iter()
        .map(|part| format!("{}:{part}", part.len()))
        .collect()
}

impl CursorSigner {
    /// A cursor for `position` that only `scope` accepts back: the tag covers the scope, which
    /// the cursor does not carry (a caller's id never shows in it), so a cursor presented by
    /// another caller or with other filters fails its tag.
    pub fn encode_scoped(&self, scope: &str, position: &str) -> String {
        let payload = format!("{SCOPED_VERSION}{position}");
        format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(&payload),
            URL_SAFE_NO_PAD.encode(self.tag(&format!("{scope}\n{payload}")))
        )
    }

    /// The position of a cursor issued by [`CursorSigner::encode_scoped`] for `scope`.
    pub fn decode_scoped(&self, scope: &str, cursor: &str) -> Result<String, InvalidCursor> {
        if cursor.len() > MAX_CURSOR_LEN {
            return Err(InvalidCursor);
        }
        let (payload, tag) = cursor.split_once('.').ok_or(InvalidCursor)?;
        let payload = URL_SAFE_NO_PAD.decode(payload).map_err(|_| InvalidCursor)?;
        let tag = URL_SAFE_NO_PAD.decode(tag).map_err(|_| InvalidCursor)?;
        let payload = String::from_utf8(payload).map_err(|_| InvalidCursor)?;
        verify_slices_are_equal(&self.tag(&format!("{scope}\n{payload}")), &tag)
            .map_err(|_| InvalidCursor)?;
        payload
            .strip_prefix(SCOPED_VERSION)
            .map(str::to_owned)
            .ok_or(InvalidCursor)
    }
}

impl CursorSigner {
    /// The cursor of a page of `filter`'s packs ending at `key`: every active pack's list keeps
    /// the cursors it always had; a filtered list's are bound to its filters, so that a cursor
    /// of one league's packs resumes no other list.
    pub fn encode_listing(&self, filter: &PackFilter, key: &ListingKey) -> String {
        match filter_scope(filter) {
            None => self.encode(key),
            Some(scope) => self.encode_scoped(&scope, key.as_str()),
        }
    }

    /// The position of a cursor [`CursorSigner::encode_listing`] issued for `filter`, checked as
    /// [`CursorSigner::decode`] checks it.
    pub fn decode_listing(
        &self,
        filter: &PackFilter,
        cursor: &str,
        now: Timestamp,
    ) -> Result<ListingKey, InvalidCursor> {
        let Some(scope) = filter_scope(filter) else {
            return self.decode(cursor, now);
        };
        let key = ListingKey::parse(&self.decode_scoped(&scope, cursor)?).ok_or(InvalidCursor)?;
        if key.0 < ListingKey::started_bound(now) {
            return Err(InvalidCursor);
        }
        Ok(key)
    }
}

/// The scope of a filtered list's cursors (`None`: every active pack).
fn filter_scope(filter: &PackFilter) -> Option<String> {
    (!filter.is_all()).then(|| {
        cursor_scope(&[
            "packs",
            filter.league.as_ref().map(|id| id.as_str()).unwrap_or(""),
            filter.team.as_ref().map(|id| id.as_str()).unwrap_or(""),
        ])
    })
}

/// What a client asked of the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageRequest {
    pub now: Timestamp,
    pub limit: usize,
    pub after: Option<ListingKey>,
    pub filter: PackFilter,
}

/// Which active packs a page lists: every one, or those whose `leagueId`, `teamId` (or both)
/// are the ones given.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PackFilter {
    pub league: Option<LeagueId>,
    pub team: Option<TeamId>,
}

impl PackFilter {
    /// Whether `pack` is one of the packs this filter lists (its activeness aside).
    pub fn admits(&self, pack: &Pack) -> bool {
        let names =
            |wanted: Option<&str>, named: Option<&str>| wanted.is_none_or(|w| named == Some(w));
        names(
            self.league.as_ref().map(|id| id.as_str()),
            pack.league_id.as_deref(),
        ) && names(
            self.team.as_ref().map(|id| id.as_str()),
            pack.team_id.as_deref(),
        )
    }

    /// Whether every active pack is listed.
    pub fn is_all(&self) -> bool {
        self.league.is_none() && self.team.is_none()
    }
}

/// One page of active packs; `next` is set when more may follow.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Page {
    pub packs: Vec<PackDocument>,
    pub next: Option<ListingKey>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packs::fixtures::sample_pack;

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
        let signer = CursorSigner::new(&[7; 32]);
        let now = ts("2026-06-01T12:00:00Z");
        for (at, id) in [
            ("2026-01-01T00:00:00Z", "p1"),
            ("1970-01-01T00:00:00Z", "x"),
            ("2026-06-01T12:00:00Z", &*"Z".repeat(64)),
        ] {
            let key = ListingKey::new(ts(at), id);
            let cursor = signer.encode(&key);
            assert!(
                cursor
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b)),
                "{cursor}"
            );
            assert!(cursor.len() <= MAX_CURSOR_LEN);
            assert_eq!(signer.decode(&cursor, now).unwrap(), key);
        }
    }

    #[test]
    fn forged_tampered_and_foreign_cursors_are_refused() {
        let signer = CursorSigner::new(&[7; 32]);
        let now = ts("2026-06-01T12:00:00Z");
        let genuine = signer.encode(&ListingKey::new(ts("2026-01-01T00:00:00Z"), "p1"));
        let (payload, tag) = genuine.split_once('.').unwrap();
        let b64 = |text: &str| URL_SAFE_NO_PAD.encode(text);
        // Signed with our key, so only the key checks can refuse them.
        let signed = |payload: &str| {
            format!(
                "{}.{}",
                b64(payload),
                URL_SAFE_NO_PAD.encode(signer.tag(payload))
            )
        };
        let other_position = ListingKey::new(ts("2026-01-01T00:00:00Z"), "p2");
        let mut flipped_tag = URL_SAFE_NO_PAD.decode(tag).unwrap();
        flipped_tag[0] ^= 1;
        for cursor in [
            String::new(),
            "!!!".into(),
            payload.to_owned(),
            format!("{payload}."),
            format!(
                "{}.{tag}",
                b64(&format!("{CURSOR_VERSION}{}", other_position.as_str()))
            ),
            format!("{payload}.{}", URL_SAFE_NO_PAD.encode(flipped_tag)),
            format!("{payload}.{}", &tag[..tag.len() - 2]),
            format!("{payload}.{tag}A"),
            format!("{payload}.{tag}.{tag}"),
            CursorSigner::new(&[8; 32]).encode(&other_position),
            signer.encode(&ListingKey::new(ts("2027-01-01T00:00:00Z"), "p")),
            signed("2:075753393799999999999#p"),
            signed("1:999999999999999999999#p"),
            signed("1:075753393799999999999#"),
            signed("1:075753393799999999999#a b"),
            signed("1:07575339379999999999a#p"),
            signed("1:0757533937é9999999999#p"),
            format!("{}.{tag}", URL_SAFE_NO_PAD.encode([0xff, 0xfe])),
            "A".repeat(MAX_CURSOR_LEN + 1),
        ] {
            let result = signer.decode(&cursor, now);
            assert_eq!(result, Err(InvalidCursor), "{cursor}");
        }
    }

    #[test]
    fn a_filtered_lists_cursor_resumes_that_list_only() {
        let signer = CursorSigner::new(&[7; 32]);
        let now = ts("2026-06-01T12:00:00Z");
        let key = ListingKey::new(ts("2026-01-01T00:00:00Z"), "p1");
        let filter = |league: Option<&str>, team: Option<&str>| PackFilter {
            league: league.map(|id| LeagueId::parse(id).unwrap()),
            team: team.map(|id| TeamId::parse(id).unwrap()),
        };
        let filters = [
            filter(None, None),
            filter(Some("nba"), None),
            filter(None, Some("nba-lal")),
            filter(Some("nba"), Some("nba-lal")),
            filter(Some("nfl"), None),
        ];
        for issued in &filters {
            let cursor = signer.encode_listing(issued, &key);
            for presented in &filters {
                let decoded = signer.decode_listing(presented, &cursor, now);
                if presented == issued {
                    assert_eq!(decoded, Ok(key.clone()), "{issued:?}");
                } else {
                    assert_eq!(decoded, Err(InvalidCursor), "{issued:?} as {presented:?}");
                }
            }
        }
        // Every active pack's cursors are the ones it always issued.
        assert_eq!(
            signer.encode_listing(&PackFilter::default(), &key),
            signer.encode(&key)
        );
        let nba = filter(Some("nba"), None);
        let not_started = ListingKey::new(ts("2027-01-01T00:00:00Z"), "p");
        let cursor = signer.encode_listing(&nba, &not_started);
        assert_eq!(
            signer.decode_listing(&nba, &cursor, now),
            Err(InvalidCursor)
        );
        let scope = filter_scope(&nba).unwrap();
        let not_a_key = signer.encode_scoped(&scope, "nba-rookie");
        assert_eq!(
            signer.decode_listing(&nba, &not_a_key, now),
            Err(InvalidCursor)
        );
    }

    #[test]
    fn a_filter_admits_the_packs_naming_what_it_names() {
        let mut pack = sample_pack("p");
        pack.league_id = Some("nba".into());
        pack.team_id = Some("nba-lal".into());
        let filter = |league: Option<&str>, team: Option<&str>| PackFilter {
            league: league.map(|id| LeagueId::parse(id).unwrap()),
            team: team.map(|id| TeamId::parse(id).unwrap()),
        };
        assert!(filter(None, None).admits(&pack));
        assert!(filter(Some("nba"), None).admits(&pack));
        assert!(filter(Some("nba"), Some("nba-lal")).admits(&pack));
        assert!(!filter(Some("nfl"), None).admits(&pack));
        assert!(!filter(Some("nba"), Some("nba-bos")).admits(&pack));
        pack.team_id = None;
        assert!(!filter(None, Some("nba-lal")).admits(&pack));
    }

    #[test]
    fn scoped_cursors_are_accepted_only_in_their_scope() {
        let signer = CursorSigner::new(&[7; 32]);
        let scope = cursor_scope(&["purchases", "u1", "opened", ""]);
        let cursor = signer.encode_scoped(&scope, "00000000000000000001#p1");
        assert_eq!(
            signer.decode_scoped(&scope, &cursor).as_deref(),
            Ok("00000000000000000001#p1")
        );
        assert!(!cursor.contains("u1"));
        for other in [
            cursor_scope(&["purchases", "u2", "opened", ""]),
            cursor_scope(&["purchases", "u1", "completed", ""]),
            cursor_scope(&["purchases", "u1", "opened", "p"]),
            cursor_scope(&["items", "u1", "opened", ""]),
            // Parts that concatenate to the same text are other scopes.
            cursor_scope(&["purchases", "u1o", "pened", ""]),
        ] {
            assert_eq!(signer.decode_scoped(&other, &cursor), Err(InvalidCursor));
        }
        let listing = signer.encode(&ListingKey::new(ts("2026-01-01T00:00:00Z"), "p1"));
        assert_eq!(signer.decode_scoped(&scope, &listing), Err(InvalidCursor));
        assert_eq!(
            CursorSigner::new(&[8; 32]).decode_scoped(&scope, &cursor),
            Err(InvalidCursor)
        );
    }
}
