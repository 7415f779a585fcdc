//! Events in memory: written by each change under its own lock ([`Tables::emit`]), as the
//! DynamoDB store writes them in the change's transaction; read by the feeds, and in insertion
//! order by local-api's delivery (what DynamoDB Streams is to the deployed stack).

use std::collections::{BTreeMap, HashMap};

use super::{MemoryStore, Tables};
use crate::StoreError;
use crate::events::{EventCursor, EventPage, GetEvent, ListEvents, ListSubjectEvents};
use domain::events::{EventId, NewEvent, StoredEvent, Subject, stamp_all};
use domain::timestamp::Timestamp;

/// Every event written, by subject and sequence, with their ids and insertion order.
#[derive(Default)]
pub(crate) struct Events {
    last: HashMap<Subject, u64>,
    by_subject: BTreeMap<(Subject, u64), StoredEvent>,
    by_id: BTreeMap<EventId, (Subject, u64)>,
    journal: Vec<(Subject, u64)>,
}

impl Tables {
    /// Writes the `events` of a change made at `at`, each its subject's next: called under the
    /// change's lock once the change is decided, so neither is written without the other.
    pub(crate) fn emit(&mut self, events: Vec<NewEvent>, at: Timestamp) {
        if events.is_empty() {
            return;
        }
        let log = self.table_mut::<Events>();
        for event in stamp_all(events, at, |subject| {
            log.last.get(subject).copied().unwrap_or(0)
        }) {
            let stored = StoredEvent::from(&event);
            let key = (event.subject.clone(), event.sequence);
            log.last.insert(event.subject, event.sequence);
            log.by_id.insert(stored.id.clone(), key.clone());
            log.journal.push(key.clone());
            log.by_subject.insert(key, stored);
        }
    }
}

impl MemoryStore {
    /// The events written since the `from`-th (in write order) and the position after them:
    /// what local-api's delivery follows, as the dispatcher follows the table's stream.
    pub fn journal(&self, from: usize) -> (Vec<StoredEvent>, usize) {
        let tables = self.read();
        let Some(log) = tables.table::<Events>() else {
            return (Vec::new(), from);
        };
        let events = log
            .journal
            .iter()
            .skip(from)
            .filter_map(|key| log.by_subject.get(key).cloned())
            .collect();
        (events, log.journal.len())
    }
}

impl ListSubjectEvents for MemoryStore {
    async fn subject_events(
        &self,
        subject: &Subject,
        after: u64,
        limit: usize,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        let tables = self.read();
        let Some(log) = tables.table::<Events>() else {
            return Ok(Vec::new());
        };
        let from = (subject.clone(), after.saturating_add(1));
        Ok(log
            .by_subject
            .range(from..)
            .take_while(|((of, _), _)| of == subject)
            .take(limit)
            .map(|(_, event)| event.clone())
            .collect())
    }
}

impl ListEvents for MemoryStore {
    async fn events_from(
        &self,
        from: &EventCursor,
        limit: usize,
        now: Timestamp,
    ) -> Result<EventPage, StoreError> {
        let tables = self.read();
        let hour = from.hour();
        let events: Vec<StoredEvent> = tables.table::<Events>().map_or_else(Vec::new, |log| {
            log.by_id
                .iter()
                .filter(|(id, _)| from.admits(id))
                .take_while(|(id, _)| crate::schema::event_hour(id.unix_millis()) == hour)
                .take(limit)
                .filter_map(|(_, key)| log.by_subject.get(key).cloned())
                .collect()
        });
        let next = from.next(&events, events.len() >= limit, now);
        Ok(EventPage { events, next })
    }
}

impl GetEvent for MemoryStore {
    async fn get_event(&self, id: &EventId) -> Result<Option<StoredEvent>, StoreError> {
        let tables = self.read();
        Ok(tables.table::<Events>().and_then(|log| {
            log.by_id
                .get(id)
                .and_then(|key| log.by_subject.get(key).cloned())
        }))
    }
}
