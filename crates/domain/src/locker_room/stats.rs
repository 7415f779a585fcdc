//! A fan's stats as their locker room shows them: packs opened, items pulled, and items by
//! rarity. They are a sum over openings, so the store may keep them by adding each opening
//! ([`LockerStats::add_opening`], in the opening's write) or sum the openings it reads
//! ([`LockerStats::of_openings`]); both give the same figures.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::purchases::OpenedItem;

/// A fan's stats, exact as of their last opening.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LockerStats {
    pub packs_opened: u64,
    pub items_owned: u64,
    /// Rarity name to items of it (a rarity never pulled is absent).
    pub by_rarity: BTreeMap<String, u64>,
}

impl LockerStats {
    /// The stats of the openings whose items are `openings` (one slice per opened purchase).
    pub fn of_openings<'a>(openings: impl IntoIterator<Item = &'a [OpenedItem]>) -> Self {
        let mut stats = Self::default();
        for items in openings {
            stats.add_opening(items);
        }
        stats
    }

    /// Counts one more opened pack, of `items`.
    pub fn add_opening(&mut self, items: &[OpenedItem]) {
        self.packs_opened += 1;
        self.items_owned += items.len() as u64;
        for item in items {
            *self.by_rarity.entry(item.rarity.clone()).or_default() += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(rarities: &[&str]) -> Vec<OpenedItem> {
        rarities
            .iter()
            .zip(0..)
            .map(|(rarity, slot)| OpenedItem {
                slot,
                item_id: format!("item-{slot}"),
                name: "Item".into(),
                rarity: (*rarity).into(),
                image_url: None,
            })
            .collect()
    }

    #[test]
    fn stats_sum_the_openings_and_count_each_rarity() {
        let first = items(&["common", "common", "rare"]);
        let second = items(&["legendary", "common"]);
        let stats = LockerStats::of_openings([first.as_slice(), second.as_slice()]);
        assert_eq!(
            serde_json::to_value(&stats).unwrap(),
            serde_json::json!({
                "packsOpened": 2, "itemsOwned": 5,
                "byRarity": {"common": 3, "legendary": 1, "rare": 1}
            })
        );
        let mut kept = LockerStats::default();
        kept.add_opening(&second);
        kept.add_opening(&first);
        assert_eq!(
            kept, stats,
            "kept by each opening or summed, the same figures"
        );
        assert_eq!(
            serde_json::to_value(LockerStats::of_openings([])).unwrap(),
            serde_json::json!({"packsOpened": 0, "itemsOwned": 0, "byRarity": {}})
        );
    }
}
