//! The in-memory records as the DynamoDB items they stand for, attribute by attribute, so that
//! the conditions declared for DynamoDB's writes ([`crate::purchase_conditions`]) are checked
//! against them before the same change is made here.

use super::Tables;
use crate::condition::{Attributes, Value};
use crate::schema::{
    BUYS_HELD, BUYS_SEQ, ENDS_AT, NAME_USER_ID, PACK_AMOUNT, PACK_CURRENCY, PACK_MAX_PER_USER,
    PACK_REMAINING, PACK_STATUS, PK, PROFILE_REVISION, PURCHASE_EXPIRES_NS, PURCHASE_STATUS,
    SLOTS_VERSION, STARTS_AT, pending_slot, unpaid_slot,
};
use crate::topups::holder_member;
use domain::ids::UserId;
use domain::packs::Pack;
use domain::purchases::{Buys, Purchase, UnpaidHolds};
use domain::topups::pending::PendingTopUps;

/// One attribute name, for an item without maps.
fn single<'a>(path: &[&'a str]) -> Option<&'a str> {
    match path {
        [name] => Some(name),
        _ => None,
    }
}

/// A share of a pack's supply: the pack's terms and the units left in it.
pub(super) struct ShareItem<'a> {
    pub pack: &'a Pack,
    pub remaining: u64,
}

impl Attributes for ShareItem<'_> {
    fn attribute(&self, path: &[&str]) -> Option<Value> {
        let pack = self.pack;
        match single(path)? {
            PACK_STATUS => Some(pack.status.as_str().into()),
            STARTS_AT => pack.sale_starts_at.map(|at| at.unix_nanos().into()),
            ENDS_AT => pack.sale_ends_at.map(|at| at.unix_nanos().into()),
            PACK_REMAINING => Some(self.remaining.into()),
            PACK_AMOUNT => Some(pack.price.amount.into()),
            PACK_CURRENCY => Some(pack.price.currency.as_str().into()),
            PACK_MAX_PER_USER => pack.max_per_user.map(Into::into),
            _ => None,
        }
    }
}

/// A buyer's count of a pack.
impl Attributes for Buys {
    fn attribute(&self, path: &[&str]) -> Option<Value> {
        match single(path)? {
            BUYS_SEQ => Some(self.seq.into()),
            BUYS_HELD => Some(self.held.into()),
            _ => None,
        }
    }
}

impl Attributes for Purchase {
    fn attribute(&self, path: &[&str]) -> Option<Value> {
        match single(path)? {
            PURCHASE_STATUS => Some(self.status.as_str().into()),
            PURCHASE_EXPIRES_NS => Some(self.expires_at.unix_nanos().into()),
            _ => None,
        }
    }
}

/// An item of slots (as DynamoDB keeps them: `SlotsRecord`): its version, or `<slot>.<member>`,
/// `held`'s value of what the slot named so by `name` holds (`None`: not under that member).
fn slotted<T>(
    path: &[&str],
    (version, slots): (u64, &[Option<T>]),
    (name, member): (fn(u32) -> String, &str),
    held: impl Fn(&T) -> Option<&str>,
) -> Option<Value> {
    match path {
        [SLOTS_VERSION] => (version > 0).then(|| version.into()),
        [slot, asked] if *asked == member => slots
            .iter()
            .enumerate()
            .find(|(k, _)| name(*k as u32) == *slot)
            .and_then(|(_, slot)| slot.as_ref())
            .and_then(held)
            .map(Into::into),
        _ => None,
    }
}

/// A fan's unpaid holds: their version, and each slot's hold (`s<k>.purchaseId`).
impl Attributes for UnpaidHolds {
    fn attribute(&self, path: &[&str]) -> Option<Value> {
        let slots = (self.version, self.slots.as_slice());
        slotted(path, slots, (unpaid_slot, "purchaseId"), |held| {
            Some(held.purchase_id.as_str())
        })
    }
}

/// A fan's pending sessions: their version, and each slot's holder (`t<k>.topUpId` or
/// `t<k>.orderId`).
impl Attributes for PendingTopUps {
    fn attribute(&self, path: &[&str]) -> Option<Value> {
        let slots = (self.version, self.slots.as_slice());
        let member = path.get(1).copied().unwrap_or_default();
        slotted(path, slots, (pending_slot, member), |slot| {
            let (holds, id) = holder_member(&slot.holder);
            (holds == member).then_some(id)
        })
    }
}

/// A fan's Cash: one attribute per currency held.
pub(super) struct CashItem<'a> {
    pub tables: &'a Tables,
    pub user_id: &'a UserId,
}

impl Attributes for CashItem<'_> {
    fn attribute(&self, path: &[&str]) -> Option<Value> {
        let currency = single(path)?;
        self.tables
            .balances
            .get(&(self.user_id.clone(), currency.to_owned()))
            .map(|&balance| balance.into())
    }
}

/// An item that exists and is conditioned on for nothing but that (a team): its key.
pub(super) struct Present;

impl Attributes for Present {
    fn attribute(&self, path: &[&str]) -> Option<Value> {
        (single(path)? == PK).then(|| "present".into())
    }
}

/// A fan's profile: its key and revision.
pub(super) struct ProfileItem(pub u64);

impl Attributes for ProfileItem {
    fn attribute(&self, path: &[&str]) -> Option<Value> {
        match single(path)? {
            PK => Some("present".into()),
            PROFILE_REVISION => Some(self.0.into()),
            _ => None,
        }
    }
}

/// A display name's item: its key and holder.
pub(super) struct NameItem(pub UserId);

impl Attributes for NameItem {
    fn attribute(&self, path: &[&str]) -> Option<Value> {
        match single(path)? {
            PK => Some("present".into()),
            NAME_USER_ID => Some(self.0.as_str().into()),
            _ => None,
        }
    }
}
