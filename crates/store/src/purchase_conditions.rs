//! The conditions the purchase rules put on each write, declared once: DynamoDB gets each inside
//! the write it guards (its transaction re-checks, at the moment it applies, what the rule
//! decided on a read), and the in-memory store checks the same declaration against the item it
//! is about to change. Each names the rule of [`domain::purchases`] it enforces.

use super::condition::{Compare, Condition};
use super::schema::{
    BUYS_HELD, BUYS_SEQ, ENDS_AT, ENTRY_BOUGHT, ENTRY_PASS_EXPIRES_AT, ENTRY_STATUS, PACK_AMOUNT,
    PACK_CURRENCY, PACK_MAX_PER_USER, PACK_REMAINING, PACK_STATUS, PURCHASE_EXPIRES_NS,
    PURCHASE_STATUS, STARTS_AT, UNPAID_VERSION, unpaid_slot,
};
use domain::cash::Money;
use domain::ids::PurchaseId;
use domain::packs::Pack;
use domain::purchases::{Buys, PurchaseStatus};
use domain::timestamp::Timestamp;

fn status_is(status: PurchaseStatus) -> Condition {
    Condition::eq(PURCHASE_STATUS, status.as_str())
}

/// A share of `pack`'s supply sells a unit at `now`: the pack on sale ([`domain::purchases::check_start`]),
/// a unit left in the share (never more reservations than units), and the terms the start read
/// (price, limit) still the pack's.
pub fn share_sells(pack: &Pack, now: Timestamp) -> Condition {
    let now = now.unix_nanos();
    Condition::eq(PACK_STATUS, "active")
        .and(Condition::is(STARTS_AT, Compare::Le, now))
        .and(Condition::absent(ENDS_AT).or(Condition::is(ENDS_AT, Compare::Gt, now)))
        .and(Condition::is(PACK_REMAINING, Compare::Ge, 1u64))
        .and(Condition::eq(PACK_AMOUNT, pack.price.amount))
        .and(Condition::eq(PACK_CURRENCY, pack.price.currency.as_str()))
        .and(Condition::eq_or_absent(
            PACK_MAX_PER_USER,
            pack.max_per_user,
        ))
}

/// The buyer's count of a pack is the one the start read (so the nonce it gives is theirs
/// alone) and under the pack's `max` ([`domain::purchases::check_start`]'s limit).
pub fn buys_as_read(buys: Buys, max: Option<u32>) -> Condition {
    let as_read = match buys.seq {
        0 => Condition::absent(BUYS_SEQ),
        seq => Condition::eq(BUYS_SEQ, seq),
    };
    match max {
        Some(max) => {
            as_read.and(Condition::absent(BUYS_HELD).or(Condition::is(BUYS_HELD, Compare::Lt, max)))
        }
        None => as_read,
    }
}

/// The fan's entry in a queued pack's line admits a start at `now`: admitted, the window open
/// ([`domain::queue::admission::check_admitted`]), and `bought` as the start read it (so that the
/// one that brings the fan to their limit, and ends their admission, is known).
pub fn entry_admits(now: Timestamp, bought: u32) -> Condition {
    let as_read = match bought {
        0 => Condition::absent(ENTRY_BOUGHT).or(Condition::eq(ENTRY_BOUGHT, 0u32)),
        bought => Condition::eq(ENTRY_BOUGHT, bought),
    };
    Condition::eq(
        ENTRY_STATUS,
        domain::queue::entry::EntryStatus::Admitted.as_str(),
    )
    .and(Condition::is(
        ENTRY_PASS_EXPIRES_AT,
        Compare::Gt,
        now.unix_nanos(),
    ))
    .and(as_read)
}

/// The fan's unpaid holds are the ones the start read at `version` ([`domain::purchases::take_hold_slot`]
/// decided the cap and the funds on them).
pub fn unpaid_as_read(version: u64) -> Condition {
    Condition::version_as_read(UNPAID_VERSION, version)
}

/// The fan's balance in `currency` covers `needed` ([`domain::purchases::take_hold_slot`] with
/// `START_REQUIRES_FUNDS`).
pub fn funds_cover(currency: &str, needed: u64) -> Condition {
    Condition::is(currency.to_owned(), Compare::Ge, needed)
}

/// A purchase can be paid at `now`: reserved, its hold running ([`domain::purchases::check_complete`]).
pub fn payable(now: Timestamp) -> Condition {
    status_is(PurchaseStatus::Reserved).and(Condition::is(
        PURCHASE_EXPIRES_NS,
        Compare::Gt,
        now.unix_nanos(),
    ))
}

/// The balance a payment of `price` decided on is the one stored, so the balance answered is
/// exact and never goes below 0 ([`domain::purchases::check_complete`]). A balance read as 0 may be absent
/// or a stored 0 (a free pack costs 0).
pub fn balance_as_read(price: &Money, balance: u64) -> Condition {
    let stored = Condition::eq(price.currency.to_string(), balance);
    match balance {
        0 => Condition::absent(price.currency.to_string()).or(stored),
        _ => stored,
    }
}

/// The fan's unpaid-holds slot `slot` still holds purchase `purchase_id` (a payment frees only
/// its own hold's slot).
pub fn slot_holds(slot: u32, purchase_id: &PurchaseId) -> Condition {
    Condition::eq(
        format!("{}.purchaseId", unpaid_slot(slot)),
        purchase_id.as_str(),
    )
}

/// A hold can be released at `now`: reserved and run out ([`domain::purchases::Purchase::hold_expired_at`]).
pub fn releasable(now: Timestamp) -> Condition {
    status_is(PurchaseStatus::Reserved).and(Condition::is(
        PURCHASE_EXPIRES_NS,
        Compare::Le,
        now.unix_nanos(),
    ))
}

/// A purchase can be opened: paid and not yet opened ([`domain::purchases::check_open`]), so its draw is
/// written once.
pub fn openable() -> Condition {
    status_is(PurchaseStatus::Completed)
}
