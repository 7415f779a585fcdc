//! The queue keeper's steps in memory: each under the one write lock, its condition (the same
//! declaration DynamoDB gets, `store::queue_conditions`) checked against the item it changes.

use super::queue::{EntryItem, Line};
use super::{MemoryStore, Tables};
use crate::StoreError;
use crate::condition::{Attributes, Value, require};
use crate::purchases::decide::EntryWrite;
use crate::queue::Settled;
use crate::queue_conditions as conditions;
use crate::queue_keeper::{
    AdmissionView, AdmitQueue, CloseQueue, Closed, DrawQueue, Drawn, Ended, PendingQueues, decide,
};
use crate::schema::{PK, QUEUE_ADMITTED_THROUGH, QUEUE_OVER_THROUGH, QUEUE_STATUS, queue_pk};
use domain::ids::{PackId, UserId};
use domain::packs::Pack;
use domain::purchases::{StartRefusal, StartRequest};
use domain::queue::admission::{WindowEnd, start_admission};
use domain::queue::commit::order_page_of;
use domain::queue::entry::{EntryStatus, QueueEntry};
use domain::queue::events::Admit;
use domain::queue::state::{Beacon, OrderedEntry, QueueState, StoredStatus};
use domain::timestamp::Timestamp;

/// The state item as DynamoDB holds it, with the keeper's mark.
struct StateItem<'a>(&'a Line, u64);

impl Attributes for StateItem<'_> {
    fn attribute(&self, path: &[&str]) -> Option<Value> {
        let StateItem(line, over_through) = self;
        match path {
            [PK] => Some(Value::S(queue_pk(&line.state.pack_id))),
            [QUEUE_STATUS] => {
                let status: &'static str = line.state.status.into();
                Some(status.into())
            }
            [QUEUE_ADMITTED_THROUGH] => Some(line.state.admitted_through.into()),
            [QUEUE_OVER_THROUGH] => Some((*over_through).into()),
            _ => None,
        }
    }
}

impl Tables {
    fn line_mut(&mut self, pack_id: &PackId) -> Result<&mut Line, StoreError> {
        self.queues
            .get_mut(pack_id)
            .ok_or_else(|| StoreError::internal(format!("no queue for pack {pack_id}")))
    }

    /// The state item of `pack_id`'s line, for a condition.
    fn state_item(&self, pack_id: &PackId) -> Result<StateItem<'_>, StoreError> {
        let line = self
            .queues
            .get(pack_id)
            .ok_or_else(|| StoreError::internal(format!("no queue for pack {pack_id}")))?;
        let over = self.queue_marks.get(pack_id).copied().unwrap_or(0);
        Ok(StateItem(line, over))
    }

    pub(super) fn entry_mut(
        &mut self,
        pack_id: &PackId,
        user_id: &UserId,
    ) -> Option<&mut QueueEntry> {
        self.queue_entries
            .get_mut(&(pack_id.clone(), user_id.clone()))
    }

    /// The entries of `pack_id`'s line.
    fn entries_of<'a>(&'a self, pack_id: &'a PackId) -> impl Iterator<Item = &'a QueueEntry> {
        self.queue_entries
            .iter()
            .filter(move |((pack, _), _)| pack == pack_id)
            .map(|(_, entry)| entry)
    }
}

/// The drawn order's entry at `position` (from 1).
fn at_position(line: &Line, position: u64) -> Option<&OrderedEntry> {
    let (page, index) = order_page_of(position);
    line.order_pages.get(&page)?.entries.get(index)
}

impl PendingQueues for MemoryStore {
    async fn pending_queues(&self) -> Result<Vec<QueueState>, StoreError> {
        let mut pending: Vec<QueueState> = self
            .read()
            .queues
            .values()
            .filter(|line| line.state.status != StoredStatus::Finished)
            .map(|line| line.state.clone())
            .collect();
        pending.sort_by(|a, b| (a.closes_at, &a.pack_id).cmp(&(b.closes_at, &b.pack_id)));
        Ok(pending)
    }
}

impl CloseQueue for MemoryStore {
    async fn close_queue(
        &self,
        pack_id: &PackId,
        now: Timestamp,
    ) -> Result<Option<Closed>, StoreError> {
        let mut tables = self.write();
        if !conditions::state_is(StoredStatus::Open).holds(Some(&tables.state_item(pack_id)?)) {
            return Ok(None);
        }
        let ids = tables
            .entries_of(pack_id)
            .map(|entry| entry.entry_id.clone())
            .collect();
        let line = tables.line_mut(pack_id)?;
        let (commitment, closed) = decide::close(&mut line.state, ids, now);
        line.entrant_pages = commitment
            .pages
            .into_iter()
            .map(|page| (page.page, page))
            .collect();
        line.entrants_index = Some(commitment.index);
        Ok(Some(closed))
    }
}

impl DrawQueue for MemoryStore {
    async fn draw_queue(
        &self,
        pack_id: &PackId,
        beacon: &Beacon,
        now: Timestamp,
    ) -> Result<Option<Drawn>, StoreError> {
        // One lock around the whole draw: it is its own lease.
        let mut tables = self.write();
        if !conditions::state_is(StoredStatus::Closed).holds(Some(&tables.state_item(pack_id)?)) {
            return Ok(None);
        }
        let entries = tables
            .entries_of(pack_id)
            .map(|e| (e.entry_id.clone(), e.user_id.clone()))
            .collect();
        let line = tables.line_mut(pack_id)?;
        let seed = *line.seed.as_bytes();
        let mut state = line.state.clone();
        let draw = decide::draw(&mut state, seed, beacon, entries)?;
        for ((pack, _), entry) in tables.queue_entries.iter_mut() {
            if pack == pack_id {
                draw.place(entry);
            }
        }
        let line = tables.line_mut(pack_id)?;
        line.state = state;
        line.order_pages = draw
            .pages
            .iter()
            .map(|page| (page.page, page.clone()))
            .collect();
        let drawn = draw.drawn();
        tables.emit(domain::queue::events::drawn(pack_id, drawn.entrants), now);
        Ok(Some(drawn))
    }
}

impl AdmitQueue for MemoryStore {
    async fn admission_view(&self, pack_id: &PackId) -> Result<Option<AdmissionView>, StoreError> {
        let tables = self.read();
        let (Some(line), Some(stored)) = (
            tables.queues.get(pack_id),
            tables.packs.get(pack_id.as_str()),
        ) else {
            return Ok(None);
        };
        if line.state.status != StoredStatus::Drawn {
            return Ok(None);
        }
        let pack = &stored.pack;
        let over_through = tables.queue_marks.get(pack_id).copied().unwrap_or(0);
        let admitted = (over_through + 1..=line.state.admitted_through)
            .filter_map(|position| at_position(line, position))
            .filter_map(|ordered| {
                tables
                    .queue_entries
                    .get(&(pack_id.clone(), ordered.user_id.clone()))
                    .cloned()
            })
            .collect();
        let Settled { sold, left } = tables.settled(pack_id);
        Ok(Some(AdmissionView::of(
            pack,
            line.state.clone(),
            (over_through, admitted),
            (left, sold),
        )))
    }

    async fn ordered(
        &self,
        pack_id: &PackId,
        from: u64,
        count: u64,
    ) -> Result<Vec<OrderedEntry>, StoreError> {
        let tables = self.read();
        let Some(line) = tables.queues.get(pack_id) else {
            return Ok(Vec::new());
        };
        Ok((from..from + count)
            .map_while(|position| at_position(line, position).cloned())
            .collect())
    }

    async fn claim_positions(
        &self,
        pack_id: &PackId,
        through: u64,
        to: u64,
        now: Timestamp,
    ) -> Result<bool, StoreError> {
        let mut tables = self.write();
        let state = tables.state_item(pack_id)?;
        if !conditions::admitted_through_as_read(through).holds(Some(&state)) {
            return Ok(false);
        }
        let state = &mut tables.line_mut(pack_id)?.state;
        state.admitted_through = to;
        state.last_wave_at = Some(now);
        Ok(true)
    }

    async fn admit_entry(&self, pack_id: &PackId, admit: &Admit) -> Result<bool, StoreError> {
        let mut tables = self.write();
        let Some(entry) = tables.entry_mut(pack_id, &admit.user_id) else {
            return Ok(false);
        };
        if !conditions::entry_queued().holds(Some(&EntryItem(entry))) {
            return Ok(false);
        }
        entry.status = EntryStatus::Admitted;
        entry.pass_expires_at = Some(admit.until);
        tables.emit(admit.events(pack_id), admit.at);
        Ok(true)
    }

    async fn end_window(
        &self,
        read: &QueueEntry,
        now: Timestamp,
    ) -> Result<Option<WindowEnd>, StoreError> {
        let mut tables = self.write();
        let Some(entry) = tables.entry_mut(&read.pack_id, &read.user_id) else {
            return Ok(None);
        };
        if !conditions::window_ran_out(now, read.bought).holds(Some(&EntryItem(entry))) {
            return Ok(None);
        }
        let (end, status) = decide::end_of_window(entry.bought);
        entry.status = status;
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
        let state = tables.state_item(pack_id)?;
        if !conditions::over_through_as_read(through).holds(Some(&state)) {
            return Ok(false);
        }
        tables.queue_marks.insert(pack_id.clone(), to);
        let line = tables.line_mut(pack_id)?;
        line.state.lapsed += ended.lapsed;
        line.state.bought += ended.bought;
        Ok(true)
    }

    async fn finish_queue(
        &self,
        pack_id: &PackId,
        admitted_through: u64,
    ) -> Result<u64, StoreError> {
        let mut tables = self.write();
        let state = tables.state_item(pack_id)?;
        if !conditions::finishing(admitted_through).holds(Some(&state)) {
            return Ok(0);
        }
        tables.line_mut(pack_id)?.state.status = StoredStatus::Finished;
        tables.mark_line_finished(pack_id);
        let mut marked = 0;
        for ((pack, _), entry) in tables.queue_entries.iter_mut() {
            if pack == pack_id && decide::sold_out_at_finish(entry, admitted_through) {
                entry.status = EntryStatus::SoldOut;
                marked += 1;
            }
        }
        Ok(marked)
    }
}

impl Tables {
    /// For a start on `pack`: what it asks of the line ([`start_admission`]: `None` for no
    /// queue or after the line; else what the fan had bought, if their entry admits them now).
    pub(super) fn admission(
        &self,
        pack: &Pack,
        request: &StartRequest,
    ) -> Result<Option<u32>, StartRefusal> {
        let entry = self
            .queue_entries
            .get(&(request.pack_id.clone(), request.user_id.clone()));
        let finished = self
            .queues
            .get(&request.pack_id)
            .is_some_and(|line| line.state.status == StoredStatus::Finished);
        start_admission(pack.queue.is_some(), entry, finished, request.now)
            .map_err(StartRefusal::NotAdmitted)
    }

    /// The start's update of the fan's entry, after its condition holds on it.
    pub(super) fn take_admission(
        &mut self,
        request: &StartRequest,
        write: &EntryWrite,
    ) -> Result<(), StoreError> {
        let entry = self
            .entry_mut(&request.pack_id, &request.user_id)
            .ok_or_else(|| StoreError::internal("start: the entry went away"))?;
        require(
            "start: queue entry",
            &write.condition,
            Some(&EntryItem(entry)),
        )?;
        entry.bought = write.bought;
        if let Some(status) = write.done {
            entry.status = status;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::purchase_conditions;
    use domain::ids::EntryId;

    /// The start's condition on the fan's entry, as both stores check it: admitted, the window
    /// open at the start's `now`, `bought` as read.
    #[test]
    fn a_start_is_conditioned_on_an_admitted_entry_with_its_window_open() {
        let now = Timestamp::parse("2026-12-01T18:00:00Z").unwrap();
        let entry = |status, end: i64, bought| QueueEntry {
            pack_id: PackId::parse("drop").unwrap(),
            entry_id: EntryId::parse("0123456789abcdef0123456789abcdef").unwrap(),
            user_id: UserId::parse("fan").unwrap(),
            joined_at: now,
            receipt: String::new(),
            status,
            position: Some(1),
            pass_expires_at: now.plus_seconds(end),
            bought,
        };
        let admits = |entry: &QueueEntry, bought| {
            purchase_conditions::entry_admits(now, bought).holds(Some(&EntryItem(entry)))
        };
        assert!(admits(&entry(EntryStatus::Admitted, 1, 0), 0));
        assert!(admits(&entry(EntryStatus::Admitted, 1, 1), 1));
        assert!(
            !admits(&entry(EntryStatus::Admitted, 0, 0), 0),
            "window closed"
        );
        assert!(!admits(&entry(EntryStatus::Lapsed, 1, 0), 0), "lapsed");
        assert!(
            !admits(&entry(EntryStatus::Queued, 1, 0), 0),
            "not admitted"
        );
        assert!(!admits(&entry(EntryStatus::Done, 1, 1), 1), "done");
        assert!(
            !admits(&entry(EntryStatus::Admitted, 1, 1), 0),
            "bought since read"
        );
    }
}
