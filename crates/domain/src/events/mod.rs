//! Events (issue 46; docs/events.md): every change the API makes, as the envelope its webhooks
//! and feeds carry. A change decides its [`NewEvent`]s; the store stamps each with its subject's
//! next `sequence` and writes it in the change's own write, so that neither exists without the
//! other.

mod data;
mod id;
pub mod money;

pub use data::*;
pub use id::EventId;

use serde::{Deserialize, Serialize};

use crate::timestamp::Timestamp;

/// The version of the envelope and of every type's `data` (a date, as Stripe's).
pub const API_VERSION: &str = "2026-11-29";

/// How long an event stays readable from the feeds (and so how long a replay reaches back).
pub const RETENTION_SECONDS: i64 = 30 * 24 * 3600;

/// What an event happened to: the order a consumer can check is per subject.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    utoipa::ToSchema,
    strum::IntoStaticStr,
    strum::EnumString,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum SubjectKind {
    /// A fan: everything that happens to their purchases, Cash, top-ups, places in lines,
    /// claims, profile and wallets.
    Fan,
    /// A pack: its sell-out and its line's draw.
    Pack,
}

/// An event's subject: its kind and id.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, utoipa::ToSchema,
)]
pub struct Subject {
    pub kind: SubjectKind,
    pub id: String,
}

impl Subject {
    pub fn fan(user_id: &crate::ids::UserId) -> Self {
        Self {
            kind: SubjectKind::Fan,
            id: user_id.as_str().to_owned(),
        }
    }

    pub fn pack(pack_id: &crate::ids::PackId) -> Self {
        Self {
            kind: SubjectKind::Pack,
            id: pack_id.as_str().to_owned(),
        }
    }
}

/// An event a change decided, before the store gives it its sequence.
#[derive(Debug, Clone, PartialEq)]
pub struct NewEvent {
    pub subject: Subject,
    pub data: EventData,
}

impl NewEvent {
    pub fn fan(user_id: &crate::ids::UserId, data: impl Into<EventData>) -> Self {
        Self {
            subject: Subject::fan(user_id),
            data: data.into(),
        }
    }

    pub fn pack(pack_id: &crate::ids::PackId, data: impl Into<EventData>) -> Self {
        Self {
            subject: Subject::pack(pack_id),
            data: data.into(),
        }
    }

    /// The event, the `sequence`-th of its subject, occurring at `at`, with a new id.
    pub fn stamp(self, sequence: u64, at: Timestamp) -> Event {
        Event {
            id: EventId::new(at),
            occurred_at: at,
            subject: self.subject,
            sequence,
            data: self.data,
        }
    }
}

/// An event as written, delivered and read: the envelope.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub id: EventId,
    pub occurred_at: Timestamp,
    pub subject: Subject,
    /// The subject's count of events so far, this one included: 1, 2, 3... with no gaps.
    pub sequence: u64,
    pub data: EventData,
}

/// The envelope as JSON: `{id, type, occurredAt, subject, sequence, apiVersion, data}`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Envelope<'a> {
    id: &'a EventId,
    #[serde(rename = "type")]
    event_type: EventType,
    occurred_at: String,
    subject: &'a Subject,
    sequence: u64,
    api_version: &'static str,
    data: &'a EventData,
}

impl Event {
    pub fn event_type(&self) -> EventType {
        self.data.event_type()
    }

    /// The envelope's bytes: what is stored, signed, sent and read back, never serialised again.
    pub fn body(&self) -> String {
        serde_json::to_string(&Envelope {
            id: &self.id,
            event_type: self.event_type(),
            occurred_at: self.occurred_at.rfc3339_millis(),
            subject: &self.subject,
            sequence: self.sequence,
            api_version: API_VERSION,
            data: &self.data,
        })
        .expect("an envelope serialises")
    }
}

/// The envelope's fields a store keeps beside its bytes, to key and filter it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEvent {
    pub id: EventId,
    pub event_type: EventType,
    pub occurred_at: Timestamp,
    pub subject: Subject,
    pub sequence: u64,
    /// The envelope's bytes, as [`Event::body`] wrote them.
    pub body: String,
}

impl From<&Event> for StoredEvent {
    fn from(event: &Event) -> Self {
        Self {
            id: event.id.clone(),
            event_type: event.event_type(),
            occurred_at: event.occurred_at,
            subject: event.subject.clone(),
            sequence: event.sequence,
            body: event.body(),
        }
    }
}

/// Stamps `events` (of one change, at `at`) with their sequences, given each subject's last
/// sequence (`last`, 0 for a subject without events): the one rule both stores follow.
pub fn stamp_all(
    events: Vec<NewEvent>,
    at: Timestamp,
    mut last: impl FnMut(&Subject) -> u64,
) -> Vec<Event> {
    let mut taken: std::collections::HashMap<Subject, u64> = std::collections::HashMap::new();
    events
        .into_iter()
        .map(|event| {
            let next = taken
                .entry(event.subject.clone())
                .or_insert_with(|| last(&event.subject));
            *next += 1;
            let sequence = *next;
            event.stamp(sequence, at)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{PackId, UserId, WalletId};

    fn removed(wallet: &str) -> WalletRemoved {
        WalletRemoved {
            wallet_id: WalletId::parse(wallet).unwrap(),
        }
    }

    #[test]
    fn one_change_numbers_each_subject_on_from_its_last() {
        let fan = UserId::parse("fan-1").unwrap();
        let pack = PackId::parse("p1").unwrap();
        let at = Timestamp::parse("2026-11-29T08:00:00Z").unwrap();
        let events = stamp_all(
            vec![
                NewEvent::fan(&fan, removed("w")),
                NewEvent::pack(
                    &pack,
                    PackSoldOut {
                        pack_id: pack.clone(),
                    },
                ),
                NewEvent::fan(&fan, removed("v")),
            ],
            at,
            |subject| {
                if subject.kind == SubjectKind::Fan {
                    41
                } else {
                    0
                }
            },
        );
        let sequences: Vec<u64> = events.iter().map(|e| e.sequence).collect();
        assert_eq!(sequences, [42, 1, 43]);
    }

    #[test]
    fn the_envelope_has_the_documented_fields_in_order() {
        let fan = UserId::parse("fan-1").unwrap();
        let at = Timestamp::parse("2026-11-29T08:00:00Z").unwrap();
        let event = NewEvent::fan(&fan, removed("w1")).stamp(7, at);
        let body = event.body();
        let expected = format!(
            r#"{{"id":"{}","type":"wallet.removed","occurredAt":"2026-11-29T08:00:00.000Z","subject":{{"kind":"fan","id":"fan-1"}},"sequence":7,"apiVersion":"{API_VERSION}","data":{{"walletId":"w1"}}}}"#,
            event.id
        );
        assert_eq!(body, expected);
    }
}
