//! Stored items as records of their own, mapped explicitly to and from the domain types: a
//! field renamed in the domain no longer renames an attribute of every stored item, and each
//! record carries the schema version it was written in (`schemaVersion`), so that a reader can
//! tell an item of an older format (and migrate it) from one of a newer release (and refuse it
//! rather than misread it).
//!
//! Items written before records had a version are version 1: the format is the same.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::StoreError;
use domain::cash::Money;
use domain::ids::{PackId, PurchaseId, TopUpId, UserId};
use domain::links::Web3Link;
use domain::purchases::{OpenedFairness, OpenedItem, Purchase, PurchaseStatus};
use domain::timestamp::Timestamp;
use domain::topups::{Checkout, TopUp, TopUpStatus};

/// The mapping of a record that holds its domain type's fields one for one, under the record's
/// own attribute names: `<=>` writes both directions, `=>` only the read (records written by an
/// update expression). Each direction names every field, so a field added to one side only does
/// not compile.
macro_rules! mirrored_record {
    ($record:ident <=> $domain:ident, $what:literal, $version:expr, { $($field:ident),+ $(,)? }) => {
        impl From<&$domain> for $record {
            fn from(value: &$domain) -> Self {
                let $domain { $($field),+ } = value.clone();
                Self { schema_version: $version, $($field),+ }
            }
        }
        mirrored_record!($record => $domain, $what, $version, { $($field),+ });
    };
    ($record:ident => $domain:ident, $what:literal, $version:expr, { $($field:ident),+ $(,)? }) => {
        impl TryFrom<$record> for $domain {
            type Error = StoreError;

            fn try_from(record: $record) -> Result<Self, StoreError> {
                readable($what, record.schema_version, $version)?;
                Ok($domain { $($field: record.$field),+ })
            }
        }
    };
}

mod buys;
mod cash;
mod catalog;
mod draw;
mod locker;
mod pack;
mod pending;
mod products;
mod profile;
mod quests;
pub(crate) mod queue;
mod score;
mod slots;
mod unpaid;
mod wallets;

pub(crate) use buys::buys_from_item;
pub(crate) use cash::{
    CreditRecord, DebitRecord, ORDER_DEBIT_ENTITY, OrderDebitRecord, balance_from_item,
    balances_from_item, credit_record_from_item, debit_from_item, ledger_entry_from_item,
};
pub(crate) use catalog::{LeagueRecord, TeamRecord};
pub(crate) use draw::{DrawRecord, draw_inputs_from_item, json_text};
pub(crate) use locker::{LOCKER_VERSION, ShowRecord, ShownItemRecord, StoredShow, stats_from_item};
pub(crate) use pack::{
    corrupt, draw_inputs, instant_attribute, pack_from_item, sale_ends_at, seeded_attributes,
    share_item, share_key, share_units, stored_pack, terms_attributes, text, whole_number,
};
pub use pack::{document_from_item, pack_item};
pub(crate) use pending::{PendingSlotRecord, pending_from_item};
pub(crate) use products::{OrderRecord, PRODUCT_VERSION, ProductRecord, order_from_item};
pub(crate) use profile::{NameHolder, NameRecord, PROFILE_VERSION, ProfileRecord, StoredProfile};
pub(crate) use quests::{
    QuestRecord, claim_from_item, claim_item, claim_key_item, quest_from_item,
};
pub(crate) use score::{SCORE_VERSION, rank_key_of, score_from_item, score_items};
pub(crate) use unpaid::{HoldSlotRecord, unpaid_from_item};
pub(crate) use wallets::{WALLET_COUNT_VERSION, wallet_from_item, wallet_link_update};

/// The attribute holding an item's schema version.
pub(crate) const SCHEMA_VERSION: &str = "schemaVersion";

/// The version of the purchase record (and of a buyer's count and unpaid-holds items) this
/// release writes, and the newest it reads.
pub(crate) const PURCHASE_VERSION: u32 = 1;

/// The version of the Cash items (balances, debits, credits).
pub(crate) const CASH_VERSION: u32 = 1;

/// The version of the Cash top-up items (and of a fan's pending top-ups item).
pub(crate) const TOPUP_VERSION: u32 = 1;

/// The version of the league and team items.
pub(crate) const CATALOG_VERSION: u32 = 1;

/// The version of the web3 link items.
pub(crate) const LINK_VERSION: u32 = 1;

/// The version of the rate-limit counters and spent human-check tokens (a count or a mark and
/// its TTL: no field is read back but the count, answered by the write itself).
pub(crate) const ABUSE_VERSION: u32 = 1;

/// The version of the pack and supply-share items this release writes, and the newest it reads.
/// (Pack items from before the supply had shares have no `shards` either: re-seeding migrates
/// them.)
pub(crate) const PACK_VERSION: u32 = 1;

/// Refuses an item written by a newer release than this one (`newest`): its format may mean
/// something this code would misread. An item without a version is version 1.
pub(crate) fn check_version(item: &super::Item, what: &str, newest: u32) -> Result<(), StoreError> {
    readable(what, item_version(item, what)?, newest)
}

/// The schema version `item` was written in (1 when it has none).
fn item_version(item: &super::Item, what: &str) -> Result<u32, StoreError> {
    match item.get(SCHEMA_VERSION) {
        None => Ok(1),
        Some(value) => value
            .as_n()
            .ok()
            .and_then(|n| n.parse::<u32>().ok())
            .ok_or_else(|| {
                StoreError::internal(format!("{what} item: `{SCHEMA_VERSION}` is not a version"))
            }),
    }
}

/// The domain value of `item`, read as its record `R` (a `what` item) and mapped by `R`'s
/// `TryFrom`, which checks the version.
pub(crate) fn read_record<R, T>(item: super::Item, what: &str) -> Result<T, StoreError>
where
    R: DeserializeOwned,
    T: TryFrom<R, Error = StoreError>,
{
    serde_dynamo::from_item::<_, R>(item)
        .map_err(|e| StoreError::internal_from(format!("{what} item"), e))?
        .try_into()
}

/// Refuses a record of a `version` newer than this release reads (`newest`).
pub(crate) fn readable(what: &str, version: u32, newest: u32) -> Result<(), StoreError> {
    if version > newest {
        return Err(StoreError::internal(format!(
            "{what} item of schema version {version} (this release reads up to {newest})"
        )));
    }
    Ok(())
}

fn version_one() -> u32 {
    1
}

/// A purchase item's attributes (besides its keys and index keys, which the store adds).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PurchaseRecord {
    #[serde(default = "version_one")]
    schema_version: u32,
    id: PurchaseId,
    pack_id: PackId,
    user_id: UserId,
    status: PurchaseStatus,
    price: Money,
    client_seed: String,
    requested_seed: Option<String>,
    nonce: u64,
    reserved_at: Timestamp,
    expires_at: Timestamp,
    completed_at: Option<Timestamp>,
    opened_at: Option<Timestamp>,
    items: Option<Vec<OpenedItem>>,
    #[serde(default)]
    fairness: Option<OpenedFairness>,
    #[serde(default)]
    supply_shard: u32,
    #[serde(default)]
    hold_slot: Option<u32>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    admitted: bool,
}

mirrored_record!(PurchaseRecord <=> Purchase, "purchase", PURCHASE_VERSION, {
    id, pack_id, user_id, status, price, client_seed, requested_seed, nonce, reserved_at,
    expires_at, completed_at, opened_at, items, fairness, supply_shard, hold_slot, admitted,
});

/// A top-up item's attributes (besides its keys and `entity`, which the store adds).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TopUpRecord {
    #[serde(default = "version_one")]
    schema_version: u32,
    id: TopUpId,
    user_id: UserId,
    amount: Money,
    status: TopUpStatus,
    /// Absent (not null) until stored: the store conditions on `attribute_not_exists`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    checkout_session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    checkout_url: Option<String>,
    created_at: Timestamp,
    completed_at: Option<Timestamp>,
}

impl From<&TopUp> for TopUpRecord {
    fn from(top_up: &TopUp) -> Self {
        let TopUp {
            id,
            user_id,
            amount,
            status,
            checkout,
            created_at,
            completed_at,
        } = top_up.clone();
        let (checkout_session_id, checkout_url) = checkout
            .map(|c| (Some(c.session_id), Some(c.url)))
            .unwrap_or_default();
        Self {
            schema_version: TOPUP_VERSION,
            id,
            user_id,
            amount,
            status,
            checkout_session_id,
            checkout_url,
            created_at,
            completed_at,
        }
    }
}

impl TryFrom<TopUpRecord> for TopUp {
    type Error = StoreError;

    fn try_from(record: TopUpRecord) -> Result<Self, StoreError> {
        readable("top-up", record.schema_version, TOPUP_VERSION)?;
        let checkout = match (record.checkout_session_id, record.checkout_url) {
            (Some(session_id), Some(url)) => Some(Checkout { session_id, url }),
            (None, None) => None,
            _ => {
                return Err(StoreError::internal(
                    "top-up item: a checkout session id without its url, or the reverse",
                ));
            }
        };
        Ok(TopUp {
            id: record.id,
            user_id: record.user_id,
            amount: record.amount,
            status: record.status,
            checkout,
            created_at: record.created_at,
            completed_at: record.completed_at,
        })
    }
}

/// A web3 link item's attributes (besides its keys and `entity`).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LinkRecord {
    #[serde(default = "version_one")]
    schema_version: u32,
    user_id: String,
    email: Option<String>,
    provider: String,
    payload: String,
    linked_at: Timestamp,
    updated_at: Timestamp,
}

mirrored_record!(LinkRecord => Web3Link, "link", LINK_VERSION, {
    user_id, email, provider, payload, linked_at, updated_at,
});

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use aws_sdk_dynamodb::types::AttributeValue;

    use super::*;
    use crate::dynamo::purchases::purchase_from_item;

    pub(super) fn s(text: &str) -> AttributeValue {
        AttributeValue::S(text.into())
    }

    pub(super) fn n(number: u64) -> AttributeValue {
        AttributeValue::N(number.to_string())
    }

    /// A version no record of this release has reached.
    const NEWER: u64 = 99;

    /// `item` as a newer release would write it.
    pub(super) fn newer(mut item: super::super::Item) -> super::super::Item {
        item.insert(SCHEMA_VERSION.into(), n(NEWER));
        item
    }

    /// Asserts that reading an item of a newer version was refused for its version.
    pub(super) fn refused<T: std::fmt::Debug>(result: Result<T, StoreError>) {
        let error = result.unwrap_err();
        assert!(
            error.detail().contains(&format!("schema version {NEWER}")),
            "{}",
            error.detail()
        );
    }

    /// An opened purchase item exactly as the release before records wrote it (no
    /// `schemaVersion`; keys, entity and index attributes beside the fields).
    fn item_of_the_first_format() -> HashMap<String, AttributeValue> {
        HashMap::from([
            ("PK".into(), s("USER#fan")),
            ("SK".into(), s("PURCHASE#pur_1")),
            ("entity".into(), s("purchase")),
            ("expiresNs".into(), n(1_780_000_000_000_000_000)),
            ("id".into(), s("pur_1")),
            ("packId".into(), s("genesis")),
            ("userId".into(), s("fan")),
            ("status".into(), s("opened")),
            (
                "price".into(),
                AttributeValue::M(HashMap::from([
                    ("amount".into(), n(1999)),
                    ("currency".into(), s("USD")),
                ])),
            ),
            ("clientSeed".into(), s("lucky")),
            ("requestedSeed".into(), AttributeValue::Null(true)),
            ("nonce".into(), n(3)),
            ("reservedAt".into(), s("2026-06-01T12:00:00Z")),
            ("expiresAt".into(), s("2026-06-01T12:10:00Z")),
            ("completedAt".into(), s("2026-06-01T12:01:00Z")),
            ("openedAt".into(), s("2026-06-01T12:02:00Z")),
            (
                "items".into(),
                AttributeValue::L(vec![AttributeValue::M(HashMap::from([
                    ("slot".into(), n(0)),
                    ("itemId".into(), s("card-7")),
                    ("name".into(), s("Dunk")),
                    ("rarity".into(), s("rare")),
                    ("imageUrl".into(), AttributeValue::Null(true)),
                ]))]),
            ),
            (
                "fairness".into(),
                AttributeValue::M(HashMap::from([
                    ("serverSeedHash".into(), s("ab12")),
                    ("serverSeed".into(), AttributeValue::Null(true)),
                ])),
            ),
            ("supplyShard".into(), n(4)),
            ("holdSlot".into(), AttributeValue::Null(true)),
        ])
    }

    #[test]
    fn an_item_written_before_versions_reads_as_version_one() {
        let purchase = purchase_from_item(item_of_the_first_format()).unwrap();
        assert_eq!(
            (purchase.id.as_str(), purchase.pack_id.as_str()),
            ("pur_1", "genesis")
        );
        assert_eq!(purchase.status, PurchaseStatus::Opened);
        assert_eq!(purchase.price.amount, 1999);
        assert_eq!(purchase.items.as_ref().unwrap()[0].item_id, "card-7");
        assert_eq!(purchase.supply_shard, 4);
        assert_eq!(
            purchase.opened_at.unwrap().to_string(),
            "2026-06-01T12:02:00Z"
        );
    }

    #[test]
    fn a_written_record_carries_its_version_and_reads_back_the_same() {
        let purchase = purchase_from_item(item_of_the_first_format()).unwrap();
        let item = serde_dynamo::to_item::<_, HashMap<String, AttributeValue>>(
            PurchaseRecord::from(&purchase),
        )
        .unwrap();
        assert_eq!(item.get(SCHEMA_VERSION), Some(&n(1)));
        let record: PurchaseRecord = serde_dynamo::from_item(item).unwrap();
        assert_eq!(Purchase::try_from(record).unwrap(), purchase);
    }

    #[test]
    fn an_item_of_a_newer_version_is_refused_not_misread() {
        refused(purchase_from_item(newer(item_of_the_first_format())));
    }

    #[test]
    fn an_id_outside_the_grammar_is_refused_where_it_is_read() {
        let mut item = item_of_the_first_format();
        item.insert("packId".into(), s("not an id"));
        assert!(purchase_from_item(item).is_err());
    }

    #[test]
    fn a_pack_item_carries_its_version_and_a_newer_one_is_refused() {
        use crate::dynamo::records::pack_from_item;
        let pack = domain::packs::fixtures::sample_pack("genesis");
        let mut item = crate::dynamo::pack_item(&pack.pack_id().unwrap(), &pack, 1);
        assert_eq!(item.get(SCHEMA_VERSION), Some(&n(1)));
        assert_eq!(pack_from_item(item.clone()).unwrap().id, pack.id);
        item.remove(SCHEMA_VERSION);
        assert_eq!(
            pack_from_item(item.clone()).unwrap().id,
            pack.id,
            "no version: 1"
        );
        refused(pack_from_item(newer(item)));
    }

    #[test]
    fn a_link_item_written_before_versions_reads_as_version_one() {
        use crate::dynamo::links::link_from_item;
        let mut item = HashMap::from([
            ("PK".into(), s("USER#fan")),
            ("SK".into(), s("LINK#wallet")),
            ("entity".into(), s("link")),
            ("userId".into(), s("fan")),
            ("email".into(), AttributeValue::Null(true)),
            ("provider".into(), s("wallet")),
            ("payload".into(), s(r#"{"address":"0xabc"}"#)),
            ("linkedAt".into(), s("2026-06-01T12:00:00Z")),
            ("updatedAt".into(), s("2026-06-01T12:05:00Z")),
        ]);
        let link = link_from_item(item.clone()).unwrap();
        assert_eq!(
            (link.user_id.as_str(), link.provider.as_str(), link.email),
            ("fan", "wallet", None)
        );
        assert_eq!(link.payload, r#"{"address":"0xabc"}"#);
        assert_eq!(link.linked_at.to_string(), "2026-06-01T12:00:00Z");
        assert_eq!(link.updated_at.to_string(), "2026-06-01T12:05:00Z");
        item.insert(SCHEMA_VERSION.into(), n(2));
        assert!(link_from_item(item).is_err(), "a newer version is refused");
    }
}
