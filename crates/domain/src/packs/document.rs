//! [`PackDocument`]: a pack as the list serves it, its API JSON rendered once when the pack is
//! written, so that a page is built by copying text instead of rebuilding and re-serialising
//! every pack (and DynamoDB hands back one string per pack instead of a map per field).
//!
//! `remaining` is kept apart, as a number: purchases (to come) change it with a conditional
//! update while the rest of the pack stays as written; so is `lineFinished`, which the queue
//! keeper sets once a pack's line has finished. The stored text is every other field of the pack
//! as one JSON object; [`PackDocument::write_json`] puts them back in.

use std::fmt;
use std::sync::Arc;

use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};

use crate::packs::Pack;

/// The fields kept outside the stored text.
pub const REMAINING: &str = "remaining";
pub const LINE_FINISHED: &str = "lineFinished";
/// The field of a pack's detail that list pages leave out.
pub const ITEMS: &str = "items";

/// A pack's JSON without `remaining`, and `remaining`. Cheap to clone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackDocument {
    fields: Arc<str>,
    remaining: u64,
    line_finished: bool,
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
        Self {
            fields: value.to_string().into(),
            remaining: pack.remaining,
            line_finished: pack.line_finished,
        }
    }

    /// A document from its stored parts, checked: `fields` must be exactly one JSON object with
    /// at least one field and no `remaining` (no space or anything else around it), so that
    /// [`write_json`](Self::write_json) always writes one valid object.
    pub fn from_stored(fields: impl Into<Arc<str>>, remaining: u64) -> Result<Self, DocumentError> {
        let fields = fields.into();
        if !(fields.starts_with('{') && fields.ends_with('}')) {
            return Err(DocumentError("not a bare JSON object".into()));
        }
        let mut deserializer = serde_json::Deserializer::from_str(&fields);
        deserializer
            .deserialize_map(FieldsCheck)
            .and_then(|()| deserializer.end())
            .map_err(|e| DocumentError(e.to_string()))?;
        Ok(Self {
            fields,
            remaining,
            line_finished: false,
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
            fields: self.fields.clone(),
            remaining,
            line_finished: self.line_finished,
        }
    }

    /// The length of what [`Self::write_json`] appends.
    pub fn json_len(&self) -> usize {
        self.fields.len()
            + REMAINING_FIELD.len()
            + crate::decimal::decimal_len(self.remaining)
            + if self.line_finished {
                LINE_FINISHED_FIELD.len()
            } else {
                0
            }
    }

    /// Appends the pack's whole JSON object to `out`.
    pub fn write_json(&self, out: &mut String) {
        // `fields` is a non-empty object ending in `}`: reopen it, add `remaining`, close it.
        out.push_str(&self.fields[..self.fields.len() - 1]);
        out.push_str(REMAINING_FIELD);
        out.push_str(itoa::Buffer::new().format(self.remaining));
        if self.line_finished {
            out.push_str(LINE_FINISHED_FIELD);
        }
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

/// What [`PackDocument::write_json`] writes between the fields and the count.
const REMAINING_FIELD: &str = ",\"remaining\":";
/// What it writes after the count, once the pack's line has finished.
const LINE_FINISHED_FIELD: &str = ",\"lineFinished\":true";

/// Accepts an object with at least one field, none named `remaining` or `lineFinished`, values
/// unchecked beyond being JSON.
struct FieldsCheck;

impl<'de> Visitor<'de> for FieldsCheck {
    type Value = ();

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a JSON object of pack fields")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut count = 0usize;
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if key == REMAINING || key == LINE_FINISHED {
                return Err(serde::de::Error::custom(format!("`{key}` is stored apart")));
            }
            map.next_value::<IgnoredAny>()?;
            count += 1;
        }
        if count == 0 {
            return Err(serde::de::Error::custom("no fields"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packs::fixtures::sample_pack;

    fn whole_json(document: &PackDocument) -> serde_json::Value {
        let mut out = String::new();
        document.write_json(&mut out);
        serde_json::from_str(&out).expect("valid JSON")
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
        let mut listed = serde_json::to_value(&pack).unwrap();
        listed.as_object_mut().unwrap().remove(ITEMS);
        assert_eq!(whole_json(&document), listed);
        pack.items.clear();
        assert_eq!(document.to_pack().unwrap(), pack);

        pack.remaining = u64::MAX;
        let stored = PackDocument::of(&pack);
        let read = PackDocument::from_stored(stored.fields().to_owned(), u64::MAX).unwrap();
        assert_eq!(read, stored);
        assert_eq!(whole_json(&read)["remaining"], u64::MAX);
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
            "{\"id\":1,}",
            "{\"id\":tru}",
        ] {
            assert!(
                PackDocument::from_stored(bad, 1).is_err(),
                "accepted {bad:?}"
            );
        }
        let odd_but_whole =
            PackDocument::from_stored("{ \"id\" : [1, {\"a\": null}] }", 2).unwrap();
        assert_eq!(
            whole_json(&odd_but_whole),
            serde_json::json!({"id": [1, {"a": null}], "remaining": 2})
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
        let mut out = String::new();
        document.write_json(&mut out);
        assert_eq!(out.len(), document.json_len());
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
