//! The queue keeper's steps in memory: each under the one write lock, its condition (the same
//! declaration DynamoDB gets, `store::queue_conditions`) checked against the item it changes.

use std::collections::HashMap;

use super::{MemoryStore, Tables};
use crate::ids::{PackId, UserId};
use crate::packs::draw::ServerSeed;
use crate::packs::Pack;
use crate::purchases::{StartRefusal, StartRequest};
use crate::queue::admission::{Allowance, WindowEnd, check_admitted, start_finishes, window_end};
use crate::queue::commit::{commit, order, order_pages};
use crate::queue::entry::{EntryStatus, QueueEntry};
use crate::queue::state::{
    Beacon, EntrantPage, OrderPage, OrderedEntry, QueueState, StoredStatus,
};
use crate::queue::terms::DEFAULT_PASS_SECONDS;
use crate::store::StoreError;
use crate::store::condition::{Attributes, Value, require};
use crate::store::purchase_conditions;
use crate::store::queue_conditions as conditions;
use crate::store::queue_keeper::{
    AdmissionView, AdmitQueue, CloseQueue, Closed, DrawQueue, Drawn, Ended, PendingQueues,
};
use crate::store::schema::{
    ENTRY_BOUGHT, ENTRY_PASS_EXPIRES_AT, ENTRY_POSITION, ENTRY_STATUS, PK,
    QUEUE_ADMITTED_THROUGH, QUEUE_OVER_THROUGH, QUEUE_STATUS,
};
use crate::timestamp::Timestamp;

/// A waiting room in memory: what DynamoDB keeps under `QUEUE#<packId>` (state and pages),
/// `QUEUE#<packId>#USER#<userId>` (entries) and `QSEED#<packId>`.
#[derive(Debug, Clone)]
pub(super) struct StoredQueue {
    pub state: QueueState,
    /// The keeper's mark (`overThrough`).
    pub over_through: u64,
    pub seed: ServerSeed,
    /// Entries by fan.
    pub entries: HashMap<UserId, QueueEntry>,
    pub entrant_pages: Vec<EntrantPage>,
    pub order_pages: Vec<OrderPage>,
}

/// The state item as DynamoDB holds it.
struct StateItem<'a>(&'a StoredQueue);

impl Attributes for StateItem<'_> {
    fn attribute(&self, path: &[&str]) -> Option<Value> {
        let queue = self.0;
        match path {
            [PK] => Some(Value::S(queue.state.pack_id.to_string())),
            [QUEUE_STATUS] => {
                let status: &'static str = queue.state.status.into();
                Some(status.into())
            }
            [QUEUE_ADMITTED_THROUGH] => Some(queue.state.admitted_through.into()),
            [QUEUE_OVER_THROUGH] => Some(queue.over_through.into()),
            _ => None,
        }
    }
}

impl Attributes for QueueEntry {
    fn attribute(&self, path: &[&str]) -> Option<Value> {
        match path {
            [PK] => Some(Value::S(self.user_id.to_string())),
            [ENTRY_STATUS] => Some(self.status.as_str().into()),
            [ENTRY_POSITION] => self.position.map(Into::into),
            [ENTRY_PASS_EXPIRES_AT] => self.pass_expires_at.map(|at| at.unix_nanos().into()),
            [ENTRY_BOUGHT] => Some(self.bought.into()),
            _ => None,
        }
    }
}

impl Tables {
    fn queue_mut(&mut self, pack_id: &PackId) -> Result<&mut StoredQueue, StoreError> {
        self.queues
            .get_mut(pack_id)
            .ok_or_else(|| StoreError::internal(format!("no queue for pack {pack_id}")))
    }
}

/// The drawn order's entry at `position` (from 1).
fn at_position(queue: &StoredQueue, position: u64) -> Option<&OrderedEntry> {
    let (page, index) = crate::queue::commit::order_page_of(position);
    queue.order_pages.get(page as usize)?.entries.get(index)
}

impl PendingQueues for MemoryStore {
    async fn pending_queues(&self) -> Result<Vec<QueueState>, StoreError> {
        let mut pending: Vec<QueueState> = self
            .read()
            .queues
            .values()
            .filter(|queue| queue.state.status != StoredStatus::Finished)
            .map(|queue| queue.state.clone())
            .collect();
        pending.sort_by(|a, b| (a.closes_at, &a.pack_id).cmp(&(b.closes_at, &b.pack_id)));
        Ok(pending)
    }
}

impl CloseQueue for MemoryStore {
    async fn close_queue(&self, pack_id: &PackId) -> Result<Option<Closed>, StoreError> {
        let mut tables = self.write();
        let queue = tables.queue_mut(pack_id)?;
        if !conditions::state_is(StoredStatus::Open).holds(Some(&StateItem(queue))) {
            return Ok(None);
        }
        let ids = queue.entries.values().map(|e| e.entry_id.clone()).collect();
        let commitment = commit(ids);
        queue.state.entrants = Some(commitment.entrants);
        queue.state.entrants_root = Some(commitment.root);
        queue.state.entrant_pages = Some(u32::try_from(commitment.pages.len()).unwrap_or(0));
        queue.state.status = StoredStatus::Closed;
        queue.entrant_pages = commitment.pages;
        Ok(Some(Closed {
            entrants: commitment.entrants,
            root: commitment.root,
        }))
    }
}

impl DrawQueue for MemoryStore {
    async fn draw_queue(
        &self,
        pack_id: &PackId,
        beacon: &Beacon,
    ) -> Result<Option<Drawn>, StoreError> {
        let mut tables = self.write();
        let queue = tables.queue_mut(pack_id)?;
        if !conditions::state_is(StoredStatus::Closed).holds(Some(&StateItem(queue))) {
            return Ok(None);
        }
        let seed = *queue.seed.as_bytes();
        crate::store::queue_keeper::check_seed(&queue.state, &seed)?;
        let entries = queue
            .entries
            .values()
            .map(|e| (e.entry_id.clone(), e.user_id.clone()))
            .collect();
        let drawn = order(&seed, &beacon.randomness, entries);
        for (position, ordered) in (1u64..).zip(&drawn) {
            if let Some(entry) = queue.entries.get_mut(&ordered.user_id) {
                entry.position = Some(position);
                entry.status = EntryStatus::Queued;
            }
        }
        queue.order_pages = order_pages(&drawn);
        queue.state.seed = Some(seed);
        queue.state.beacon = Some(beacon.clone());
        queue.state.status = StoredStatus::Drawn;
        Ok(Some(Drawn {
            entrants: drawn.len() as u64,
        }))
    }
}

impl AdmitQueue for MemoryStore {
    async fn admission_view(&self, pack_id: &PackId) -> Result<Option<AdmissionView>, StoreError> {
        let tables = self.read();
        let Some(queue) = tables.queues.get(pack_id) else {
            return Ok(None);
        };
        if queue.state.status != StoredStatus::Drawn {
            return Ok(None);
        }
        let Some(stored) = tables.packs.get(pack_id.as_str()) else {
            return Ok(None);
        };
        let pack = &stored.pack;
        let admitted = (queue.over_through + 1..=queue.state.admitted_through)
            .filter_map(|position| at_position(queue, position))
            .filter_map(|ordered| queue.entries.get(&ordered.user_id).cloned())
            .collect();
        let left = tables
            .supply
            .get(pack_id.as_str())
            .map_or(0, |shares| shares.iter().sum());
        let sold = tables.sold.get(pack_id.as_str()).copied().unwrap_or(0);
        Ok(Some(AdmissionView {
            state: queue.state.clone(),
            allowance: Allowance(pack.max_per_user),
            pass_seconds: pack
                .queue
                .map_or(DEFAULT_PASS_SECONDS, |terms| terms.pass_seconds),
            over_through: queue.over_through,
            admitted,
            left,
            all_sold: sold >= pack.total_supply,
        }))
    }

    async fn ordered(
        &self,
        pack_id: &PackId,
        from: u64,
        count: u64,
    ) -> Result<Vec<OrderedEntry>, StoreError> {
        let tables = self.read();
        let Some(queue) = tables.queues.get(pack_id) else {
            return Ok(Vec::new());
        };
        Ok((from..from + count)
            .map_while(|position| at_position(queue, position).cloned())
            .collect())
    }

    async fn claim_positions(
        &self,
        pack_id: &PackId,
        through: u64,
        to: u64,
    ) -> Result<bool, StoreError> {
        let mut tables = self.write();
        let queue = tables.queue_mut(pack_id)?;
        if !conditions::admitted_through_as_read(through).holds(Some(&StateItem(queue))) {
            return Ok(false);
        }
        queue.state.admitted_through = to;
        Ok(true)
    }

    async fn admit_entry(
        &self,
        pack_id: &PackId,
        user_id: &UserId,
        pass_expires_at: Timestamp,
    ) -> Result<bool, StoreError> {
        let mut tables = self.write();
        let queue = tables.queue_mut(pack_id)?;
        let Some(entry) = queue.entries.get_mut(user_id) else {
            return Ok(false);
        };
        if !conditions::entry_queued().holds(Some(&*entry)) {
            return Ok(false);
        }
        entry.status = EntryStatus::Admitted;
        entry.pass_expires_at = Some(pass_expires_at);
        queue.state.admitted += 1;
        Ok(true)
    }

    async fn end_window(
        &self,
        pack_id: &PackId,
        user_id: &UserId,
        now: Timestamp,
    ) -> Result<Option<WindowEnd>, StoreError> {
        let mut tables = self.write();
        let queue = tables.queue_mut(pack_id)?;
        let Some(entry) = queue.entries.get_mut(user_id) else {
            return Ok(None);
        };
        if !conditions::window_ran_out(now).holds(Some(&*entry)) {
            return Ok(None);
        }
        let end = window_end(entry.bought);
        entry.status = match end {
            WindowEnd::Lapsed => EntryStatus::Lapsed,
            WindowEnd::Done => EntryStatus::Done,
        };
        Ok(Some(end))
    }

    async fn advance_over_through(
        &self,
        pack_id: &PackId,
        through: u64,
        to: u64,
        ended: Ended,
    ) -> Result<bool, StoreError> {
        let mut tables = self.write();
        let queue = tables.queue_mut(pack_id)?;
        if !conditions::over_through_as_read(through).holds(Some(&StateItem(queue))) {
            return Ok(false);
        }
        queue.over_through = to;
        queue.state.lapsed += ended.lapsed;
        queue.state.bought += ended.bought;
        Ok(true)
    }

    async fn finish_queue(&self, pack_id: &PackId, admitted_through: u64) -> Result<u64, StoreError> {
        let mut tables = self.write();
        let queue = tables.queue_mut(pack_id)?;
        require(
            "finish: state",
            &conditions::state_is(StoredStatus::Drawn),
            Some(&StateItem(queue)),
        )?;
        let waiting: Vec<UserId> = queue
            .order_pages
            .iter()
            .flat_map(|page| page.entries.iter())
            .skip(usize::try_from(admitted_through).unwrap_or(usize::MAX))
            .map(|ordered| ordered.user_id.clone())
            .collect();
        let mut marked = 0;
        for user_id in waiting {
            if let Some(entry) = queue.entries.get_mut(&user_id)
                && conditions::entry_queued().holds(Some(&*entry))
            {
                entry.status = EntryStatus::SoldOut;
                marked += 1;
            }
        }
        queue.state.status = StoredStatus::Finished;
        Ok(marked)
    }
}

impl Tables {
    /// For a start on a queued pack: whether the fan's entry admits them now
    /// ([`check_admitted`]), and what they had bought (`None`: the pack has no queue).
    pub(super) fn admission(
        &self,
        pack: &Pack,
        request: &StartRequest,
    ) -> Result<Option<u32>, StartRefusal> {
        if pack.queue.is_none() {
            return Ok(None);
        }
        let entry = self
            .queues
            .get(&request.pack_id)
            .and_then(|queue| queue.entries.get(&request.user_id));
        check_admitted(entry, request.now).map_err(StartRefusal::NotAdmitted)?;
        Ok(entry.map(|entry| entry.bought))
    }

    /// The start's update of the fan's entry, on the condition DynamoDB's transaction puts on
    /// it: one more unit bought, and the admission over (`done`) at the pack's limit.
    pub(super) fn take_admission(
        &mut self,
        pack: &Pack,
        request: &StartRequest,
        bought: u32,
    ) -> Result<(), StoreError> {
        let entry = self
            .queue_mut(&request.pack_id)?
            .entries
            .get_mut(&request.user_id)
            .ok_or_else(|| StoreError::internal("start: the entry went away"))?;
        require(
            "start: queue entry",
            &purchase_conditions::entry_admits(request.now, bought),
            Some(&*entry),
        )?;
        entry.bought = bought + 1;
        if start_finishes(Allowance(pack.max_per_user), entry.bought) {
            entry.status = EntryStatus::Done;
        }
        Ok(())
    }
}
