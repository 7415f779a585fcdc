//! What the stores' event log holds, read back and checked the same way by every test: a
//! subject's events as their envelopes, in sequence order, with no gap from 1 and each stored
//! field agreeing with its envelope's bytes.

use domain::events::{StoredEvent, Subject};
use domain::ids::{PackId, UserId};
use serde_json::Value;
use store::events::ListSubjectEvents;

/// Every event of `subject`, as JSON envelopes, checked (module doc).
pub async fn of_subject(store: &impl ListSubjectEvents, subject: &Subject) -> Vec<Value> {
    let mut events: Vec<StoredEvent> = Vec::new();
    loop {
        let after = events.last().map_or(0, |event| event.sequence);
        let page = store
            .subject_events(subject, after, store::events::MAX_PAGE)
            .await
            .expect("the subject's events read");
        if page.is_empty() {
            break;
        }
        events.extend(page);
    }
    events
        .iter()
        .enumerate()
        .map(|(at, event)| {
            let envelope: Value = serde_json::from_str(&event.body).expect("a body is JSON");
            let expected = u64::try_from(at + 1).unwrap();
            assert_eq!(
                event.sequence, expected,
                "sequences run 1, 2, 3... with no gap"
            );
            assert_eq!(envelope["sequence"], expected);
            assert_eq!(envelope["id"], event.id.as_str());
            assert_eq!(envelope["type"], event.event_type.as_str());
            assert_eq!(envelope["subject"]["id"], subject.id.as_str());
            assert_eq!(
                envelope["subject"]["kind"],
                <&'static str>::from(subject.kind)
            );
            assert_eq!(envelope["apiVersion"], domain::events::API_VERSION);
            envelope
        })
        .collect()
}

/// Every event of fan `fan` (module doc).
pub async fn of_fan(store: &impl ListSubjectEvents, fan: &UserId) -> Vec<Value> {
    of_subject(store, &Subject::fan(fan)).await
}

/// Every event of pack `pack` (module doc).
pub async fn of_pack(store: &impl ListSubjectEvents, pack: &PackId) -> Vec<Value> {
    of_subject(store, &Subject::pack(pack)).await
}

/// The types of `events`, in order.
pub fn types(events: &[Value]) -> Vec<&str> {
    events
        .iter()
        .map(|event| event["type"].as_str().expect("a type"))
        .collect()
}

/// How many distinct values `events` have in their `data`'s `field`.
pub fn distinct(events: &[Value], field: &str) -> usize {
    let mut values: Vec<String> = events
        .iter()
        .map(|event| event["data"][field].to_string())
        .collect();
    values.sort_unstable();
    values.dedup();
    values.len()
}
