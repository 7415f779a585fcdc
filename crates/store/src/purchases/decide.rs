//! A start's and a payment's decisions, written once for both stores: from what the store read,
//! the answer to a repeated key, what a new start or a payment writes, each write with the
//! condition it is written on, and what a start releases before it refuses.
//! DynamoDB renders the writes into its transaction; the in-memory store checks the same
//! conditions against its items and applies the same writes.

use crate::condition::Condition;
use crate::purchase_conditions as conditions;
use crate::purchases::{StartError, Started};
use domain::cash::Debit;
use domain::packs::Pack;
use domain::purchases::{Buys, HoldSlot, Purchase, PurchaseStatus, StartRefusal, StartRequest};
use domain::queue::admission::{Allowance, start_finishes};
use domain::queue::entry::EntryStatus;
use domain::timestamp::Timestamp;

/// The answer to a start whose key already names `existing`: the same start repeated, or the
/// key reused for another.
pub fn repeat(request: &StartRequest, existing: Purchase) -> Result<Started, StartError> {
    if request.is_repeated_by(&existing) {
        Ok(Started::Repeated(existing))
    } else {
        Err(StartError::KeyReused)
    }
}

/// What a start decided on: the buyer's count, the version of their unpaid holds, and (on a
/// queued pack) what they had bought while admitted.
#[derive(Debug, Clone, Copy)]
pub struct StartRead {
    pub buys: Buys,
    pub unpaid_version: u64,
    pub admitted: Option<u32>,
}

/// Where a start puts its unit: the share it takes it from, the unpaid-holds slot it takes,
/// and the balance its holds then need (0: none asked).
#[derive(Debug, Clone, Copy)]
pub struct Placement {
    pub shard: u32,
    pub slot: u32,
    pub needed: u64,
}

/// Every write of a new start, each with its condition.
#[derive(Debug, Clone)]
pub struct StartWrite {
    /// The new purchase (on a key that must be free).
    pub purchase: Purchase,
    /// One unit of the share taken, on [`conditions::share_sells`].
    pub share: Condition,
    /// The buyer's count: `seq` the purchase's nonce and `held` up by one, on
    /// [`conditions::buys_as_read`].
    pub seq: u64,
    pub buys: Condition,
    /// The hold put in the fan's unpaid-holds slot `slot`, their version moved to `version`,
    /// on [`conditions::unpaid_as_read`].
    pub slot: u32,
    pub hold: HoldSlot,
    pub unpaid_version: u64,
    pub unpaid_condition: Condition,
    /// The check that the fan's balance covers their holds (when the policy asks).
    pub funds: Option<Condition>,
    /// The fan's entry in a queued pack's line, when the start asks it.
    pub entry: Option<EntryWrite>,
}

/// A start's change to the fan's entry: `bought` its new count and, at the pack's limit, the
/// admission `done`; on [`conditions::entry_admits`].
#[derive(Debug, Clone)]
pub struct EntryWrite {
    pub bought: u32,
    pub done: Option<EntryStatus>,
    pub condition: Condition,
}

/// What a new start of `pack` writes, decided on `read` and placed at `placement`.
pub fn start_write(
    request: &StartRequest,
    pack: &Pack,
    read: StartRead,
    placement: Placement,
) -> StartWrite {
    let Placement {
        shard,
        slot,
        needed,
    } = placement;
    let mut purchase = request.purchase(read.buys, &pack.price, shard, slot);
    purchase.admitted = read.admitted.is_some();
    let hold = HoldSlot {
        purchase_id: purchase.id.clone(),
        expires_at: purchase.expires_at,
        price: purchase.price.clone(),
    };
    let entry = read.admitted.map(|bought| {
        let next = bought + 1;
        EntryWrite {
            bought: next,
            done: start_finishes(Allowance::of(pack.max_per_user), next)
                .then_some(EntryStatus::Done),
            condition: conditions::entry_admits(request.now, bought),
        }
    });
    StartWrite {
        share: conditions::share_sells(pack, request.now),
        seq: purchase.nonce,
        buys: conditions::buys_as_read(read.buys, pack.max_per_user),
        slot,
        hold,
        unpaid_version: read.unpaid_version + 1,
        unpaid_condition: conditions::unpaid_as_read(read.unpaid_version),
        funds: (needed > 0).then(|| conditions::funds_cover(&pack.price.currency, needed)),
        entry,
        purchase,
    }
}

/// Every write of a payment of `purchase` from `balance` at `now`, each with its condition.
#[derive(Debug, Clone)]
pub struct PayWrite {
    /// The purchase paid, on [`conditions::payable`].
    pub paid: Purchase,
    pub payable: Condition,
    /// The balance left, from exactly the balance read ([`conditions::balance_as_read`]).
    pub balance: u64,
    pub balance_as_read: Condition,
    /// The debit written to the ledger (its key free).
    pub debit: Debit,
    /// The purchase's unpaid-holds slot freed, on [`conditions::slot_holds`]: where the slot
    /// holds another hold now, the payment goes on without freeing it.
    pub slot: Option<(u32, Condition)>,
}

/// What a payment of `purchase` (found payable: [`domain::purchases::check_complete`]) writes.
pub fn pay_write(purchase: &Purchase, balance: u64, now: Timestamp) -> PayWrite {
    PayWrite {
        paid: Purchase {
            status: PurchaseStatus::Completed,
            completed_at: Some(now),
            ..purchase.clone()
        },
        payable: conditions::payable(now),
        balance: balance - purchase.price.amount,
        balance_as_read: conditions::balance_as_read(&purchase.price, balance),
        debit: Debit {
            purchase_id: purchase.id.clone(),
            amount: purchase.price.clone(),
            at: now,
        },
        slot: purchase
            .hold_slot
            .map(|slot| (slot, conditions::slot_holds(slot, &purchase.id))),
    }
}

/// How many of a pack's ended holds a start releases before it answers sold out: bounded work
/// per request, whatever the pack's backlog (the sweep takes the rest).
pub const RELEASE_BEFORE_SOLD_OUT: usize = 25;

/// What a start releases before it gives a refusal that holds run out unreleased can cause:
/// they still count against their buyer's limit and keep their units out of the shares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Release {
    /// The buyer's holds of the pack that ran out unreleased (before "limit reached").
    BuyersDeadHolds,
    /// Up to `max` of the pack's holds that ran out (before "sold out").
    PackHolds { max: usize },
}

impl Release {
    /// Whether the start decides again after this release found `found` holds: after the
    /// buyer's, only if it found one (their count went down); after the pack's, always, since
    /// units that other requests released meanwhile show on a fresh look.
    pub fn decide_again(self, found: u64) -> bool {
        match self {
            Release::BuyersDeadHolds => found > 0,
            Release::PackHolds { .. } => true,
        }
    }
}

/// The releases a start made before refusing: each is made once per start.
#[derive(Debug, Default)]
pub struct BeforeRefusing {
    buyers: bool,
    pack: bool,
}

impl BeforeRefusing {
    /// What the start releases before it answers `refusal`; `None`: answer it now.
    pub fn release(&mut self, refusal: &StartRefusal) -> Option<Release> {
        let (made, release) = match refusal {
            StartRefusal::LimitReached => (&mut self.buyers, Release::BuyersDeadHolds),
            StartRefusal::SoldOut => (
                &mut self.pack,
                Release::PackHolds {
                    max: RELEASE_BEFORE_SOLD_OUT,
                },
            ),
            _ => return None,
        };
        (!std::mem::replace(made, true)).then_some(release)
    }
}
