//! A fan's public face (`FAN#<userId>` / `SHOW`) and stats (`FAN#<userId>` / `STATS`) as
//! records.

use serde::{Deserialize, Serialize};

use super::{check_version, readable, version_one};
use crate::StoreError;
use crate::dynamo::Item;
use crate::locker_room::PublicLockerRoom;
use crate::schema::{STATS_ITEMS_OWNED, STATS_PACKS_OPENED, STATS_RARITY_PREFIX};
use domain::ids::{PackId, PurchaseId, TeamId};
use domain::locker_room::stats::LockerStats;
use domain::profile::AvatarUrl;
use domain::profile::name::DisplayName;
use domain::purchases::OpenedItem;
use domain::purchases::mine::MyItem;
use domain::timestamp::Timestamp;

/// The version of the public face and stats items this release writes, and the newest it reads.
pub(crate) const LOCKER_VERSION: u32 = 1;

/// One item shown, copied whole from its opened purchase (opened items never change).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ShownItemRecord {
    slot: u32,
    item_id: String,
    name: String,
    rarity: String,
    image_url: Option<String>,
    pack_id: PackId,
    purchase_id: PurchaseId,
    opened_at: Timestamp,
}

impl From<&MyItem> for ShownItemRecord {
    fn from(shown: &MyItem) -> Self {
        let OpenedItem {
            slot,
            item_id,
            name,
            rarity,
            image_url,
        } = shown.item.clone();
        Self {
            slot,
            item_id,
            name,
            rarity,
            image_url,
            pack_id: shown.pack_id.clone(),
            purchase_id: shown.purchase_id.clone(),
            opened_at: shown.opened_at,
        }
    }
}

impl From<ShownItemRecord> for MyItem {
    fn from(record: ShownItemRecord) -> Self {
        MyItem {
            item: OpenedItem {
                slot: record.slot,
                item_id: record.item_id,
                name: record.name,
                rarity: record.rarity,
                image_url: record.image_url,
            },
            pack_id: record.pack_id,
            purchase_id: record.purchase_id,
            opened_at: record.opened_at,
        }
    }
}

/// The public face's attributes: the profile's public copies (written by its patches) and the
/// locker room (written by its `PUT`); either may be absent until its writer first ran.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ShowRecord {
    #[serde(default = "version_one")]
    schema_version: u32,
    #[serde(default)]
    name_key: Option<String>,
    #[serde(default)]
    display_name: Option<DisplayName>,
    #[serde(default, deserialize_with = "AvatarUrl::read_stored")]
    avatar_url: Option<AvatarUrl>,
    #[serde(default)]
    favorite_team_id: Option<TeamId>,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    items: Vec<ShownItemRecord>,
    #[serde(default)]
    locker_rev: u64,
}

/// A public face as read: the key of the name it was shown under, and the locker room (its
/// stats are another item's).
pub(crate) struct StoredShow {
    pub name_key: Option<String>,
    pub room: PublicLockerRoom,
    /// The locker room's revision: how many of its puts changed it (0: never put).
    pub locker_rev: u64,
}

impl TryFrom<ShowRecord> for StoredShow {
    type Error = StoreError;

    fn try_from(record: ShowRecord) -> Result<Self, StoreError> {
        readable("show", record.schema_version, LOCKER_VERSION)?;
        Ok(Self {
            name_key: record.name_key,
            room: PublicLockerRoom {
                display_name: record.display_name,
                avatar_url: record.avatar_url,
                favorite_team_id: record.favorite_team_id,
                title: record.title,
                items: record.items.into_iter().map(MyItem::from).collect(),
                stats: LockerStats::default(),
                cosmetics: Default::default(),
            },
            locker_rev: record.locker_rev,
        })
    }
}

/// The stats of a stats item (none yet: all zero). Its attributes are counters the openings add
/// to, one per rarity, so they are read by name rather than through a fixed record.
pub(crate) fn stats_from_item(item: Option<&Item>) -> Result<LockerStats, StoreError> {
    let Some(item) = item else {
        return Ok(LockerStats::default());
    };
    check_version(item, "stats", LOCKER_VERSION)?;
    let count = |name: &str, value: &aws_sdk_dynamodb::types::AttributeValue| {
        value
            .as_n()
            .ok()
            .and_then(|n| n.parse::<u64>().ok())
            .ok_or_else(|| StoreError::internal(format!("stats item: `{name}` is not a count")))
    };
    let mut stats = LockerStats::default();
    for (name, value) in item {
        if name == STATS_PACKS_OPENED {
            stats.packs_opened = count(name, value)?;
        } else if name == STATS_ITEMS_OWNED {
            stats.items_owned = count(name, value)?;
        } else if let Some(rarity) = name.strip_prefix(STATS_RARITY_PREFIX) {
            stats
                .by_rarity
                .insert(rarity.to_owned(), count(name, value)?);
        }
    }
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::dynamo::records::tests::{n, newer, refused, s};

    #[test]
    fn stats_read_each_counter_and_a_newer_item_is_refused() {
        let item = HashMap::from([
            ("PK".into(), s("FAN#fan")),
            ("SK".into(), s("STATS")),
            ("packsOpened".into(), n(2)),
            ("itemsOwned".into(), n(5)),
            ("r_common".into(), n(4)),
            ("r_rare".into(), n(1)),
        ]);
        let stats = stats_from_item(Some(&item)).unwrap();
        assert_eq!((stats.packs_opened, stats.items_owned), (2, 5));
        assert_eq!(
            stats.by_rarity,
            [("common".to_owned(), 4), ("rare".to_owned(), 1)].into()
        );
        assert_eq!(stats_from_item(None).unwrap(), LockerStats::default());
        refused(stats_from_item(Some(&newer(item))));
    }
}
