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

    /// The first slot (in slot order) naming a cosmetic an earlier slot names: a cosmetic shows
    /// in its own slot only, so that slot cannot hold it (and one write checks each item once).
    pub fn repeated_slot(&self) -> Option<Slot> {
        let named: Vec<(&Slot, &ProductId)> = self.slots.iter().collect();
        (1..named.len())
            .find(|&k| named[..k].iter().any(|(_, id)| *id == named[k].1))
            .map(|k| *named[k].0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cosmetic_named_in_two_slots_is_refused_in_the_later() {
        let id = |text: &str| ProductId::parse(text).unwrap();
        let mut equipped = Equipped::default();
        equipped.slots.insert(Slot::Badge, id("a"));
        equipped.slots.insert(Slot::AvatarFrame, id("b"));
        assert_eq!(equipped.repeated_slot(), None);
        equipped.slots.insert(Slot::LockerTheme, id("b"));
        assert_eq!(equipped.repeated_slot(), Some(Slot::LockerTheme));
    }
}
