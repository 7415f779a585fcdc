//! A fan's pending top-ups item (`TOPUP#USER#<userId>` / `PENDING`) as a record: `v` and one map
//! per taken slot, `t<k>` ([`SlotsRecord`]), each written as a [`PendingSlotRecord`]: a top-up's
//! (`topUpId`) or a card order's (`orderId`).

use serde::{Deserialize, Serialize};

use super::slots::SlotsRecord;
use super::{TOPUP_VERSION, readable};
use crate::StoreError;
use crate::dynamo::Item;
use crate::schema::PENDING_SLOT_PREFIX;
use domain::ids::{OrderId, TopUpId};
use domain::timestamp::Timestamp;
use domain::topups::pending::{PendingSlot, PendingTopUps, SlotHolder};

/// One taken slot's map: its holder's id under the holder's kind.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PendingSlotRecord {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    top_up_id: Option<TopUpId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    order_id: Option<OrderId>,
    expires_at: Timestamp,
}

impl From<&PendingSlot> for PendingSlotRecord {
    fn from(slot: &PendingSlot) -> Self {
        let (top_up_id, order_id) = match &slot.holder {
            SlotHolder::TopUp(id) => (Some(id.clone()), None),
            SlotHolder::Order(id) => (None, Some(id.clone())),
        };
        Self {
            top_up_id,
            order_id,
            expires_at: slot.expires_at,
        }
    }
}

impl TryFrom<PendingSlotRecord> for PendingSlot {
    type Error = StoreError;

    fn try_from(record: PendingSlotRecord) -> Result<Self, StoreError> {
        let holder = match (record.top_up_id, record.order_id) {
            (Some(id), None) => SlotHolder::TopUp(id),
            (None, Some(id)) => SlotHolder::Order(id),
            _ => return Err(StoreError::internal("pending slot: not one holder")),
        };
        Ok(PendingSlot {
            holder,
            expires_at: record.expires_at,
        })
    }
}

/// A fan's pending top-ups from their item (none when it is absent).
pub(crate) fn pending_from_item(item: Option<&Item>) -> Result<PendingTopUps, StoreError> {
    const WHAT: &str = "pending top-ups";
    let Some(item) = item else {
        return Ok(PendingTopUps::default());
    };
    let record = SlotsRecord::<PendingSlotRecord>::read(item, WHAT, PENDING_SLOT_PREFIX)?;
    readable(WHAT, record.schema_version, TOPUP_VERSION)?;
    Ok(PendingTopUps {
        slots: record
            .slots
            .into_iter()
            .map(|slot| slot.map(PendingSlot::try_from).transpose())
            .collect::<Result<_, _>>()?,
        version: record.version,
    })
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use aws_sdk_dynamodb::types::AttributeValue;

    use super::*;
    use crate::dynamo::records::tests::{n, newer, refused, s};

    #[test]
    fn a_pending_top_ups_item_reads_by_slot_and_writes_a_slot_as_read() {
        let slot = AttributeValue::M(HashMap::from([
            ("topUpId".into(), s("t_1")),
            ("expiresAt".into(), s("2026-06-01T13:00:00Z")),
        ]));
        let item = HashMap::from([
            ("PK".into(), s("TOPUP#USER#fan")),
            ("SK".into(), s("PENDING")),
            ("v".into(), n(4)),
            ("t2".into(), slot.clone()),
        ]);
        let pending = pending_from_item(Some(&item)).unwrap();
        assert_eq!(pending.version, 4);
        assert_eq!(pending.slots.len(), 3);
        let taken = pending.slots[2].clone().unwrap();
        assert_eq!(
            taken.holder,
            SlotHolder::TopUp(TopUpId::parse("t_1").unwrap())
        );
        assert_eq!(taken.expires_at.to_string(), "2026-06-01T13:00:00Z");
        let written =
            serde_dynamo::to_attribute_value::<_, AttributeValue>(PendingSlotRecord::from(&taken))
                .unwrap();
        assert_eq!(written, slot);
        assert_eq!(pending_from_item(None).unwrap(), PendingTopUps::default());
        refused(pending_from_item(Some(&newer(item))));
    }
}
