//! Purchases in memory: each operation decides and applies under one write lock, as DynamoDB
//! applies a transaction whose conditions hold.

use super::items::{CashItem, ShareItem};
use super::queue::EntryItem;
use super::{MemoryStore, Tables};
use domain::cash::ledger::LedgerEntry;

use crate::StoreError;
use crate::condition::{Attributes, require};
use crate::purchase_conditions as conditions;
use crate::purchases::decide::{
    BeforeRefusing, Placement, Release, StartRead, StartWrite, pay_write, repeat, start_write,
};
use crate::purchases::{
    CompleteError, CompletePurchase, Completed, GetPurchase, OpenError, OpenPurchase, Opened,
    ReleaseHolds, Released, StartError, StartPurchase, Started,
};
use crate::queue_conditions;
use domain::events::money::{pack_opened, purchase_completed, purchase_expired, purchase_reserved};
use domain::ids::{PackId, PurchaseId, UserId};
use domain::packs::{Pack, PackStatus};
use domain::purchases::{
    Buys, CompleteRefusal, Completion, DrawInputs, Purchase, PurchaseStatus, StartRefusal,
    StartRequest, check_complete, check_human, check_open, check_start, opened, random_shard,
    take_hold_slot,
};
use domain::queue::admission::give_back;
use domain::timestamp::Timestamp;

impl Tables {
    /// Releases the hold of the purchase at `at` if it is reserved and expired at `now`: the
    /// purchase's state alone decides (as on DynamoDB); its unit goes back to its share and its
    /// buyer's count down.
    pub(super) fn release(&mut self, at: &(UserId, PurchaseId), now: Timestamp) -> bool {
        let Some(purchase) = self.purchases.get_mut(at) else {
            return false;
        };
        if !conditions::releasable(now).holds(Some(&*purchase)) {
            return false;
        }
        purchase.status = PurchaseStatus::Expired;
        let events = purchase_expired(purchase);
        let (user_id, pack_id, shard) = (
            purchase.user_id.clone(),
            purchase.pack_id.clone(),
            purchase.supply_shard,
        );
        let admitted = purchase.admitted;
        self.move_units(&pack_id, shard, 1, now);
        if admitted
            && let Some(entry) = self.entry_mut(&pack_id, &user_id)
            && queue_conditions::allowance_back(now).holds(Some(&EntryItem(entry)))
        {
            give_back(entry);
        }
        if let Some(buys) = self.buys.get_mut(&(user_id, pack_id)) {
            buys.held = buys.held.saturating_sub(1);
        }
        self.emit(events, now);
        // As on DynamoDB: counted where every release goes through.
        crate::metrics::count(crate::metrics::Metric::HoldsReleased);
        true
    }

    /// A share of `pack_id` with a unit left: `first` if it has one, else another (a start
    /// that meets an empty share goes on to the others before it answers sold out).
    pub(super) fn share_with_a_unit(&self, pack_id: &PackId, first: u32) -> Option<u32> {
        let shares = self.supply.get(pack_id.as_str())?;
        let count = u32::try_from(shares.len()).ok()?;
        (0..count)
            .map(|step| (first + step) % count)
            .find(|&k| shares[k as usize] > 0)
    }

    /// Releases up to `max` expired holds (of `pack_id`, or of all).
    fn release_expired(
        &mut self,
        pack_id: Option<&PackId>,
        now: Timestamp,
        max: usize,
    ) -> Released {
        let mut expired: Vec<(Timestamp, (UserId, PurchaseId))> = self
            .purchases
            .iter()
            .filter(|(_, p)| p.status == PurchaseStatus::Reserved && p.hold_expired_at(now))
            .filter(|(_, p)| pack_id.is_none_or(|id| p.pack_id == *id))
            .map(|(at, p)| (p.expires_at, at.clone()))
            .collect();
        expired.sort();
        let mut report = Released {
            more: expired.len() > max,
            ..Released::default()
        };
        for (_, at) in expired.into_iter().take(max) {
            if self.release(&at, now) {
                report.released += 1;
            }
        }
        report
    }

    fn balance(&self, user_id: &UserId, currency: &str) -> u64 {
        self.balances
            .get(&(user_id.clone(), currency.to_owned()))
            .copied()
            .unwrap_or(0)
    }
}

impl StartPurchase for MemoryStore {
    async fn start_purchase(&self, request: &StartRequest) -> Result<Started, StartError> {
        let mut tables = self.write();
        let at = (request.user_id.clone(), request.purchase_id.clone());
        if let Some(existing) = tables.purchases.get(&at) {
            return repeat(request, existing.clone());
        }
        let pack = tables
            .packs
            .get(request.pack_id.as_str())
            .map(|s| s.pack.clone())
            .filter(|pack| pack.status != PackStatus::Draft)
            .ok_or(StartRefusal::PackNotFound)?;
        check_human(&pack, request)?;
        let first = random_shard(pack.shard_count());
        let mut released = BeforeRefusing::default();
        loop {
            let refusal = match tables.decide_start(request, &pack, first) {
                Ok(write) => return tables.apply_start(request, &pack, write),
                Err(refusal) => refusal,
            };
            let again = released
                .release(&refusal)
                .is_some_and(|release| release.decide_again(tables.release_for(request, release)));
            if !again {
                return Err(refusal.into());
            }
        }
    }
}

impl Tables {
    /// What a start writes, decided on the items as they are (as DynamoDB decides on what it
    /// read), its unit taken from share `first` or the next with one.
    fn decide_start(
        &self,
        request: &StartRequest,
        pack: &Pack,
        first: u32,
    ) -> Result<StartWrite, StartRefusal> {
        let buys_at = (request.user_id.clone(), request.pack_id.clone());
        let buys = self.buys.get(&buys_at).copied().unwrap_or_default();
        check_start(Some(pack), buys, request.now)?;
        let admitted = self.admission(pack, request)?;
        let holds = self
            .unpaid
            .get(request.user_id.as_str())
            .cloned()
            .unwrap_or_default();
        let balance = self.balance(&request.user_id, &pack.price.currency);
        let (slot, needed) =
            take_hold_slot(&holds, request.policy, &pack.price, balance, request.now)?;
        let shard = self
            .share_with_a_unit(&request.pack_id, first)
            .ok_or(StartRefusal::SoldOut)?;
        let read = StartRead {
            buys,
            unpaid_version: holds.version,
            admitted,
        };
        let placement = Placement {
            shard,
            slot,
            needed,
        };
        Ok(start_write(request, pack, read, placement))
    }

    /// Makes `release` (decided by [`BeforeRefusing`]) for `request`'s start: how many holds it
    /// released.
    fn release_for(&mut self, request: &StartRequest, release: Release) -> u64 {
        match release {
            Release::BuyersDeadHolds => {
                let theirs: Vec<(UserId, PurchaseId)> = self
                    .purchases
                    .iter()
                    .filter(|(_, p)| p.user_id == request.user_id && p.pack_id == request.pack_id)
                    .map(|(at, _)| at.clone())
                    .collect();
                let mut released = 0;
                for at in theirs {
                    released += u64::from(self.release(&at, request.now));
                }
                released
            }
            Release::PackHolds { max } => {
                self.release_expired(Some(&request.pack_id), request.now, max)
                    .released
            }
        }
    }
}

impl Tables {
    /// A start's writes, each after its condition holds on the item it changes.
    fn apply_start(
        &mut self,
        request: &StartRequest,
        pack: &Pack,
        write: StartWrite,
    ) -> Result<Started, StartError> {
        let buys_at = (request.user_id.clone(), request.pack_id.clone());
        let shard = write.purchase.supply_shard;
        let share = ShareItem {
            pack,
            remaining: self.supply[pack.id.as_str()][shard as usize],
        };
        require("start: share", &write.share, Some(&share))?;
        let buys = self.buys.get(&buys_at).copied();
        require(
            "start: buyer's count",
            &write.buys,
            buys.as_ref().map(|b| b as &dyn Attributes),
        )?;
        require(
            "start: unpaid holds",
            &write.unpaid_condition,
            self.unpaid
                .get(request.user_id.as_str())
                .map(|h| h as &dyn Attributes),
        )?;
        if let Some(funds) = &write.funds {
            let cash = CashItem {
                tables: self,
                user_id: &request.user_id,
            };
            require("start: funds", funds, Some(&cash))?;
        }
        if let Some(entry) = &write.entry {
            self.take_admission(request, entry)?;
        }
        let holds = self.unpaid.entry(request.user_id.to_string()).or_default();
        holds.version = write.unpaid_version;
        let slot = write.slot as usize;
        if holds.slots.len() <= slot {
            holds.slots.resize(slot + 1, None);
        }
        holds.slots[slot] = Some(write.hold);
        self.move_units(&request.pack_id, shard, -1, request.now);
        let held = buys.unwrap_or_default().held + 1;
        self.buys.insert(
            buys_at,
            Buys {
                seq: write.seq,
                held,
            },
        );
        let purchase = write.purchase;
        self.purchases.insert(
            (request.user_id.clone(), purchase.id.clone()),
            purchase.clone(),
        );
        self.emit(purchase_reserved(&purchase), request.now);
        Ok(Started::Created(purchase))
    }
}

impl GetPurchase for MemoryStore {
    async fn get_purchase(
        &self,
        user_id: &UserId,
        purchase_id: &PurchaseId,
    ) -> Result<Option<Purchase>, StoreError> {
        Ok(self
            .read()
            .purchases
            .get(&(user_id.clone(), purchase_id.clone()))
            .cloned())
    }
}

impl CompletePurchase for MemoryStore {
    async fn complete_purchase(
        &self,
        user_id: &UserId,
        pack_id: &PackId,
        purchase_id: &PurchaseId,
        now: Timestamp,
    ) -> Result<Completed, CompleteError> {
        let mut tables = self.write();
        let at = (user_id.clone(), purchase_id.clone());
        let Some(purchase) = tables.purchases.get(&at).cloned() else {
            return Err(CompleteRefusal::NotFound.into());
        };
        let balance = tables.balance(user_id, &purchase.price.currency);
        let sale_ends_at = tables
            .packs
            .get(pack_id.as_str())
            .and_then(|s| s.pack.sale_ends_at);
        match check_complete(Some(&purchase), pack_id, sale_ends_at, balance, now)? {
            Completion::Replay => Ok(Completed::Repeated { purchase, balance }),
            Completion::Release => {
                tables.release(&at, now);
                Err(CompleteRefusal::Expired.into())
            }
            Completion::Pay => {
                let write = pay_write(&purchase, balance, now);
                require("complete: purchase", &write.payable, Some(&purchase))?;
                let cash = CashItem {
                    tables: &tables,
                    user_id,
                };
                require("complete: balance", &write.balance_as_read, Some(&cash))?;
                let currency = purchase.price.currency;
                tables
                    .balances
                    .insert((user_id.clone(), currency), write.balance);
                let debit = write.debit;
                tables.add_to_ledger(
                    user_id,
                    LedgerEntry::debit(purchase_id.clone(), debit.amount.clone(), now),
                );
                tables
                    .debits
                    .insert((user_id.clone(), purchase_id.clone()), debit);
                let paid = write.paid;
                tables.purchases.insert(at, paid.clone());
                *tables.sold.entry(paid.pack_id.to_string()).or_default() += 1;
                // Paid: no longer one of the fan's unpaid holds, if its slot is still this
                // purchase's.
                if let Some((slot, holds_it)) = write.slot
                    && let Some(holds) = tables.unpaid.get_mut(user_id.as_str())
                    && holds_it.holds(Some(&*holds))
                {
                    holds.slots[slot as usize] = None;
                    holds.version += 1;
                }
                tables.emit(purchase_completed(&paid), now);
                Ok(Completed::Paid {
                    purchase: paid,
                    balance: write.balance,
                })
            }
        }
    }
}

impl ReleaseHolds for MemoryStore {
    async fn release_holds(
        &self,
        pack_id: Option<&PackId>,
        now: Timestamp,
        max: usize,
    ) -> Result<Released, StoreError> {
        Ok(self.write().release_expired(pack_id, now, max))
    }
}

impl OpenPurchase for MemoryStore {
    async fn open_purchase(
        &self,
        user_id: &UserId,
        pack_id: &PackId,
        purchase_id: &PurchaseId,
        now: Timestamp,
    ) -> Result<Opened, OpenError> {
        let mut tables = self.write();
        let at = (user_id.clone(), purchase_id.clone());
        let purchase = tables.purchases.get(&at).cloned();
        let open_now = check_open(purchase.as_ref(), pack_id, now)?;
        let (Some(purchase), Some(stored)) = (purchase, tables.packs.get(pack_id.as_str())) else {
            return Err(StoreError::internal(format!("pack {pack_id} is not stored")).into());
        };
        let inputs = DrawInputs {
            seed: stored.seed.clone(),
            odds: stored.pack.odds.clone(),
            items: stored.pack.items.clone(),
            items_per_pack: stored.pack.items_per_pack,
            sale_ends_at: stored.pack.sale_ends_at,
            boards: stored.pack.boards(),
        };
        let fairness = inputs.fairness_at(now);
        if !open_now {
            return Ok(Opened {
                purchase,
                fairness,
                repeated: true,
            });
        }
        require("open", &conditions::openable(), Some(&purchase))?;
        let opened = opened(&purchase, &inputs, now)?;
        tables.purchases.insert(at, opened.clone());
        // The fan's stats, in the same write as the opening (as on DynamoDB).
        tables
            .stats
            .entry(user_id.clone())
            .or_default()
            .add_opening(opened.items.as_deref().unwrap_or_default());
        // And the fan's scores (as on DynamoDB: an opening worth nothing changes none).
        let points = self
            .weights
            .score_of(opened.items.as_deref().unwrap_or_default());
        tables.add_score(user_id, &inputs.boards, points, now);
        tables.emit(pack_opened(&opened), now);
        Ok(Opened {
            purchase: opened,
            fairness,
            repeated: false,
        })
    }
}
