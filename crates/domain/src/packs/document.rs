//! [`PackDocument`]: a pack as the list serves it, its API JSON rendered once when the pack is
//! written, so that a page is built by copying text instead of rebuilding and re-serialising
//! every pack (and DynamoDB hands back one string per pack instead of a map per field).
//!
//! `remaining` is kept apart, as a number: purchases (to come) change it with a conditional
//! update while the rest of the pack stays as written; so is `lineFinished`, which the queue
//! keeper sets once a pack's line has finished. The stored text is every other field of the pack
//! as one JSON object; [`PackDocument::write_json`] puts them back in, with the countdowns of
//! the answer: how many milliseconds from the answer the sale starts and ends
//! (`saleStartsInMs`, `saleEndsInMs`) and the queue opens and closes (`queue.opensInMs`,
//! `queue.closesInMs`). They change with every answer, so they are never stored: the instants
//! are read from the text once, when the document is made.

use std::fmt;
use std::sync::Arc;

use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

use crate::packs::Pack;
use crate::queue::terms::QueueTerms;
use crate::timestamp::Timestamp;

/// The fields kept outside the stored text.
pub const REMAINING: &str = "remaining";
pub const LINE_FINISHED: &str = "lineFinished";
/// The field of a pack's detail that list pages leave out.
pub const ITEMS: &str = "items";
/// The countdowns an answer adds: milliseconds from the answer until `saleStartsAt`,
/// `saleEndsAt` (null when it is null) and, inside `queue`, until its `opensAt` and `closesAt`.
pub const SALE_STARTS_IN_MS: &str = "saleStartsInMs";
pub const SALE_ENDS_IN_MS: &str = "saleEndsInMs";
pub const OPENS_IN_MS: &str = "opensInMs";
pub const CLOSES_IN_MS: &str = "closesInMs";

/// A pack's JSON without `remaining`, and `remaining`. Cheap to clone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackDocument {
    fields: Arc<str>,
    remaining: u64,
    line_finished: bool,
    instants: Instants,
}

/// The instants of a document that its answers count down to, as its text holds them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Instants {
    sale_starts_at: Option<Timestamp>,
    sale_ends_at: Option<Timestamp>,
    queue: Option<QueueInstants>,
}

/// A queue's instants, and where its object closes in the text: its countdowns go before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct QueueInstants {
    close: usize,
    opens_at: Timestamp,
    closes_at: Timestamp,
}

/// Stored text that is not a pack document.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("pack document: {0}")]
pub struct DocumentError(String);

impl PackDocument {
    /// The document of a pack.
    pub fn of(pack: &Pack) -> Self {
        let mut value = serde_json::to_value(pack).expect("a pack always serialises");
        let object = value
            .as_object_mut()
            .expect("a pack serialises to an object");
        object.remove(REMAINING);
        object.remove(LINE_FINISHED);
        object.remove(ITEMS);
        Self::from_stored(value.to_string(), pack.remaining)
            .expect("a pack's own fields make a document")
            .with_line_finished(pack.line_finished)
    }

    /// A document from its stored parts, checked: `fields` must be exactly one JSON object with
    /// at least one field and no `remaining` or countdown (no space or anything else around it),
    /// its instants (`saleStartsAt`, `saleEndsAt`, `queue`) well formed, so that
    /// [`write_json`](Self::write_json) always writes one valid object.
    pub fn from_stored(fields: impl Into<Arc<str>>, remaining: u64) -> Result<Self, DocumentError> {
        let fields = fields.into();
        if !(fields.starts_with('{') && fields.ends_with('}')) {
            return Err(DocumentError("not a bare JSON object".into()));
        }
        let mut deserializer = serde_json::Deserializer::from_str(&fields);
        let instants = deserializer
            .deserialize_map(FieldsCheck { text: &fields })
            .and_then(|instants| deserializer.end().map(|()| instants))
            .map_err(|e| DocumentError(e.to_string()))?;
        Ok(Self {
            fields,
            remaining,
            line_finished: false,
            instants,
        })
    }

    /// The same document, its pack's line finished or not.
    pub fn with_line_finished(mut self, finished: bool) -> Self {
        self.line_finished = finished;
        self
    }

    /// The stored text: every field but `remaining`.
    pub fn fields(&self) -> &str {
        &self.fields
    }

    pub fn remaining(&self) -> u64 {
        self.remaining
    }

    /// The same document with another `remaining`.
    pub fn with_remaining(&self, remaining: u64) -> Self {
        Self {
            remaining,
            ..self.clone()
        }
    }

    /// The countdowns of an answer made at `now`: the queue's (opens, closes), the sale's
    /// (starts, ends).
    fn countdowns(&self, now: Timestamp) -> (Option<(u64, u64)>, [Option<u64>; 2]) {
        let until = |at: Option<Timestamp>| at.map(|at| now.millis_until(at));
        let instants = &self.instants;
        (
            instants
                .queue
                .map(|q| (now.millis_until(q.opens_at), now.millis_until(q.closes_at))),
            [until(instants.sale_starts_at), until(instants.sale_ends_at)],
        )
    }

    /// The length of what [`Self::write_json`] appends at `now`.
    pub fn json_len(&self, now: Timestamp) -> usize {
        let (queue, [starts, ends]) = self.countdowns(now);
        self.fields.len()
            + queue.map_or(0, |(opens, closes)| {
                field_len(OPENS_IN_MS, Some(opens)) + field_len(CLOSES_IN_MS, Some(closes))
            })
            + field_len(REMAINING, Some(self.remaining))
            + if self.line_finished {
                LINE_FINISHED_FIELD.len()
            } else {
                0
            }
            + field_len(SALE_STARTS_IN_MS, starts)
            + field_len(SALE_ENDS_IN_MS, ends)
    }

    /// Appends the pack's whole JSON object, as answered at `now`, to `out`.
    pub fn write_json(&self, now: Timestamp, out: &mut String) {
        let (queue, [starts, ends]) = self.countdowns(now);
        // `fields` is a non-empty object ending in `}`: reopen it (and the queue's object in it,
        // for its countdowns), add the rest, close it.
        let mut rest = &self.fields[..self.fields.len() - 1];
        if let (Some(terms), Some((opens, closes))) = (self.instants.queue, queue) {
            out.push_str(&rest[..terms.close]);
            push_field(out, OPENS_IN_MS, Some(opens));
            push_field(out, CLOSES_IN_MS, Some(closes));
            rest = &rest[terms.close..];
        }
        out.push_str(rest);
        push_field(out, REMAINING, Some(self.remaining));
        if self.line_finished {
            out.push_str(LINE_FINISHED_FIELD);
        }
        push_field(out, SALE_STARTS_IN_MS, starts);
        push_field(out, SALE_ENDS_IN_MS, ends);
        out.push('}');
    }

    /// The pack itself (without its items), every field checked.
    pub fn to_pack(&self) -> Result<Pack, DocumentError> {
        let mut value: serde_json::Value =
            serde_json::from_str(&self.fields).map_err(|e| DocumentError(e.to_string()))?;
        if let Some(object) = value.as_object_mut() {
            object.insert(REMAINING.into(), self.remaining.into());
            if self.line_finished {
                object.insert(LINE_FINISHED.into(), true.into());
            }
        }
        serde_json::from_value(value).map_err(|e| DocumentError(e.to_string()))
    }
}

/// What [`PackDocument::write_json`] writes after the count, once the pack's line has finished.
const LINE_FINISHED_FIELD: &str = ",\"lineFinished\":true";

/// The length of what [`push_field`] writes.
fn field_len(name: &str, value: Option<u64>) -> usize {
    ",\"\":".len() + name.len() + value.map_or("null".len(), crate::decimal::decimal_len)
}

/// Appends `,"name":value` (`null` for `None`) to an open object.
fn push_field(out: &mut String, name: &str, value: Option<u64>) {
    out.push_str(",\"");
    out.push_str(name);
    out.push_str("\":");
    match value {
        Some(value) => out.push_str(itoa::Buffer::new().format(value)),
        None => out.push_str("null"),
    }
}

/// Accepts an object with at least one field, none that an answer adds, and reads the instants
/// answers count down to; other values unchecked beyond being JSON.
struct FieldsCheck<'t> {
    /// The text read: where the queue's object closes is an offset in it.
    text: &'t str,
}

impl<'de> Visitor<'de> for FieldsCheck<'_> {
    type Value = Instants;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a JSON object of pack fields")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Instants, A::Error> {
        let mut count = 0usize;
        let mut instants = Instants::default();
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            match &*key {
                REMAINING | LINE_FINISHED | SALE_STARTS_IN_MS | SALE_ENDS_IN_MS => {
                    return Err(serde::de::Error::custom(format!("`{key}` is not stored")));
                }
                "saleStartsAt" => instants.sale_starts_at = map.next_value()?,
                "saleEndsAt" => instants.sale_ends_at = map.next_value()?,
                "queue" => instants.queue = self.queue::<A::Error>(map.next_value()?)?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            count += 1;
        }
        if count == 0 {
            return Err(serde::de::Error::custom("no fields"));
        }
        Ok(instants)
    }
}

impl FieldsCheck<'_> {
    /// The queue's instants from its text, a slice of `self.text`.
    fn queue<E: serde::de::Error>(&self, raw: &RawValue) -> Result<Option<QueueInstants>, E> {
        let Some(terms) =
            serde_json::from_str::<Option<QueueTerms>>(raw.get()).map_err(E::custom)?
        else {
            return Ok(None);
        };
        // `raw` is a slice of the text: the object's closing brace is its last byte.
        let close = (raw.get().as_ptr() as usize)
            .checked_sub(self.text.as_ptr() as usize)
            .map(|offset| offset + raw.get().len() - 1)
            .filter(|&close| self.text.as_bytes().get(close) == Some(&b'}'))
            .ok_or_else(|| E::custom("the queue is not read from the text"))?;
        Ok(Some(QueueInstants {
            close,
            opens_at: terms.opens_at,
            closes_at: terms.closes_at,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packs::fixtures::sample_pack;
    use serde_json::json;

    /// The sample pack's sale start (2026-01-01T00:00:00Z), the instant the tests answer at.
    fn sale_start() -> Timestamp {
        sample_pack("p").sale_starts_at.unwrap()
    }

    /// The document's JSON as answered at `now`, checked to be exactly `json_len` long.
    fn answered(document: &PackDocument, now: Timestamp) -> serde_json::Value {
        let mut out = String::new();
        document.write_json(now, &mut out);
        assert_eq!(out.len(), document.json_len(now), "{out}");
        serde_json::from_str(&out).expect("valid JSON")
    }

    fn whole_json(document: &PackDocument) -> serde_json::Value {
        answered(document, sale_start())
    }

    /// `pack`'s listed JSON answered at the sale's start: its countdowns added.
    fn listed(pack: &Pack) -> serde_json::Value {
        let mut listed = serde_json::to_value(pack).unwrap();
        let object = listed.as_object_mut().unwrap();
        object.remove(ITEMS);
        object.insert(SALE_STARTS_IN_MS.into(), 0.into());
        object.insert(SALE_ENDS_IN_MS.into(), serde_json::Value::Null);
        listed
    }

    #[test]
    fn a_document_writes_exactly_the_pack_json() {
        let mut pack = sample_pack("p1");
        pack.remaining = 7;
        let document = PackDocument::of(&pack);
        assert!(!document.fields().contains("remaining"));
        let fields: serde_json::Value = serde_json::from_str(document.fields()).unwrap();
        assert!(fields.get(ITEMS).is_none(), "list pages stay small");
        assert_eq!(document.remaining(), 7);
        assert_eq!(whole_json(&document), listed(&pack));
        pack.items.clear();
        assert_eq!(document.to_pack().unwrap(), pack);

        pack.remaining = u64::MAX;
        let stored = PackDocument::of(&pack);
        let read = PackDocument::from_stored(stored.fields().to_owned(), u64::MAX).unwrap();
        assert_eq!(read, stored);
        assert_eq!(whole_json(&read)["remaining"], u64::MAX);
    }

    /// Issue 44: every instant a client counts down to comes with the milliseconds to it from
    /// the answer, written when answering (never stored), 0 once it has passed.
    #[test]
    fn countdowns_are_written_at_the_answer() {
        let start = sale_start();
        let at = |seconds: i64| start.plus_seconds(seconds).unwrap();
        let mut pack = sample_pack("p1");
        pack.sale_ends_at = Some(at(3600));
        pack.queue = Some(QueueTerms {
            opens_at: at(-600),
            closes_at: at(-60),
            pass_seconds: 600,
        });
        let stored = PackDocument::of(&pack);
        assert!(!stored.fields().contains("InMs"), "{}", stored.fields());
        let document = PackDocument::from_stored(stored.fields().to_owned(), 3).unwrap();
        assert_eq!(document, stored.with_remaining(3));

        let early = answered(&document, at(-900));
        assert_eq!(early[SALE_STARTS_IN_MS], 900_000);
        assert_eq!(early[SALE_ENDS_IN_MS], 4_500_000);
        assert_eq!(early["queue"][OPENS_IN_MS], 300_000);
        assert_eq!(early["queue"][CLOSES_IN_MS], 840_000);
        assert_eq!(early["queue"]["passSeconds"], 600, "{early}");
        assert_eq!(early["remaining"], 3);

        let later = answered(&document, at(60));
        assert_eq!(later[SALE_STARTS_IN_MS], 0);
        assert_eq!(later[SALE_ENDS_IN_MS], 3_540_000);
        assert_eq!(later["queue"][OPENS_IN_MS], 0);
        assert_eq!(later["queue"][CLOSES_IN_MS], 0);
        pack.items.clear();
        assert_eq!(
            document.to_pack().unwrap(),
            Pack {
                remaining: 3,
                ..pack
            }
        );
    }

    #[test]
    fn stored_text_that_could_break_the_page_is_refused() {
        for bad in [
            "",
            "{}",
            "[]",
            "\"x\"",
            "null",
            "{\"id\":1",
            "{\"id\":1}}",
            "{\"id\":1},{\"x\":2}",
            " {\"id\":1}",
            "{\"id\":1} ",
            "{\"id\":1}\n",
            "{\"id\":1,\"remaining\":3}",
            "{\"id\":1,\"rem\\u0061ining\":3}",
            "{\"id\":1,\"lineFinished\":true}",
            "{\"id\":1,\"saleStartsInMs\":3}",
            "{\"id\":1,\"saleStartsAt\":\"soon\"}",
            "{\"id\":1,\"queue\":{\"opensAt\":\"2026-01-01T00:00:00Z\"}}",
            "{\"id\":1,\"queue\":{\"opensAt\":\"2026-01-01T00:00:00Z\",\
             \"closesAt\":\"2026-01-01T00:01:00Z\",\"opensInMs\":1}}",
            "{\"id\":1,}",
            "{\"id\":tru}",
        ] {
            assert!(
                PackDocument::from_stored(bad, 1).is_err(),
                "accepted {bad:?}"
            );
        }
        let odd_but_whole = PackDocument::from_stored(
            "{ \"id\" : [1, {\"a\": null}], \"queue\" : { \"closesAt\":\"2026-01-01T00:01:00Z\" , \
             \"opensAt\":\"2026-01-01T00:00:00Z\" } }",
            2,
        )
        .unwrap();
        let opens = "2026-01-01T00:00:00Z";
        assert_eq!(
            whole_json(&odd_but_whole),
            json!({"id": [1, {"a": null}], "queue": {"opensAt": opens,
                "closesAt": "2026-01-01T00:01:00Z", "opensInMs": 0, "closesInMs": 60_000},
                "remaining": 2, "saleStartsInMs": null, "saleEndsInMs": null})
        );
    }

    /// Issue 42, G5: a pack whose line finished says so in the list, as the keeper set it.
    #[test]
    fn a_finished_line_is_written_after_the_count() {
        let mut pack = sample_pack("p1");
        pack.line_finished = true;
        let document = PackDocument::of(&pack);
        assert!(!document.fields().contains(LINE_FINISHED));
        assert_eq!(whole_json(&document)[LINE_FINISHED], true);
        pack.items.clear();
        assert_eq!(document.to_pack().unwrap(), pack);
        let stored = PackDocument::from_stored(document.fields().to_owned(), pack.remaining);
        let unfinished = stored.unwrap();
        assert!(whole_json(&unfinished).get(LINE_FINISHED).is_none());
        assert_eq!(unfinished.with_line_finished(true), document);
    }

    #[test]
    fn to_pack_checks_every_field() {
        let document = PackDocument::from_stored("{\"id\":\"p\"}", 1).unwrap();
        assert!(document.to_pack().is_err());
    }
}
