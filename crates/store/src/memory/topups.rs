//! Cash top-ups in memory. A completion holds the one lock around the credit (the same routine
//! as every credit) and the top-up's change, as DynamoDB applies their transaction. A fan's
//! pending slots are kept as DynamoDB keeps them: a create takes one, a settlement frees it.

use super::{MemoryStore, Tables, newest_page};
use crate::StoreError;
use crate::cash::{CreditCashError, CreditOutcome};
use crate::condition::require;
use crate::topups::{
    CompletedTopUp, CreateTopUp, CreateTopUpError, CreatedTopUp, GetTopUp, ListMyTopUps,
    SetCheckout, SettleTopUp, slot_to_free, take_slot, top_up_list_key,
};
use domain::events::money::{top_up_completed, top_up_failed};
use domain::ids::{TopUpId, UserId};
use domain::purchases::mine::Page;
use domain::timestamp::Timestamp;
use domain::topups::pending::{PendingSlot, SlotHolder, TooManyPending};
use domain::topups::{Checkout, TopUp, TopUpStatus};

impl CreateTopUp for MemoryStore {
    async fn create_top_up(&self, top_up: &TopUp) -> Result<CreatedTopUp, CreateTopUpError> {
        let mut tables = self.write();
        if let Some(existing) = tables.top_ups.get(top_up.id.as_str()) {
            return Ok(CreatedTopUp::Existing(existing.clone()));
        }
        tables.take_pending_slot::<CreateTopUpError>(
            &top_up.user_id,
            top_up.pending_slot(),
            top_up.created_at,
        )?;
        tables.top_ups.insert(top_up.id.to_string(), top_up.clone());
        Ok(CreatedTopUp::New(top_up.clone()))
    }
}

impl SetCheckout for MemoryStore {
    async fn set_checkout(&self, id: &TopUpId, checkout: &Checkout) -> Result<TopUp, StoreError> {
        let mut tables = self.write();
        let top_up = tables
            .top_ups
            .get_mut(id.as_str())
            .ok_or_else(|| StoreError::internal("top-up: storing its checkout found no top-up"))?;
        if top_up.checkout.is_none() {
            top_up.checkout = Some(checkout.clone());
        }
        Ok(top_up.clone())
    }
}

impl GetTopUp for MemoryStore {
    async fn get_top_up(&self, id: &TopUpId) -> Result<Option<TopUp>, StoreError> {
        Ok(self.read().top_ups.get(id.as_str()).cloned())
    }
}

impl ListMyTopUps for MemoryStore {
    async fn list_my_top_ups(
        &self,
        user_id: &UserId,
        limit: usize,
        after: Option<&str>,
    ) -> Result<Page<TopUp>, StoreError> {
        let tables = self.read();
        let top_ups = tables
            .top_ups
            .values()
            .filter(|top_up| top_up.user_id == *user_id)
            .map(|top_up| (top_up_list_key(top_up), top_up));
        Ok(newest_page(top_ups, limit, after))
    }
}

impl Tables {
    /// `user_id`'s pending slots take `taken` (made at `now`), under the cap.
    pub(super) fn take_pending_slot<E: From<TooManyPending> + From<StoreError>>(
        &mut self,
        user_id: &UserId,
        taken: PendingSlot,
        now: Timestamp,
    ) -> Result<(), E> {
        let pending = self.pending_top_ups.entry(user_id.clone()).or_default();
        let taken = take_slot(taken, now, pending)?;
        require("pending slots", &taken.condition, Some(&*pending))?;
        let slot = taken.slot as usize;
        if pending.slots.len() <= slot {
            pending.slots.resize(slot + 1, None);
        }
        pending.slots[slot] = Some(taken.taken);
        pending.version = taken.version;
        Ok(())
    }

    /// Frees the pending slot of `user_id`'s that `holder` still holds (settled).
    pub(super) fn free_pending_slot(&mut self, user_id: &UserId, holder: &SlotHolder) {
        let Some(pending) = self.pending_top_ups.get_mut(user_id) else {
            return;
        };
        if let Some((slot, holds_it)) = slot_to_free(pending, holder)
            && holds_it.holds(Some(&*pending))
        {
            pending.slots[slot as usize] = None;
            pending.version += 1;
        }
    }
}

/// Whether `stored` may still be settled by an event of `session_id`.
fn settleable(stored: &TopUp, session_id: &str) -> bool {
    stored.status != TopUpStatus::Completed && stored.session_id() == Some(session_id)
}

impl SettleTopUp for MemoryStore {
    async fn complete_top_up(
        &self,
        top_up: &TopUp,
        at: Timestamp,
    ) -> Result<CompletedTopUp, CreditCashError> {
        let session_id = top_up
            .session_id()
            .ok_or_else(|| StoreError::internal("complete: a top-up without a session"))?;
        let mut tables = self.write();
        let still_open = tables
            .top_ups
            .get(top_up.id.as_str())
            .is_some_and(|stored| settleable(stored, session_id));
        if !still_open {
            return Ok(CompletedTopUp::AlreadyCompleted);
        }
        let balance = match tables.credit(&top_up.credit(), at)? {
            CreditOutcome::Credited { balance } => balance,
            CreditOutcome::AlreadyCredited => return Ok(CompletedTopUp::AlreadyCompleted),
        };
        if let Some(stored) = tables.top_ups.get_mut(top_up.id.as_str()) {
            stored.status = TopUpStatus::Completed;
            stored.completed_at = Some(at);
        }
        tables.free_pending_slot(&top_up.user_id, &SlotHolder::TopUp(top_up.id.clone()));
        tables.emit(top_up_completed(top_up), at);
        Ok(CompletedTopUp::Credited { balance })
    }

    async fn close_top_up(
        &self,
        top_up: &TopUp,
        session_id: &str,
        status: TopUpStatus,
        at: Timestamp,
    ) -> Result<bool, StoreError> {
        let mut tables = self.write();
        match tables.top_ups.get_mut(top_up.id.as_str()) {
            Some(stored) if settleable(stored, session_id) && stored.status != status => {
                stored.status = status;
                tables.free_pending_slot(&top_up.user_id, &SlotHolder::TopUp(top_up.id.clone()));
                tables.emit(top_up_failed(top_up, status), at);
                Ok(true)
            }
            _ => Ok(false),
        }
    }
}
