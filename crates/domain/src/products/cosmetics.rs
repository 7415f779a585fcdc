//! What a fan equips: at most one owned cosmetic per slot, shown on their profile and in their
//! locker room. Owning each is checked in the write that equips it.

use std::collections::BTreeMap;

use crate::ids::ProductId;

use super::Slot;

/// A fan's equipped cosmetics, by slot (a slot absent shows nothing).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Equipped {
    pub slots: BTreeMap<Slot, ProductId>,
}

impl Equipped {
    /// The cosmetic shown in `slot`, if any.
    pub fn in_slot(&self, slot: Slot) -> Option<&ProductId> {
        self.slots.get(&slot)
    }
}
