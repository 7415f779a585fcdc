//! The holds index (where the sweep finds ended holds) and the fan's unpaid holds item.

use aws_sdk_dynamodb::types::AttributeValue;

use crate::StoreError;
use crate::dynamo::cache::Comeback;
use crate::dynamo::{DynamoStore, Item, classify, key, s};
use crate::schema::UNPAID_SK;
use crate::schema::{GSI2_PK, GSI2_SK, HOLD_UNRELEASABLE, PK, SK, user_pk};
use domain::ids::UserId;
use domain::timestamp::Timestamp;

/// Where a hold sits: its item's key and its holds-index sort key, read before the item is.
pub(super) struct HoldEntry {
    key: Item,
    sort_key: Option<AttributeValue>,
}

impl HoldEntry {
    pub(super) fn of(item: &Item) -> Self {
        Self {
            key: [PK, SK]
                .into_iter()
                .filter_map(|name| Some((name.to_owned(), item.get(name)?.clone())))
                .collect(),
            sort_key: item.get(GSI2_SK).cloned(),
        }
    }

    fn sort_key(&self) -> Option<&str> {
        self.sort_key.as_ref()?.as_s().ok().map(String::as_str)
    }

    /// Whether the hold has ended by the time whose
    /// [`holds_ended_bound`](crate::schema::holds_ended_bound) is `bound`.
    pub(super) fn ended(&self, bound: &str) -> bool {
        self.sort_key().is_none_or(|key| key <= bound)
    }

    /// When the hold ends, read from its sort key (its expiry's nanoseconds first).
    pub(super) fn end(&self) -> Comeback {
        self.sort_key()
            .and_then(|key| key.split_once('#')?.0.parse().ok())
            .and_then(Timestamp::from_unix_nanos)
            .map_or(Comeback::Unknown, Comeback::At)
    }
}

impl DynamoStore {
    /// Takes a hold that cannot be released out of the holds index, marked `unreleasable`: left
    /// in it, it would come first in every later read of its share's holds and, with enough of
    /// them, keep every sweep and sold-out start from the holds behind it. Its unit stays out of
    /// the supply, so a pack's books show it until an operator repairs the record. Conditioned on
    /// the entry being the one read; a failure other than an outage is logged and left.
    pub(super) async fn set_aside(&self, entry: HoldEntry) -> Result<(), StoreError> {
        let Some(sort_key) = entry.sort_key else {
            return Ok(());
        };
        let written = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(entry.key))
            .update_expression("REMOVE #gsi2pk, #gsi2sk SET #unreleasable = :now")
            .condition_expression("#gsi2sk = :seen")
            .expression_attribute_names("#gsi2pk", GSI2_PK)
            .expression_attribute_names("#gsi2sk", GSI2_SK)
            .expression_attribute_names("#unreleasable", HOLD_UNRELEASABLE)
            .expression_attribute_values(":now", s(Timestamp::now().to_string()))
            .expression_attribute_values(":seen", sort_key)
            .send()
            .await;
        match written.map_err(|e| classify("UpdateItem", e)) {
            Ok(_) => Ok(()),
            Err(error @ StoreError::Unavailable { .. }) => Err(error),
            Err(error) => {
                tracing::error!(error = %error.detail(), "an unreleasable hold was not set aside");
                Ok(())
            }
        }
    }
}

pub(super) fn unpaid_key(user_id: &UserId) -> Item {
    key(user_pk(user_id), UNPAID_SK)
}

#[cfg(test)]
mod tests {
    use crate::schema::{hold_key, holds_ended_bound};
    use domain::ids::PurchaseId;
    use domain::timestamp::Timestamp;

    #[test]
    fn hold_keys_sort_by_expiry_and_the_bound_takes_exactly_the_ended() {
        let at = |text: &str| Timestamp::parse(text).unwrap();
        let id = |text: &str| PurchaseId::parse(text).unwrap();
        let now = at("2026-06-01T12:00:00Z");
        let bound = holds_ended_bound(now);
        assert!(hold_key(at("2026-06-01T11:59:59.999999999Z"), &id("zzz")) <= bound);
        assert!(hold_key(now, &id("zzzzzzzzzzzzzzzzzzzzzz")) <= bound);
        assert!(hold_key(now, &id("-")) <= bound);
        assert!(hold_key(at("2026-06-01T12:00:00.000000001Z"), &id("-")) > bound);
        assert!(
            hold_key(at("1970-01-01T00:00:00Z"), &id("a"))
                < hold_key(at("2026-01-01T00:00:00Z"), &id("a"))
        );
    }
}
