//! A fan's wallet (`USER#<userId>` / `WALLET#<walletId>`) as a record. A link writes it with one
//! update whatever it held before ([`wallet_link_update`]: the first link's time kept), so the
//! attributes a link sets are the record's, named here once.

use aws_sdk_dynamodb::types::AttributeValue;
use serde::Deserialize;

use super::{SCHEMA_VERSION, read_record, readable, version_one};
use crate::StoreError;
use crate::dynamo::{Item, number, s};
use crate::schema::ENTITY;
use domain::ids::WalletId;
use domain::timestamp::Timestamp;
use domain::wallets::Wallet;

/// The version of the wallet items this release writes, and the newest it reads.
pub(crate) const WALLET_VERSION: u32 = 1;

/// The version of a fan's count of wallets (`WALLETS`, `n`).
pub(crate) const WALLET_COUNT_VERSION: u32 = 1;

/// A wallet item's attributes (besides its keys and `entity`).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WalletRecord {
    #[serde(default = "version_one")]
    schema_version: u32,
    id: WalletId,
    payload: String,
    linked_at: Timestamp,
    last_linked_at: Timestamp,
}

mirrored_record!(WalletRecord => Wallet, "wallet", WALLET_VERSION, {
    id, payload, linked_at, last_linked_at,
});

/// A wallet from its item, through its record.
pub(crate) fn wallet_from_item(item: Item) -> Result<Wallet, StoreError> {
    read_record::<WalletRecord, _>(item, "wallet")
}

/// An update expression with its `#name`s and `:value`s.
pub(crate) struct RecordUpdate {
    pub expression: &'static str,
    pub names: [(&'static str, &'static str); 2],
    pub values: Vec<(&'static str, AttributeValue)>,
}

/// The update a link of `payload` as wallet `id` at `at` makes to the wallet's item: the
/// record's every attribute, `linkedAt` only when the item has none (a refresh keeps the first
/// link's).
pub(crate) fn wallet_link_update(id: &WalletId, payload: &str, at: Timestamp) -> RecordUpdate {
    RecordUpdate {
        expression: "SET #entity = :entity, #sv = :sv, id = :id, payload = :payload, \
                     lastLinkedAt = :at, linkedAt = if_not_exists(linkedAt, :at)",
        names: [("#entity", ENTITY), ("#sv", SCHEMA_VERSION)],
        values: vec![
            (":entity", s("wallet")),
            (":sv", number(WALLET_VERSION)),
            (":id", s(id.as_str())),
            (":payload", s(payload)),
            (":at", s(at.to_string())),
        ],
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::super::tests::{n, newer, refused, s};
    use super::*;

    #[test]
    fn a_wallet_item_reads_back_and_a_newer_one_is_refused() {
        let item = HashMap::from([
            ("PK".into(), s("USER#fan")),
            ("SK".into(), s("WALLET#aWJ8qqZTVW8e2E9j0vhAXA")),
            ("entity".into(), s("wallet")),
            (SCHEMA_VERSION.into(), n(1)),
            ("id".into(), s("aWJ8qqZTVW8e2E9j0vhAXA")),
            ("payload".into(), s("true")),
            ("linkedAt".into(), s("2026-11-01T00:00:00Z")),
            ("lastLinkedAt".into(), s("2026-11-02T00:00:00Z")),
        ]);
        let wallet = wallet_from_item(item.clone()).unwrap();
        assert_eq!(wallet.id.as_str(), "aWJ8qqZTVW8e2E9j0vhAXA");
        assert_eq!(wallet.payload, "true");
        assert_eq!(wallet.linked_at.to_string(), "2026-11-01T00:00:00Z");
        assert_eq!(wallet.last_linked_at.to_string(), "2026-11-02T00:00:00Z");
        refused(wallet_from_item(newer(item)));
    }
}
