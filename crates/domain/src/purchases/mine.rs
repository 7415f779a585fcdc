//! The fan's own view of their purchases: which ones a list shows (the status and pack filters),
//! in which order, and the items they pulled, a page at a time.
//!
//! Order: a fan's purchases by `reservedAt`, newest first; their items by `openedAt`, newest
//! opening first, then purchase id, then slot. Both are the order of a per-fan index key,
//! `<fixed-width nanoseconds>#<purchaseId>` ([`time_key`]), read backwards: ties on the instant
//! go by purchase id descending. A page of items may end inside a purchase, so its position is
//! the purchase's key and the next slot ([`ItemsPosition`]).

use crate::ids::{PackId, PurchaseId, UserId};
use crate::purchases::{OpenedItem, Purchase, PurchaseStatus};
use crate::timestamp::{Timestamp, is_time_key, time_key};

pub const DEFAULT_PURCHASES_LIMIT: usize = 20;
pub const DEFAULT_ITEMS_LIMIT: usize = 50;

/// The `status` a fan filters their purchases on: the status as shown (a hold past its
/// `expiresAt` is `expired` whether or not the sweep has released it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatusFilter(PurchaseStatus);

impl StatusFilter {
    pub fn parse(text: &str) -> Option<Self> {
        text.parse().ok().map(Self)
    }

    pub fn status(self) -> PurchaseStatus {
        self.0
    }

    pub fn as_str(self) -> &'static str {
        self.0.as_str()
    }
}

/// A page of a fan's list: its entries, and where the next page starts (`None`: the end).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page<T> {
    pub entries: Vec<T>,
    pub next: Option<String>,
}

/// What a fan asked of their purchases.
#[derive(Debug, Clone)]
pub struct MyPurchasesQuery {
    pub user_id: UserId,
    pub status: Option<StatusFilter>,
    pub pack_id: Option<PackId>,
    pub limit: usize,
    /// The list key of the last purchase of the page before ([`purchase_list_key`]).
    pub after: Option<String>,
    pub now: Timestamp,
}

impl MyPurchasesQuery {
    /// Whether `purchase` (one of the fan's) is on the list.
    pub fn matches(&self, purchase: &Purchase) -> bool {
        self.status
            .is_none_or(|status| purchase.status_at(self.now) == status.status())
            && self
                .pack_id
                .as_ref()
                .is_none_or(|id| purchase.pack_id == *id)
    }
}

/// A purchase's key in its fan's purchase list.
pub fn purchase_list_key(purchase: &Purchase) -> String {
    time_key(purchase.reserved_at, purchase.id.as_str())
}

/// An opened purchase's key in its fan's item list.
pub fn opened_list_key(purchase: &Purchase) -> Option<String> {
    purchase
        .opened_at
        .map(|at| time_key(at, purchase.id.as_str()))
}

/// Whether `text` is a list key a page could end on.
pub fn is_list_key(text: &str) -> bool {
    is_time_key(text)
}

/// One item a fan pulled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MyItem {
    pub item: OpenedItem,
    pub pack_id: PackId,
    pub purchase_id: PurchaseId,
    pub opened_at: Timestamp,
}

/// Where a page of items resumes: in the opened purchase whose list key is `key`, at `slot`;
/// or, `slot` `None`, after that purchase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemsPosition {
    pub key: String,
    pub slot: Option<u32>,
}

impl ItemsPosition {
    /// `<key>/<slot>`, or `<key>/-` after the purchase.
    pub fn encode(&self) -> String {
        match self.slot {
            Some(slot) => format!("{}/{slot}", self.key),
            None => format!("{}/-", self.key),
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        let (key, slot) = text.rsplit_once('/')?;
        let slot = match slot {
            "-" => None,
            digits if !digits.is_empty() && digits.len() <= 9 => Some(
                digits
                    .bytes()
                    .all(|b| b.is_ascii_digit())
                    .then(|| digits.parse().ok())??,
            ),
            _ => return None,
        };
        is_list_key(key).then(|| Self {
            key: key.to_owned(),
            slot,
        })
    }
}

/// What a fan asked of their items.
#[derive(Debug, Clone)]
pub struct MyItemsQuery {
    pub user_id: UserId,
    pub pack_id: Option<PackId>,
    pub rarity: Option<String>,
    pub limit: usize,
    pub after: Option<ItemsPosition>,
}

impl MyItemsQuery {
    /// Adds the items of `purchase` (opened, met in list order) that the query asks for to
    /// `page`, from where the page before stopped; once `page` holds `limit` items, the position
    /// the next page starts at (further items of this purchase, or the ones after it).
    pub fn take_items(&self, purchase: &Purchase, page: &mut Vec<MyItem>) -> Option<ItemsPosition> {
        let (Some(key), Some(opened_at), Some(items)) = (
            opened_list_key(purchase),
            purchase.opened_at,
            purchase.items.as_deref(),
        ) else {
            return None;
        };
        let first_slot = match &self.after {
            Some(after) if after.key == key => after.slot?,
            _ => 0,
        };
        if self
            .pack_id
            .as_ref()
            .is_some_and(|id| purchase.pack_id != *id)
        {
            return None;
        }
        let wanted = items.iter().filter(|item| {
            item.slot >= first_slot && self.rarity.as_ref().is_none_or(|r| item.rarity == *r)
        });
        for item in wanted {
            if page.len() == self.limit {
                return Some(ItemsPosition {
                    key,
                    slot: Some(item.slot),
                });
            }
            page.push(MyItem {
                item: item.clone(),
                pack_id: purchase.pack_id.clone(),
                purchase_id: purchase.id.clone(),
                opened_at,
            });
        }
        (page.len() == self.limit).then_some(ItemsPosition { key, slot: None })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_parse_to_themselves_and_nothing_else_does() {
        for text in ["reserved", "completed", "opened", "expired"] {
            assert_eq!(StatusFilter::parse(text).unwrap().as_str(), text);
        }
        for text in ["", "Reserved", "paid", "opened ", "all"] {
            assert!(StatusFilter::parse(text).is_none(), "{text:?}");
        }
    }

    #[test]
    fn item_positions_round_trip_and_refuse_what_no_page_wrote() {
        let key = time_key(Timestamp::parse("2026-06-01T12:00:00Z").unwrap(), "p1");
        for slot in [Some(0), Some(7), None] {
            let position = ItemsPosition {
                key: key.clone(),
                slot,
            };
            assert_eq!(ItemsPosition::parse(&position.encode()), Some(position));
        }
        for bad in [
            "",
            "/-",
            &key,
            &format!("{key}/"),
            &format!("{key}/x"),
            &format!("{key}/-1"),
            &format!("{key}/1234567890"),
            "0001#p1/1",
            &format!("{key} x/1"),
        ] {
            assert!(ItemsPosition::parse(bad).is_none(), "{bad:?}");
        }
    }
}
