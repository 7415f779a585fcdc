//! An event's id: `evt_` and a ULID (48 bits of milliseconds, 80 random bits, Crockford base32),
//! so that ids sort by time: the operators' feed pages `after` an id.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize};

use crate::ids::InvalidId;
use crate::timestamp::Timestamp;

const PREFIX: &str = "evt_";
const ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const ULID_CHARS: usize = 26;

/// An event's id, as every delivery's `webhook-id` and the feeds carry it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct EventId(String);

impl EventId {
    /// A new id for an event at `at`.
    pub fn new(at: Timestamp) -> Self {
        let mut random = [0u8; 10];
        getrandom::fill(&mut random).expect("the system random source works");
        Self::of(at, random)
    }

    /// The least id of instant `at`: where a read of the events from `at` starts.
    pub fn floor(at: Timestamp) -> Self {
        Self::of(at, [0; 10])
    }

    fn of(at: Timestamp, random: [u8; 10]) -> Self {
        let millis = u128::try_from(at.unix_millis()).unwrap_or(0) & ((1 << 48) - 1);
        let value = random
            .iter()
            .fold(millis, |value, byte| (value << 8) | u128::from(*byte));
        let mut text = String::with_capacity(PREFIX.len() + ULID_CHARS);
        text.push_str(PREFIX);
        for at in (0..ULID_CHARS).rev() {
            let digit = (value >> (5 * at)) & 31;
            text.push(char::from(ALPHABET[usize::try_from(digit).unwrap_or(0)]));
        }
        Self(text)
    }

    pub fn parse(text: impl Into<String>) -> Result<Self, InvalidId> {
        let text = text.into();
        let valid = text.strip_prefix(PREFIX).is_some_and(|ulid| {
            ulid.len() == ULID_CHARS
                && ulid.bytes().all(|b| ALPHABET.contains(&b))
                && ulid.as_bytes()[0] <= b'7'
        });
        if valid {
            Ok(Self(text))
        } else {
            Err(InvalidId {
                kind: "an event id",
                rule: "evt_ and 26 characters of Crockford base32",
            })
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The 128 bits the id's 26 characters hold.
    fn value(&self) -> u128 {
        self.0[PREFIX.len()..].bytes().fold(0u128, |value, b| {
            let digit = ALPHABET.iter().position(|a| *a == b).unwrap_or(0);
            (value << 5) | u128::try_from(digit).unwrap_or(0)
        })
    }

    /// The milliseconds since the epoch the id was made at.
    pub fn unix_millis(&self) -> i64 {
        i64::try_from(self.value() >> 80).unwrap_or(i64::MAX)
    }

    /// The id's share of `shards`, from its random bits: spreads one hour's events over as many
    /// index keys.
    pub fn shard(&self, shards: u32) -> u32 {
        u32::try_from(self.value() % u128::from(shards.max(1))).unwrap_or(0)
    }
}

impl fmt::Display for EventId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for EventId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Self::parse(String::deserialize(deserializer)?).map_err(serde::de::Error::custom)
    }
}

impl utoipa::PartialSchema for EventId {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .pattern(Some("^evt_[0-7][0-9A-HJKMNP-TV-Z]{25}$"))
            .examples([serde_json::json!("evt_01JDZ8Q5V6M3T9W2X4Y7Z8A1BC")])
            .into()
    }
}
impl utoipa::ToSchema for EventId {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_parse_and_sort_by_time() {
        let early = EventId::new(Timestamp::parse("2026-11-29T08:00:00Z").unwrap());
        let late = EventId::new(Timestamp::parse("2026-11-29T08:00:01Z").unwrap());
        assert!(early < late, "{early} sorts before {late}");
        assert_eq!(EventId::parse(early.as_str()).unwrap(), early);
        assert!(EventId::parse("evt_short").is_err());
        assert!(EventId::parse(early.as_str().replace("evt_", "evx_")).is_err());
        assert_eq!(early.unix_millis(), 1_795_939_200_000);
        assert!(early.shard(16) < 16);
    }
}
