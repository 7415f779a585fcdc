//! Events (docs/events.md): written by each change in its own write (the DynamoDB store adds
//! them to the change's transaction, the in-memory store under the change's lock), read back by
//! the feeds. No trait writes an event alone: there is no change without its event.

use std::future::Future;

use crate::StoreError;
use domain::events::{EventId, StoredEvent, Subject};

/// The most events a feed's page holds.
pub const MAX_PAGE: usize = 100;

/// A subject's events after its `after`-th, in sequence order, at most `limit`: the fan's
/// activity feed (one Query of the subject's partition).
pub trait ListSubjectEvents: Send + Sync {
    fn subject_events(
        &self,
        subject: &Subject,
        after: u64,
        limit: usize,
    ) -> impl Future<Output = Result<Vec<StoredEvent>, StoreError>> + Send;
}

/// Every subject's events from `from` (ids sort by time), in id order, at most `limit`, all of
/// one hour (32 bounded Queries on DynamoDB): the operators' feed and replays. A page short of
/// `limit` ended its hour: its `next` starts the next hour, or (the hour not over at `now`)
/// stays after the page's last event.
pub trait ListEvents: Send + Sync {
    fn events_from(
        &self,
        from: &EventCursor,
        limit: usize,
        now: domain::timestamp::Timestamp,
    ) -> impl Future<Output = Result<EventPage, StoreError>> + Send;
}

/// Where a read of the events by time starts: after an event, or at an instant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventCursor {
    After(EventId),
    Since(domain::timestamp::Timestamp),
}

impl EventCursor {
    /// The hour (of the events index) the cursor is in.
    pub fn hour(&self) -> i64 {
        crate::schema::event_hour(match self {
            Self::After(id) => id.unix_millis(),
            Self::Since(at) => at.unix_millis(),
        })
    }

    /// Whether event `id` comes after the cursor.
    pub fn admits(&self, id: &EventId) -> bool {
        match self {
            Self::After(after) => id > after,
            Self::Since(at) => *id >= EventId::floor(*at),
        }
    }

    /// The cursor after a page of `events` read from `self`, `full` when it held as many as
    /// asked: both stores' rule.
    pub fn next(
        &self,
        events: &[StoredEvent],
        full: bool,
        now: domain::timestamp::Timestamp,
    ) -> Self {
        let hour = self.hour();
        if !full && hour < crate::schema::event_hour(now.unix_millis()) {
            let start = domain::timestamp::Timestamp::from_unix_nanos(
                i128::from(hour + 1) * 3_600 * 1_000_000_000,
            );
            if let Some(start) = start {
                return Self::Since(start);
            }
        }
        events
            .last()
            .map_or_else(|| self.clone(), |last| Self::After(last.id.clone()))
    }
}

/// A page of the events by time, and where the next starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventPage {
    pub events: Vec<StoredEvent>,
    /// The cursor of the next page: after the page's last event, or (an hour read without
    /// events) the next hour's start.
    pub next: EventCursor,
}

/// One event by its id.
pub trait GetEvent: Send + Sync {
    fn get_event(
        &self,
        id: &EventId,
    ) -> impl Future<Output = Result<Option<StoredEvent>, StoreError>> + Send;
}

/// Every event read.
pub trait EventStore: ListSubjectEvents + ListEvents + GetEvent {}
impl<S: ListSubjectEvents + ListEvents + GetEvent> EventStore for S {}
