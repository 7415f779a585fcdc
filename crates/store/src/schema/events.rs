//! The keys of events (docs/events.md):
//!
//! | entity | `PK` | `SK` | `GSI5PK` / `GSI5SK` |
//! |---|---|---|---|
//! | a subject's last sequence | `EVENTS#<kind>#<id>` | `SEQ` | - |
//! | an event (TTL 30 days) | `EVENTS#<kind>#<id>` | `E#<sequence:020>` | `EVENTS#<hour>#<shard>` / `<eventId>` |
//!
//! A subject's events are one partition read in sequence order (the fan's activity feed); every
//! event is also in `GSI5`, by the hour of its id and one of [`EVENT_SHARDS`] shares (from the
//! id's random bits): the busiest writer, a line's 20,000 joins a second, is 625 index writes a
//! second per key (a drop's 5,000 starts, 156), under the 1,000 a key takes; the operators' feed
//! reads one hour as that many bounded Queries.

use domain::events::{EventId, Subject};

pub const EVENTS_PREFIX: &str = "EVENTS#";
/// A subject's partition: its sequence counter and its events.
pub fn events_pk(subject: &Subject) -> String {
    let kind: &'static str = subject.kind.into();
    format!("{EVENTS_PREFIX}{kind}#{}", subject.id)
}
/// A subject's last sequence (`seq`, a number).
pub const EVENTS_SEQ_SK: &str = "SEQ";
pub const EVENTS_SEQ: &str = "seq";
pub const EVENT_SK_PREFIX: &str = "E#";
/// The `sequence`-th event of its subject: zero-padded, so key order is sequence order.
pub fn event_sk(sequence: u64) -> String {
    format!("{EVENT_SK_PREFIX}{sequence:020}")
}
/// An event's envelope, its bytes as sent (a string).
pub const EVENT_BODY: &str = "body";
/// An event's type (for the stream's filter and the dispatcher).
pub const EVENT_TYPE: &str = "type";

pub const GSI5: &str = "GSI5";
pub const GSI5_PK: &str = "GSI5PK";
pub const GSI5_SK: &str = "GSI5SK";
/// The shares of each hour of the events index.
pub const EVENT_SHARDS: u32 = 32;
/// The hour (Unix hours) an event id's time falls in.
pub fn event_hour(unix_millis: i64) -> i64 {
    unix_millis.div_euclid(3_600_000)
}
/// Share `shard` of hour `hour` of the events index.
pub fn events_time_pk(hour: i64, shard: u32) -> String {
    format!("{EVENTS_PREFIX}{hour}#{shard:02}")
}
/// The index key of event `id`.
pub fn event_time_pk(id: &EventId) -> String {
    events_time_pk(event_hour(id.unix_millis()), id.shard(EVENT_SHARDS))
}
