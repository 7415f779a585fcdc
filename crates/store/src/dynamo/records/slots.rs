//! An item of numbered slots, as a record: `v`, the version every write moves on, and one map
//! per taken slot, `<prefix><k>`. A fan's unpaid holds (`s<k>`) and pending top-ups (`t<k>`)
//! are such items, each written by updates of one slot at a time, so the item is read whole.

use serde::de::DeserializeOwned;

use super::item_version;
use crate::StoreError;
use crate::dynamo::Item;
use crate::schema::SLOTS_VERSION;

/// The whole item: its schema version, `v` and the slots by position.
#[derive(Debug)]
pub(crate) struct SlotsRecord<R> {
    pub(crate) schema_version: u32,
    pub(crate) version: u64,
    pub(crate) slots: Vec<Option<R>>,
}

impl<R: DeserializeOwned> SlotsRecord<R> {
    /// The slots of `item` (a `what` item) named `<prefix><k>`.
    pub(crate) fn read(item: &Item, what: &str, prefix: char) -> Result<Self, StoreError> {
        let mut record = Self {
            schema_version: item_version(item, what)?,
            version: item
                .get(SLOTS_VERSION)
                .and_then(|value| value.as_n().ok())
                .and_then(|n| n.parse().ok())
                .unwrap_or(0),
            slots: Vec::new(),
        };
        for (name, value) in item {
            let Some(slot) = name
                .strip_prefix(prefix)
                .and_then(|k| k.parse::<usize>().ok())
            else {
                continue;
            };
            let taken: R = serde_dynamo::from_attribute_value(value.clone())
                .map_err(|e| StoreError::internal_from(format!("{what} item"), e))?;
            if record.slots.len() <= slot {
                record.slots.resize_with(slot + 1, || None);
            }
            record.slots[slot] = Some(taken);
        }
        Ok(record)
    }
}
