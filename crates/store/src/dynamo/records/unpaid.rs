//! A fan's unpaid holds item (`USER#<userId>` / `UNPAID`) as a record: `v`, the version every
//! write moves on, and one map per taken slot, `s<k>`. Written by updates of one slot at a
//! time (the start's, the completion's), so the item is read whole and its slots written as
//! [`HoldSlotRecord`]s.

use serde::{Deserialize, Serialize};

use super::slots::SlotsRecord;
use super::{PURCHASE_VERSION, readable};
use crate::StoreError;
use crate::dynamo::Item;
use crate::schema::UNPAID_SLOT_PREFIX;
use domain::cash::Money;
use domain::ids::PurchaseId;
use domain::purchases::{HoldSlot, UnpaidHolds};
use domain::timestamp::Timestamp;

/// One taken slot's map.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct HoldSlotRecord {
    purchase_id: PurchaseId,
    expires_at: Timestamp,
    price: Money,
}

impl From<&HoldSlot> for HoldSlotRecord {
    fn from(slot: &HoldSlot) -> Self {
        let HoldSlot {
            purchase_id,
            expires_at,
            price,
        } = slot.clone();
        Self {
            purchase_id,
            expires_at,
            price,
        }
    }
}

impl From<HoldSlotRecord> for HoldSlot {
    fn from(record: HoldSlotRecord) -> Self {
        HoldSlot {
            purchase_id: record.purchase_id,
            expires_at: record.expires_at,
            price: record.price,
        }
    }
}

/// The whole item: its schema version, `v` and the slots by position.
pub(crate) type UnpaidRecord = SlotsRecord<HoldSlotRecord>;

impl TryFrom<UnpaidRecord> for UnpaidHolds {
    type Error = StoreError;

    fn try_from(record: UnpaidRecord) -> Result<Self, StoreError> {
        readable("unpaid holds", record.schema_version, PURCHASE_VERSION)?;
        Ok(UnpaidHolds {
            slots: record
                .slots
                .into_iter()
                .map(|slot| slot.map(HoldSlot::from))
                .collect(),
            version: record.version,
        })
    }
}

/// A fan's unpaid holds from their item (none when it is absent).
pub(crate) fn unpaid_from_item(item: Option<&Item>) -> Result<UnpaidHolds, StoreError> {
    item.map_or_else(
        || Ok(UnpaidHolds::default()),
        |item| UnpaidRecord::read(item, "unpaid holds", UNPAID_SLOT_PREFIX)?.try_into(),
    )
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use aws_sdk_dynamodb::types::AttributeValue;

    use super::*;
    use crate::dynamo::records::tests::{n, newer, refused, s};

    #[test]
    fn an_unpaid_holds_item_of_todays_format_reads_by_slot() {
        // As the start wrote it before versions: slot 1 taken, slot 0 free.
        let slot = AttributeValue::M(HashMap::from([
            ("purchaseId".into(), s("pur_1")),
            ("expiresAt".into(), s("2026-06-01T12:10:00Z")),
            (
                "price".into(),
                AttributeValue::M(HashMap::from([
                    ("amount".into(), n(1999)),
                    ("currency".into(), s("USD")),
                ])),
            ),
        ]));
        let item = HashMap::from([
            ("PK".into(), s("USER#fan")),
            ("SK".into(), s("UNPAID")),
            ("v".into(), n(3)),
            ("s1".into(), slot.clone()),
        ]);
        let holds = unpaid_from_item(Some(&item)).unwrap();
        assert_eq!(holds.version, 3);
        assert_eq!(holds.slots.len(), 2);
        assert!(holds.slots[0].is_none());
        let held = holds.slots[1].clone().unwrap();
        assert_eq!(held.purchase_id.as_str(), "pur_1");
        assert_eq!(held.expires_at.to_string(), "2026-06-01T12:10:00Z");
        assert_eq!(held.price.amount, 1999);
        let written =
            serde_dynamo::to_attribute_value::<_, AttributeValue>(HoldSlotRecord::from(&held))
                .unwrap();
        assert_eq!(written, slot, "a slot is written as today");
        assert!(unpaid_from_item(None).unwrap().slots.is_empty());
        refused(unpaid_from_item(Some(&newer(item))));
    }
}
