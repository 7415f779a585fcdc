//! A pack's draw item (`DRAW#<packId>` / `DRAW`) as a record: the server seed (a binary
//! attribute, set once when the pack is created), the items and odds (JSON text), the items
//! per pack and the sale's end (`endsAt`, nanoseconds), which the seeding updates.

use std::fmt;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{PACK_VERSION, readable, version_one};
use crate::StoreError;
use crate::dynamo::records::sale_ends_at;
use crate::dynamo::{Item, number};
use crate::schema::ENDS_AT;
use domain::ids::{LeagueId, TeamId};
use domain::leaderboards::Board;
use domain::packs::Pack;
use domain::packs::draw::ServerSeed;
use domain::purchases::DrawInputs;
use domain::timestamp::Timestamp;

/// The draw item's attributes (besides its keys and `entity`) but its sale end: serde_dynamo
/// carries numbers of 64 bits, and an end in nanoseconds up to 9999 needs 68, so `endsAt` is
/// read and written beside the record ([`DrawRecord::from_item`], [`DrawRecord::into_item`]).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct DrawAttributes {
    #[serde(default = "version_one")]
    schema_version: u32,
    seed: SeedBytes,
    items: String,
    odds: String,
    items_per_pack: u32,
    /// The pack's league and team (absent on draw items seeded before the boards: their
    /// openings count on the global board only until the pack is seeded again).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    league_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    team_id: Option<String>,
}

/// The whole record: the attributes and the sale's end.
#[derive(Debug)]
pub(crate) struct DrawRecord {
    attributes: DrawAttributes,
    ends_at: Option<Timestamp>,
}

/// The seed as a binary attribute (`B`): serde_dynamo writes `serialize_bytes` as `B` and reads
/// `B` through `deserialize_bytes`, where a `Vec<u8>` or an array would be a list of numbers.
#[derive(Debug)]
pub(crate) struct SeedBytes(pub(crate) Vec<u8>);

impl Serialize for SeedBytes {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(&self.0)
    }
}

impl<'de> Deserialize<'de> for SeedBytes {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Bytes;
        impl Visitor<'_> for Bytes {
            type Value = SeedBytes;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a binary attribute")
            }
            fn visit_bytes<E: de::Error>(self, bytes: &[u8]) -> Result<SeedBytes, E> {
                Ok(SeedBytes(bytes.to_vec()))
            }
            fn visit_byte_buf<E: de::Error>(self, bytes: Vec<u8>) -> Result<SeedBytes, E> {
                Ok(SeedBytes(bytes))
            }
        }
        deserializer.deserialize_bytes(Bytes)
    }
}

/// A pack field as the JSON text the draw item holds it in.
pub(crate) fn json_text<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("pack fields always serialise")
}

impl DrawRecord {
    /// The draw record of a new `pack`, drawing from `seed`.
    pub(crate) fn new(pack: &Pack, seed: &ServerSeed) -> Self {
        Self {
            attributes: DrawAttributes {
                schema_version: PACK_VERSION,
                seed: SeedBytes(seed.as_bytes().to_vec()),
                items: json_text(&pack.items),
                odds: json_text(&pack.odds),
                items_per_pack: pack.items_per_pack,
                league_id: pack.league_id.clone(),
                team_id: pack.team_id.clone(),
            },
            ends_at: pack.sale_ends_at,
        }
    }

    /// The record of a draw item.
    pub(crate) fn from_item(item: Item) -> Result<Self, StoreError> {
        let ends_at = sale_ends_at(&item, "draw")?;
        let attributes =
            serde_dynamo::from_item(item).map_err(|e| StoreError::internal_from("draw item", e))?;
        Ok(Self {
            attributes,
            ends_at,
        })
    }

    /// The attributes of the item (its keys and `entity` aside).
    pub(crate) fn into_item(self) -> Item {
        let mut item: Item = serde_dynamo::to_item(self.attributes)
            .expect("a draw record always serialises to an item");
        if let Some(at) = self.ends_at {
            item.insert(ENDS_AT.into(), number(at.unix_nanos()));
        }
        item
    }
}

impl TryFrom<DrawRecord> for DrawInputs {
    type Error = StoreError;

    fn try_from(record: DrawRecord) -> Result<Self, StoreError> {
        let DrawAttributes {
            schema_version,
            seed,
            items,
            odds,
            items_per_pack,
            league_id,
            team_id,
        } = record.attributes;
        readable("draw", schema_version, PACK_VERSION)?;
        let corrupt = |problem: &str| StoreError::internal(format!("draw item: {problem}"));
        Ok(DrawInputs {
            seed: ServerSeed::from_slice(&seed.0).ok_or_else(|| corrupt("no 32-byte `seed`"))?,
            odds: serde_json::from_str(&odds).map_err(|_| corrupt("no `odds` JSON"))?,
            items: serde_json::from_str(&items).map_err(|_| corrupt("no `items` JSON"))?,
            items_per_pack,
            sale_ends_at: record.ends_at,
            boards: Board::of_pack(
                league_id
                    .map(LeagueId::parse)
                    .transpose()
                    .map_err(|_| corrupt("a `leagueId` that is no id"))?
                    .as_ref(),
                team_id
                    .map(TeamId::parse)
                    .transpose()
                    .map_err(|_| corrupt("a `teamId` that is no id"))?
                    .as_ref(),
            ),
        })
    }
}

/// The draw inputs of a pack's draw item.
pub(crate) fn draw_inputs_from_item(item: Item) -> Result<DrawInputs, StoreError> {
    DrawRecord::from_item(item)?.try_into()
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use aws_sdk_dynamodb::primitives::Blob;
    use aws_sdk_dynamodb::types::AttributeValue;

    use super::*;
    use crate::dynamo::records::SCHEMA_VERSION;
    use crate::dynamo::records::tests::{n, newer, refused, s};

    /// A draw item exactly as the seeding writes it today (before records): keys, `entity`,
    /// the version, the seed as a binary attribute, items and odds as JSON text.
    fn todays_draw_item() -> Item {
        HashMap::from([
            ("PK".into(), s("DRAW#genesis")),
            ("SK".into(), s("DRAW")),
            ("entity".into(), s("draw")),
            (SCHEMA_VERSION.into(), n(1)),
            (
                "seed".into(),
                AttributeValue::B(Blob::new([7u8; 32].to_vec())),
            ),
            (
                "items".into(),
                s(r#"[{"id":"card-7","name":"Dunk","rarity":"rare","imageUrl":null}]"#),
            ),
            ("odds".into(), s(r#"[{"rarity":"rare","chanceBps":10000}]"#)),
            ("itemsPerPack".into(), n(3)),
            ("endsAt".into(), n(1_780_315_200_000_000_000)),
        ])
    }

    #[test]
    fn a_draw_item_of_todays_format_reads_as_draw_inputs_and_writes_back_the_same() {
        let inputs = draw_inputs_from_item(todays_draw_item()).unwrap();
        assert_eq!(inputs.seed.as_bytes(), &[7u8; 32]);
        assert_eq!(inputs.items_per_pack, 3);
        assert_eq!(inputs.items.len(), 1);
        assert_eq!(inputs.odds.len(), 1);
        assert_eq!(
            inputs.sale_ends_at.unwrap().to_string(),
            "2026-06-01T12:00:00Z"
        );
        let mut item = todays_draw_item();
        let written = DrawRecord::from_item(item.clone()).unwrap().into_item();
        item.retain(|name, _| !["PK", "SK", "entity"].contains(&name.as_str()));
        assert_eq!(written, item, "the attributes are written as today");
    }

    #[test]
    fn a_draw_item_without_an_end_or_of_a_newer_version() {
        let mut item = todays_draw_item();
        item.remove("endsAt");
        item.remove(SCHEMA_VERSION);
        let inputs = draw_inputs_from_item(item.clone()).unwrap();
        assert_eq!(inputs.sale_ends_at, None, "no end, no version: 1");
        refused(draw_inputs_from_item(newer(item.clone())));
        item.insert("seed".into(), AttributeValue::B(Blob::new(vec![7u8; 31])));
        assert!(draw_inputs_from_item(item).is_err(), "a seed of 31 bytes");
    }
}
