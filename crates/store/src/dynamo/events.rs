//! Events on DynamoDB (docs/events.md): a change's transaction carries its events
//! ([`Transaction::emit`](super::transaction::Transaction::emit)); running it reads each
//! subject's last sequence, and adds, per subject, its counter's update on the condition that it
//! is still that sequence, and a put of each event. A sequence taken meanwhile by another change
//! of the same subject fails only that condition: the sequences are read again and the same
//! change tried again, its own conditions unchanged. The feeds are Queries.

use std::collections::HashMap;

use aws_sdk_dynamodb::types::{AttributeValue, TransactWriteItem};

use super::transaction::{put_new, update};
use super::{DynamoStore, Item, classify, key, number, s};
use crate::StoreError;
use crate::condition::Condition;
use crate::events::{EventCursor, EventPage, GetEvent, ListEvents, ListSubjectEvents};
use crate::schema::{
    ENTITY, EVENT_BODY, EVENT_SHARDS, EVENT_SK_PREFIX, EVENT_TYPE, EVENTS_SEQ, EVENTS_SEQ_SK, GSI5,
    GSI5_PK, GSI5_SK, PK, SK, TTL, event_sk, event_time_pk, events_pk, events_time_pk,
};
use domain::events::{Event, EventId, RETENTION_SECONDS, StoredEvent, Subject};
use domain::timestamp::Timestamp;

/// The version of the event items (and of a subject's `SEQ`).
pub(crate) const EVENT_VERSION: u32 = 1;

/// The entity of an event item: what the stream's filter lets through.
pub const EVENT_ENTITY: &str = "event";

impl DynamoStore {
    /// Each of `subjects`' last sequence (0 for one without events), in one strongly consistent
    /// `BatchGetItem`.
    pub(crate) async fn last_sequences(
        &self,
        subjects: &[Subject],
    ) -> Result<HashMap<Subject, u64>, StoreError> {
        let keys: Vec<Item> = subjects
            .iter()
            .map(|subject| key(events_pk(subject), EVENTS_SEQ_SK))
            .collect();
        let found = self.batch_get_slice(&keys, true).await?;
        subjects
            .iter()
            .zip(found)
            .map(|(subject, item)| {
                let last = item
                    .as_ref()
                    .and_then(|item| item.get(EVENTS_SEQ))
                    .map(|value| read_number(value, "an events counter"))
                    .transpose()?
                    .unwrap_or(0);
                Ok((subject.clone(), last))
            })
            .collect()
    }

    /// The actions writing `events` (stamped from `last`): per subject its counter, set to its
    /// last event's sequence on the condition that it still holds `last`, and each event's put.
    pub(crate) fn event_actions(
        &self,
        events: &[Event],
        last: &HashMap<Subject, u64>,
    ) -> Result<Vec<TransactWriteItem>, StoreError> {
        let mut newest: Vec<(&Subject, u64)> = Vec::new();
        for event in events {
            match newest
                .iter_mut()
                .find(|(subject, _)| **subject == event.subject)
            {
                Some(entry) => entry.1 = entry.1.max(event.sequence),
                None => newest.push((&event.subject, event.sequence)),
            }
        }
        let mut actions = Vec::with_capacity(newest.len() + events.len());
        for (subject, sequence) in newest {
            let read = last.get(subject).copied().unwrap_or(0);
            actions.push(update(
                &self.table,
                key(events_pk(subject), EVENTS_SEQ_SK),
                "SET #seq = :seq, #entity = :entity, #sv = :sv",
                &Condition::version_as_read(EVENTS_SEQ, read),
                &[
                    ("#seq", EVENTS_SEQ),
                    ("#entity", ENTITY),
                    ("#sv", super::records::SCHEMA_VERSION),
                ],
                vec![
                    (":seq", number(sequence)),
                    (":entity", s("events")),
                    (":sv", number(EVENT_VERSION)),
                ],
            )?);
        }
        for event in events {
            actions.push(put_new(&self.table, event_item(event))?);
        }
        Ok(actions)
    }
}

/// An event's item: its keys, its index keys, its envelope's bytes and its TTL.
fn event_item(event: &Event) -> Item {
    let expires = event
        .occurred_at
        .unix_millis()
        .div_euclid(1000)
        .saturating_add(RETENTION_SECONDS);
    let kind: &'static str = event.subject.kind.into();
    HashMap::from([
        (PK.to_owned(), s(events_pk(&event.subject))),
        (SK.to_owned(), s(event_sk(event.sequence))),
        (GSI5_PK.to_owned(), s(event_time_pk(&event.id))),
        (GSI5_SK.to_owned(), s(event.id.as_str())),
        (ENTITY.to_owned(), s(EVENT_ENTITY)),
        (
            super::records::SCHEMA_VERSION.to_owned(),
            number(EVENT_VERSION),
        ),
        ("id".to_owned(), s(event.id.as_str())),
        (EVENT_TYPE.to_owned(), s(event.event_type().as_str())),
        ("subjectKind".to_owned(), s(kind)),
        ("subjectId".to_owned(), s(event.subject.id.clone())),
        ("sequence".to_owned(), number(event.sequence)),
        ("occurredAt".to_owned(), s(event.occurred_at.to_string())),
        (EVENT_BODY.to_owned(), s(event.body())),
        (TTL.to_owned(), number(expires)),
    ])
}

fn read_number(value: &AttributeValue, what: &str) -> Result<u64, StoreError> {
    value
        .as_n()
        .ok()
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| StoreError::internal(format!("{what} is not a number")))
}

fn read_text<'a>(item: &'a Item, name: &str) -> Result<&'a str, StoreError> {
    item.get(name)
        .and_then(|value| value.as_s().ok())
        .map(String::as_str)
        .ok_or_else(|| StoreError::internal(format!("event item: no `{name}`")))
}

/// An event from its item (as [`event_item`] wrote it, or a stream's image of it).
pub fn event_from_item(item: &Item) -> Result<StoredEvent, StoreError> {
    super::records::check_version(item, "event", EVENT_VERSION)?;
    let corrupt = |what: &str| StoreError::internal(format!("event item: bad `{what}`"));
    Ok(StoredEvent {
        id: EventId::parse(read_text(item, "id")?).map_err(|_| corrupt("id"))?,
        event_type: read_text(item, EVENT_TYPE)?
            .parse()
            .map_err(|_| corrupt(EVENT_TYPE))?,
        occurred_at: Timestamp::parse(read_text(item, "occurredAt")?)
            .map_err(|_| corrupt("occurredAt"))?,
        subject: Subject {
            kind: read_text(item, "subjectKind")?
                .parse()
                .map_err(|_| corrupt("subjectKind"))?,
            id: read_text(item, "subjectId")?.to_owned(),
        },
        sequence: read_number(
            item.get("sequence").ok_or_else(|| corrupt("sequence"))?,
            "an event's sequence",
        )?,
        body: read_text(item, EVENT_BODY)?.to_owned(),
    })
}

impl ListSubjectEvents for DynamoStore {
    async fn subject_events(
        &self,
        subject: &Subject,
        after: u64,
        limit: usize,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        let output = self
            .client
            .query()
            .table_name(&self.table)
            .key_condition_expression("#pk = :pk AND #sk BETWEEN :from AND :to")
            .expression_attribute_names("#pk", PK)
            .expression_attribute_names("#sk", SK)
            .expression_attribute_values(":pk", s(events_pk(subject)))
            .expression_attribute_values(":from", s(event_sk(after.saturating_add(1))))
            .expression_attribute_values(":to", s(format!("{EVENT_SK_PREFIX}~")))
            .limit(i32::try_from(limit).unwrap_or(i32::MAX))
            .send()
            .await
            .map_err(|e| classify("Query", e))?;
        output.items().iter().map(event_from_item).collect()
    }
}

impl ListEvents for DynamoStore {
    async fn events_from(
        &self,
        from: &EventCursor,
        limit: usize,
        now: Timestamp,
    ) -> Result<EventPage, StoreError> {
        let hour = from.hour();
        let (comparison, bound) = match from {
            EventCursor::After(id) => (">", id.clone()),
            EventCursor::Since(at) => (">=", EventId::floor(*at)),
        };
        let condition = format!("#pk = :pk AND #sk {comparison} :bound");
        let mut queries = tokio::task::JoinSet::new();
        for shard in 0..EVENT_SHARDS {
            let query = self
                .client
                .query()
                .table_name(&self.table)
                .index_name(GSI5)
                .key_condition_expression(condition.as_str())
                .expression_attribute_names("#pk", GSI5_PK)
                .expression_attribute_names("#sk", GSI5_SK)
                .expression_attribute_values(":pk", s(events_time_pk(hour, shard)))
                .expression_attribute_values(":bound", s(bound.as_str()))
                .limit(i32::try_from(limit).unwrap_or(i32::MAX));
            queries.spawn(query.send());
        }
        let mut events = Vec::new();
        for output in queries.join_all().await {
            for item in output.map_err(|e| classify("Query", e))?.items() {
                events.push(event_from_item(item)?);
            }
        }
        events.sort_by(|a, b| a.id.cmp(&b.id));
        events.truncate(limit);
        let next = from.next(&events, events.len() >= limit, now);
        Ok(EventPage { events, next })
    }
}

impl GetEvent for DynamoStore {
    async fn get_event(&self, id: &EventId) -> Result<Option<StoredEvent>, StoreError> {
        let output = self
            .client
            .query()
            .table_name(&self.table)
            .index_name(GSI5)
            .key_condition_expression("#pk = :pk AND #sk = :id")
            .expression_attribute_names("#pk", GSI5_PK)
            .expression_attribute_names("#sk", GSI5_SK)
            .expression_attribute_values(":pk", s(event_time_pk(id)))
            .expression_attribute_values(":id", s(id.as_str()))
            .send()
            .await
            .map_err(|e| classify("Query", e))?;
        output.items().first().map(event_from_item).transpose()
    }
}
