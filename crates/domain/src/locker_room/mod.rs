//! The locker room: the fan's public showcase of up to [`MAX_ITEMS`] of their pulls, under a
//! title, shown by display name (`GET /api/locker-rooms/{displayName}`) with their stats.
//!
//! - [`stats`]: packs opened, items owned, items by rarity.
//!
//! The body of `PUT /api/me/locker-room` is checked in two steps: its shape and limits here
//! ([`LockerRoomBody::check`]), then that each item is one the fan pulled, against the
//! purchases it names ([`showcase`]). An item of a locker room is copied whole from its opened
//! purchase: opened items never change, so the copy cannot go stale, and the public view reads
//! no purchase.

pub mod stats;

use std::collections::HashSet;

use serde::Deserialize;

use crate::ids::{PurchaseId, UserId};
use crate::purchases::Purchase;
use crate::purchases::mine::MyItem;
use crate::text::hidden_char;
use crate::timestamp::Timestamp;

/// The most characters of a locker room's title.
pub const MAX_TITLE_CHARS: usize = 60;
/// The most items a locker room shows.
pub const MAX_ITEMS: usize = 12;

/// An item the fan pulled: the slot of one of their opened purchases.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = LockerRoomItem)]
pub struct ItemRef {
    #[schema(value_type = crate::json_schema::Id)]
    pub purchase_id: PurchaseId,
    pub slot: u32,
}

/// The body of `PUT /api/me/locker-room`: the whole locker room, replacing the one before.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = LockerRoomRequest)]
pub struct LockerRoomBody {
    /// At most 60 characters, not blank, with no character that hides or reorders text (control,
    /// bidi and zero-width characters, other format and invisible characters); absent or null
    /// for none.
    #[serde(default)]
    #[schema(max_length = 60, min_length = 1)]
    pub title: Option<String>,
    /// The items to show, in the order they are shown: at most 12, each once, each a slot of
    /// one of your opened purchases.
    #[schema(max_items = 12)]
    pub items: Vec<ItemRef>,
}

/// A rule of the body, naming where it is broken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum LockerRoomError {
    #[error("title must be at most {MAX_TITLE_CHARS} characters")]
    TitleTooLong,
    #[error("title must not be blank (omit it or send null for none)")]
    TitleBlank,
    #[error(
        "title must not hold control, bidi, zero-width or other invisible characters (U+{0:04X})"
    )]
    TitleHidden(u32),
    #[error("items must hold at most {MAX_ITEMS} items")]
    TooManyItems,
    #[error("items[{0}] repeats an earlier item")]
    RepeatedItem(usize),
}

impl LockerRoomError {
    /// The member at fault, as the body names it (`items[3]`).
    pub fn field(self) -> String {
        match self {
            Self::TitleTooLong | Self::TitleBlank | Self::TitleHidden(_) => "title".into(),
            Self::TooManyItems => "items".into(),
            Self::RepeatedItem(index) => format!("items[{index}]"),
        }
    }
}

impl LockerRoomBody {
    /// Checks the title and the items' count and uniqueness (not yet whose they are).
    pub fn check(self) -> Result<Self, LockerRoomError> {
        if let Some(title) = &self.title {
            if title.trim().is_empty() {
                return Err(LockerRoomError::TitleBlank);
            }
            if title.chars().count() > MAX_TITLE_CHARS {
                return Err(LockerRoomError::TitleTooLong);
            }
            if let Some(hidden) = hidden_char(title) {
                return Err(LockerRoomError::TitleHidden(hidden.into()));
            }
        }
        if self.items.len() > MAX_ITEMS {
            return Err(LockerRoomError::TooManyItems);
        }
        let mut seen = HashSet::with_capacity(self.items.len());
        if let Some(index) = self.items.iter().position(|item| !seen.insert(item)) {
            return Err(LockerRoomError::RepeatedItem(index));
        }
        Ok(self)
    }
}

/// An item named that the fan did not pull (another fan's purchase, one not opened, a slot it
/// does not have): `items[index]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("items[{index}] is not an item you pulled")]
pub struct ItemNotOwned {
    pub index: usize,
}

/// The items `refs` names, in its order, from `purchases` (the purchases it names, as read: a
/// missing one is not the fan's).
pub fn showcase(
    fan: &UserId,
    refs: &[ItemRef],
    purchases: &[Purchase],
) -> Result<Vec<MyItem>, ItemNotOwned> {
    refs.iter()
        .enumerate()
        .map(|(index, item_ref)| {
            purchases
                .iter()
                .find(|purchase| purchase.id == item_ref.purchase_id && purchase.user_id == *fan)
                .and_then(|purchase| {
                    let opened_at = purchase.opened_at?;
                    let item = purchase
                        .items
                        .as_ref()?
                        .iter()
                        .find(|item| item.slot == item_ref.slot)?;
                    Some(MyItem {
                        item: item.clone(),
                        pack_id: purchase.pack_id.clone(),
                        purchase_id: purchase.id.clone(),
                        opened_at,
                    })
                })
                .ok_or(ItemNotOwned { index })
        })
        .collect()
}

/// What a locker room shows: its title and items, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shown<'a> {
    pub title: Option<&'a str>,
    pub items: &'a [MyItem],
}

impl Shown<'_> {
    /// A room never put shows nothing.
    pub const NOTHING: Shown<'static> = Shown {
        title: None,
        items: &[],
    };

    /// The events of `user_id`'s put changing what their room shows from `before` to `self`:
    /// `locker_room.updated`, or none when it shows the same (a repeat).
    pub fn events(&self, user_id: &UserId, before: &Shown<'_>) -> Vec<crate::events::NewEvent> {
        if self == before {
            return Vec::new();
        }
        vec![crate::events::NewEvent::fan(
            user_id,
            crate::events::LockerRoomUpdated {
                shown: u32::try_from(self.items.len()).unwrap_or(u32::MAX),
            },
        )]
    }
}

/// A fan's locker room as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockerRoom {
    pub title: Option<String>,
    pub items: Vec<MyItem>,
    pub updated_at: Timestamp,
}

#[cfg(test)]
mod tests;
