//! The waiting room's items as records (keys in `store/schema/mod.rs`): a fan's entry
//! (`QUEUE#<packId>#USER#<userId>` / `ENTRY`), the line's state (`QUEUE#<packId>` / `STATE`), the
//! pages of its sorted entrants (`ENTRANTS#<page>`) and of its drawn order (`ORDER#<page>`), and
//! its secret seed (`QSEED#<packId>` / `QSEED`). The store adds keys, index keys and `entity`.
//!
//! Instants a condition compares (`passExpiresAt`) are numbers of Unix nanoseconds, written beside
//! the serde record (serde_dynamo carries 64-bit numbers; nanoseconds up to 9999 need 68 bits).
//! Hashes, roots, seeds and the beacon's bytes are lowercase hex, as the API shows them.

use serde::{Deserialize, Serialize};

use super::draw::SeedBytes;
use super::{readable, version_one};
use crate::StoreError;
use crate::dynamo::records::instant_attribute;
use crate::dynamo::{Item, number};
use crate::schema::ENTRY_PASS_EXPIRES_AT;
use domain::ids::{EntryId, PackId, UserId};
use domain::packs::draw::{ServerSeed, lower_hex, parse_hex, parse_hex32};
use domain::queue::entry::{EntryStatus, QueueEntry};
use domain::queue::state::{
    Beacon, EntrantPage, EntrantsIndex, OrderPage, OrderedEntry, QueueState, StoredStatus,
};
use domain::timestamp::Timestamp;

/// The version of the queue items this release writes, and the newest it reads.
pub(crate) const QUEUE_VERSION: u32 = 1;

fn corrupt(what: &str, problem: &str) -> StoreError {
    StoreError::internal(format!("{what} item: {problem}"))
}

fn from_item<R: serde::de::DeserializeOwned>(item: Item, what: &str) -> Result<R, StoreError> {
    serde_dynamo::from_item(item).map_err(|e| StoreError::internal_from(format!("{what} item"), e))
}

fn to_item<R: Serialize>(record: R) -> Item {
    serde_dynamo::to_item(record).expect("a queue record always serialises to an item")
}

/// An entry item's attributes but `passExpiresAt`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct EntryAttributes {
    #[serde(default = "version_one")]
    schema_version: u32,
    pack_id: PackId,
    entry_id: EntryId,
    user_id: UserId,
    joined_at: Timestamp,
    receipt: String,
    status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    position: Option<u64>,
    #[serde(default)]
    bought: u32,
}

/// The attributes of an entry item.
pub(crate) fn entry_item(entry: &QueueEntry) -> Item {
    let QueueEntry {
        pack_id,
        entry_id,
        user_id,
        joined_at,
        receipt,
        status,
        position,
        pass_expires_at,
        bought,
    } = entry.clone();
    let mut item = to_item(EntryAttributes {
        schema_version: QUEUE_VERSION,
        pack_id,
        entry_id,
        user_id,
        joined_at,
        receipt,
        status: status.as_str().to_owned(),
        position,
        bought,
    });
    if let Some(at) = pass_expires_at {
        item.insert(ENTRY_PASS_EXPIRES_AT.into(), number(at.unix_nanos()));
    }
    item
}

/// The entry of an entry item.
pub(crate) fn entry_from_item(item: Item) -> Result<QueueEntry, StoreError> {
    let pass_expires_at = instant_attribute(&item, ENTRY_PASS_EXPIRES_AT, "queue entry")?;
    let record: EntryAttributes = from_item(item, "queue entry")?;
    readable("queue entry", record.schema_version, QUEUE_VERSION)?;
    Ok(QueueEntry {
        pack_id: record.pack_id,
        entry_id: record.entry_id,
        user_id: record.user_id,
        joined_at: record.joined_at,
        receipt: record.receipt,
        status: record
            .status
            .parse::<EntryStatus>()
            .map_err(|_| corrupt("queue entry", "unknown `status`"))?,
        position: record.position,
        pass_expires_at,
        bought: record.bought,
    })
}

/// The beacon as the state holds it (a map).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct BeaconRecord {
    chain: String,
    round: u64,
    randomness: String,
    signature: String,
}

/// A state item's attributes.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct StateAttributes {
    #[serde(default = "version_one")]
    schema_version: u32,
    pack_id: PackId,
    status: StoredStatus,
    closes_at: Timestamp,
    seed_hash: String,
    beacon_round: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    committed_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    entrants: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    entrants_root: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    entrant_pages: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    beacon: Option<BeaconRecord>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    seed: Option<String>,
    #[serde(default)]
    admitted_through: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    last_wave_at: Option<Timestamp>,
    #[serde(default)]
    bought: u64,
    #[serde(default)]
    lapsed: u64,
}

/// The attributes of a state item (its `GSI1` keys aside: the store adds them while pending).
pub(crate) fn state_item(state: &QueueState) -> Item {
    let QueueState {
        pack_id,
        status,
        closes_at,
        seed_hash,
        beacon_round,
        committed_at,
        entrants,
        entrants_root,
        entrant_pages,
        beacon,
        seed,
        admitted_through,
        last_wave_at,
        bought,
        lapsed,
    } = state.clone();
    to_item(StateAttributes {
        schema_version: QUEUE_VERSION,
        pack_id,
        status,
        closes_at,
        seed_hash: lower_hex(&seed_hash),
        beacon_round,
        committed_at,
        entrants,
        entrants_root: entrants_root.map(|root| lower_hex(&root)),
        entrant_pages,
        beacon: beacon.map(|beacon| BeaconRecord {
            chain: beacon.chain,
            round: beacon.round,
            randomness: lower_hex(&beacon.randomness),
            signature: lower_hex(&beacon.signature),
        }),
        seed: seed.map(|seed| lower_hex(&seed)),
        admitted_through,
        last_wave_at,
        bought,
        lapsed,
    })
}

fn hex32(text: &str, field: &str) -> Result<[u8; 32], StoreError> {
    parse_hex32(text).ok_or_else(|| corrupt("queue state", &format!("`{field}` is not 32 bytes")))
}

/// The state of a state item.
pub(crate) fn state_from_item(item: Item) -> Result<QueueState, StoreError> {
    let record: StateAttributes = from_item(item, "queue state")?;
    readable("queue state", record.schema_version, QUEUE_VERSION)?;
    let beacon = record
        .beacon
        .map(|beacon| {
            Ok::<_, StoreError>(Beacon {
                chain: beacon.chain,
                round: beacon.round,
                randomness: hex32(&beacon.randomness, "beacon.randomness")?,
                signature: parse_hex(&beacon.signature)
                    .ok_or_else(|| corrupt("queue state", "`beacon.signature` is not hex"))?,
            })
        })
        .transpose()?;
    Ok(QueueState {
        pack_id: record.pack_id,
        status: record.status,
        closes_at: record.closes_at,
        seed_hash: hex32(&record.seed_hash, "seedHash")?,
        beacon_round: record.beacon_round,
        committed_at: record.committed_at,
        entrants: record.entrants,
        entrants_root: record
            .entrants_root
            .map(|root| hex32(&root, "entrantsRoot"))
            .transpose()?,
        entrant_pages: record.entrant_pages,
        beacon,
        seed: record.seed.map(|seed| hex32(&seed, "seed")).transpose()?,
        admitted_through: record.admitted_through,
        last_wave_at: record.last_wave_at,
        bought: record.bought,
        lapsed: record.lapsed,
    })
}

/// An entrant page item's attributes.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct EntrantPageAttributes {
    #[serde(default = "version_one")]
    schema_version: u32,
    page: u32,
    ids: Vec<EntryId>,
}

#[allow(dead_code)] // The keeper's close, draw and admission write and read it.
pub(crate) fn entrant_page_item(page: &EntrantPage) -> Item {
    to_item(EntrantPageAttributes {
        schema_version: QUEUE_VERSION,
        page: page.page,
        ids: page.ids.clone(),
    })
}

pub(crate) fn entrant_page_from_item(item: Item) -> Result<EntrantPage, StoreError> {
    let record: EntrantPageAttributes = from_item(item, "entrant page")?;
    readable("entrant page", record.schema_version, QUEUE_VERSION)?;
    Ok(EntrantPage {
        page: record.page,
        ids: record.ids,
    })
}

/// An entrants index item's attributes: the pages' roots as one hex string (64 digits a page).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct EntrantsIndexAttributes {
    #[serde(default = "version_one")]
    schema_version: u32,
    first_ids: Vec<EntryId>,
    page_roots: String,
}

pub(crate) fn entrants_index_item(index: &EntrantsIndex) -> Item {
    to_item(EntrantsIndexAttributes {
        schema_version: QUEUE_VERSION,
        first_ids: index.first_ids.clone(),
        page_roots: index
            .page_roots
            .iter()
            .map(|root| lower_hex(root))
            .collect(),
    })
}

pub(crate) fn entrants_index_from_item(item: Item) -> Result<EntrantsIndex, StoreError> {
    let record: EntrantsIndexAttributes = from_item(item, "entrants index")?;
    readable("entrants index", record.schema_version, QUEUE_VERSION)?;
    let roots = record.page_roots.as_bytes();
    if roots.len() != record.first_ids.len() * 64 {
        return Err(corrupt("entrants index", "a root for each page"));
    }
    let page_roots = roots
        .chunks(64)
        .map(|root| {
            std::str::from_utf8(root)
                .ok()
                .and_then(parse_hex32)
                .ok_or_else(|| corrupt("entrants index", "`pageRoots` is not hex"))
        })
        .collect::<Result<_, _>>()?;
    Ok(EntrantsIndex {
        first_ids: record.first_ids,
        page_roots,
    })
}

/// One entry of an order page item.
#[allow(dead_code)] // The keeper's close, draw and admission write and read it.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct OrderedEntryRecord {
    entry_id: EntryId,
    user_id: UserId,
}

/// An order page item's attributes.
#[allow(dead_code)] // The keeper's close, draw and admission write and read it.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct OrderPageAttributes {
    #[serde(default = "version_one")]
    schema_version: u32,
    page: u32,
    entries: Vec<OrderedEntryRecord>,
}

#[allow(dead_code)] // The keeper's close, draw and admission write and read it.
pub(crate) fn order_page_item(page: &OrderPage) -> Item {
    to_item(OrderPageAttributes {
        schema_version: QUEUE_VERSION,
        page: page.page,
        entries: page
            .entries
            .iter()
            .map(|entry| OrderedEntryRecord {
                entry_id: entry.entry_id.clone(),
                user_id: entry.user_id.clone(),
            })
            .collect(),
    })
}

#[allow(dead_code)] // The keeper's close, draw and admission write and read it.
pub(crate) fn order_page_from_item(item: Item) -> Result<OrderPage, StoreError> {
    let record: OrderPageAttributes = from_item(item, "order page")?;
    readable("order page", record.schema_version, QUEUE_VERSION)?;
    Ok(OrderPage {
        page: record.page,
        entries: record
            .entries
            .into_iter()
            .map(|entry| OrderedEntry {
                entry_id: entry.entry_id,
                user_id: entry.user_id,
            })
            .collect(),
    })
}

/// A queue seed item's attributes.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SeedAttributes {
    #[serde(default = "version_one")]
    schema_version: u32,
    seed: SeedBytes,
}

pub(crate) fn queue_seed_item(seed: &ServerSeed) -> Item {
    to_item(SeedAttributes {
        schema_version: QUEUE_VERSION,
        seed: SeedBytes(seed.as_bytes().to_vec()),
    })
}

#[allow(dead_code)] // The keeper's close, draw and admission write and read it.
pub(crate) fn queue_seed_from_item(item: Item) -> Result<ServerSeed, StoreError> {
    let record: SeedAttributes = from_item(item, "queue seed")?;
    readable("queue seed", record.schema_version, QUEUE_VERSION)?;
    ServerSeed::from_slice(&record.seed.0).ok_or_else(|| corrupt("queue seed", "not 32 bytes"))
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use aws_sdk_dynamodb::primitives::Blob;
    use aws_sdk_dynamodb::types::AttributeValue;

    use super::*;
    use crate::dynamo::records::tests::{n, newer, refused, s};

    const ENTRY_ID: &str = "0123456789abcdef0123456789abcdef";

    fn keyless(mut item: Item) -> Item {
        item.retain(|name, _| {
            !["PK", "SK", "entity", "GSI1PK", "GSI1SK", "GSI2PK", "GSI2SK"].contains(&name.as_str())
        });
        item
    }

    /// An admitted entry exactly as this release writes it.
    fn todays_entry_item() -> Item {
        HashMap::from([
            ("PK".into(), s("QUEUE#drop#USER#auth0|fan")),
            ("SK".into(), s("ENTRY")),
            ("entity".into(), s("queueEntry")),
            ("GSI2PK".into(), s("QENTRIES#drop#17")),
            ("GSI2SK".into(), s(ENTRY_ID)),
            ("schemaVersion".into(), n(1)),
            ("packId".into(), s("drop")),
            ("entryId".into(), s(ENTRY_ID)),
            ("userId".into(), s("auth0|fan")),
            ("joinedAt".into(), s("2026-12-01T17:00:01.5Z")),
            ("receipt".into(), s("c2lnbmF0dXJl")),
            ("status".into(), s("admitted")),
            ("position".into(), n(42)),
            ("passExpiresAt".into(), n(1_796_148_600_000_000_000)),
            ("bought".into(), n(1)),
        ])
    }

    #[test]
    fn an_entry_of_todays_format_reads_and_writes_back_the_same() {
        let entry = entry_from_item(todays_entry_item()).unwrap();
        assert_eq!(entry.entry_id.as_str(), ENTRY_ID);
        assert_eq!(entry.user_id.as_str(), "auth0|fan");
        assert_eq!(entry.status, EntryStatus::Admitted);
        assert_eq!(entry.position, Some(42));
        assert_eq!(
            entry.pass_expires_at.unwrap().to_string(),
            "2026-12-01T18:10:00Z"
        );
        assert_eq!(entry.bought, 1);
        assert_eq!(entry_item(&entry), keyless(todays_entry_item()));
        refused(entry_from_item(newer(todays_entry_item())));
        let mut waiting = todays_entry_item();
        for name in ["position", "passExpiresAt", "bought", "schemaVersion"] {
            waiting.remove(name);
        }
        waiting.insert("status".into(), s("waiting"));
        let entry = entry_from_item(waiting).unwrap();
        assert_eq!(
            (entry.position, entry.pass_expires_at, entry.bought),
            (None, None, 0)
        );
        let mut bad = todays_entry_item();
        bad.insert("status".into(), s("vip"));
        assert!(entry_from_item(bad).is_err());
    }

    fn hex(byte: u8, len: usize) -> String {
        lower_hex(&vec![byte; len])
    }

    /// A drawn state exactly as this release writes it.
    fn todays_state_item() -> Item {
        HashMap::from([
            ("PK".into(), s("QUEUE#drop")),
            ("SK".into(), s("STATE")),
            ("entity".into(), s("queueState")),
            ("GSI1PK".into(), s("QUEUES#PENDING")),
            ("GSI1SK".into(), s("01796147400000000000#drop")),
            ("schemaVersion".into(), n(1)),
            ("packId".into(), s("drop")),
            ("status".into(), s("drawn")),
            ("closesAt".into(), s("2026-12-01T17:50:00Z")),
            ("seedHash".into(), s(&hex(1, 32))),
            ("beaconRound".into(), n(34_448_112)),
            ("committedAt".into(), s("2026-12-01T17:51:00.5Z")),
            ("entrants".into(), n(3)),
            ("entrantsRoot".into(), s(&hex(2, 32))),
            ("entrantPages".into(), n(1)),
            (
                "beacon".into(),
                AttributeValue::M(HashMap::from([
                    (
                        "chain".into(),
                        s("52db9ba70e0cc0f6eaf7803dd07447a1f5477735fd3f661792ba94600c84e971"),
                    ),
                    ("round".into(), n(34_448_112)),
                    ("randomness".into(), s(&hex(3, 32))),
                    ("signature".into(), s(&hex(4, 48))),
                ])),
            ),
            ("seed".into(), s(&hex(5, 32))),
            ("admittedThrough".into(), n(2)),
            ("lastWaveAt".into(), s("2026-12-01T18:00:05Z")),
            ("bought".into(), n(1)),
            ("lapsed".into(), n(0)),
        ])
    }

    #[test]
    fn a_state_of_todays_format_reads_and_writes_back_the_same() {
        let state = state_from_item(todays_state_item()).unwrap();
        assert_eq!(state.status, StoredStatus::Drawn);
        assert_eq!(state.seed_hash, [1; 32]);
        assert_eq!(state.entrants_root, Some([2; 32]));
        assert_eq!(
            state.committed_at,
            Some(Timestamp::parse("2026-12-01T17:51:00.5Z").unwrap())
        );
        let beacon = state.beacon.clone().unwrap();
        assert_eq!((beacon.round, beacon.randomness), (34_448_112, [3; 32]));
        assert_eq!(beacon.signature, vec![4; 48]);
        assert_eq!(state.seed, Some([5; 32]));
        assert_eq!(
            (state.admitted_through, state.last_wave_at, state.bought),
            (2, Timestamp::parse("2026-12-01T18:00:05Z").ok(), 1)
        );
        assert_eq!(state_item(&state), keyless(todays_state_item()));
        refused(state_from_item(newer(todays_state_item())));

        // As seeding writes it: no close, no draw, counters absent.
        let mut seeded = todays_state_item();
        for name in [
            "committedAt",
            "entrants",
            "entrantsRoot",
            "entrantPages",
            "beacon",
            "seed",
            "admittedThrough",
            "lastWaveAt",
            "bought",
            "lapsed",
        ] {
            seeded.remove(name);
        }
        seeded.insert("status".into(), s("open"));
        let state = state_from_item(seeded).unwrap();
        assert_eq!(
            (state.status, state.entrants, state.admitted_through),
            (StoredStatus::Open, None, 0)
        );
        assert_eq!(state.committed_at, None);
        let mut bad = todays_state_item();
        bad.insert("seedHash".into(), s("abc"));
        assert!(state_from_item(bad).is_err());
    }

    #[test]
    fn pages_of_todays_format_read_and_write_back_the_same() {
        let entrants = HashMap::from([
            ("schemaVersion".into(), n(1)),
            ("page".into(), n(0)),
            (
                "ids".into(),
                AttributeValue::L(vec![s(ENTRY_ID), s(&hex(0xff, 16))]),
            ),
        ]);
        let page = entrant_page_from_item(entrants.clone()).unwrap();
        assert_eq!(page.ids.len(), 2);
        assert_eq!(entrant_page_item(&page), entrants);
        refused(entrant_page_from_item(newer(entrants)));

        let order = HashMap::from([
            ("schemaVersion".into(), n(1)),
            ("page".into(), n(3)),
            (
                "entries".into(),
                AttributeValue::L(vec![AttributeValue::M(HashMap::from([
                    ("entryId".into(), s(ENTRY_ID)),
                    ("userId".into(), s("auth0|fan")),
                ]))]),
            ),
        ]);
        let page = order_page_from_item(order.clone()).unwrap();
        assert_eq!(
            (page.page, page.entries[0].user_id.as_str()),
            (3, "auth0|fan")
        );
        assert_eq!(order_page_item(&page), order);
        refused(order_page_from_item(newer(order)));
    }

    #[test]
    fn a_queue_seed_of_todays_format_reads_and_writes_back_the_same() {
        let item = HashMap::from([
            ("schemaVersion".into(), n(1)),
            ("seed".into(), AttributeValue::B(Blob::new(vec![6u8; 32]))),
        ]);
        let seed = queue_seed_from_item(item.clone()).unwrap();
        assert_eq!(seed.as_bytes(), &[6u8; 32]);
        assert_eq!(queue_seed_item(&seed), item);
        refused(queue_seed_from_item(newer(item.clone())));
        let mut short = item;
        short.insert("seed".into(), AttributeValue::B(Blob::new(vec![6u8; 31])));
        assert!(queue_seed_from_item(short).is_err());
    }
}
