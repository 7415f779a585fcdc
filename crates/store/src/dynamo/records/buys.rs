//! A buyer's counter of purchases of one pack (`USER#<userId>` / `BUYS#<packId>`) as a record.
//! Written only by the start's update (`seq`, `held`, `entity`, `schemaVersion`) and a pack
//! reward's claim (`seq`, `entity`, `schemaVersion`), so the record is read-only.

use serde::Deserialize;

use super::{PURCHASE_VERSION, read_record, readable, version_one};
use crate::StoreError;
use crate::dynamo::Item;
use domain::purchases::Buys;

/// The counter's attributes; an absent one is 0, as the start's conditions read it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BuysRecord {
    #[serde(default = "version_one")]
    schema_version: u32,
    #[serde(default)]
    seq: u64,
    #[serde(default)]
    held: u64,
}

impl TryFrom<BuysRecord> for Buys {
    type Error = StoreError;

    fn try_from(record: BuysRecord) -> Result<Self, StoreError> {
        readable("buys", record.schema_version, PURCHASE_VERSION)?;
        Ok(Buys {
            seq: record.seq,
            held: record.held,
        })
    }
}

/// A buyer's counter from its item (nothing bought yet when it is absent).
pub(crate) fn buys_from_item(item: Option<&Item>) -> Result<Buys, StoreError> {
    item.map_or_else(
        || Ok(Buys::default()),
        |item| read_record::<BuysRecord, _>(item.clone(), "buys"),
    )
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::dynamo::records::tests::{n, newer, refused, s};

    #[test]
    fn a_counter_of_todays_format_reads_and_a_newer_one_is_refused() {
        // As the start wrote it before versions.
        let item = HashMap::from([
            ("PK".into(), s("USER#fan")),
            ("SK".into(), s("BUYS#genesis")),
            ("entity".into(), s("buys")),
            ("seq".into(), n(7)),
            ("held".into(), n(2)),
        ]);
        let buys = buys_from_item(Some(&item)).unwrap();
        assert_eq!((buys.seq, buys.held), (7, 2));
        let none = buys_from_item(None).unwrap();
        assert_eq!((none.seq, none.held), (0, 0));
        refused(buys_from_item(Some(&newer(item))));
    }
}
