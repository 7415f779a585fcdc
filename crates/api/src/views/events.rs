//! An event as delivered (the fans' feed, the operators' feed, the export): the document's schema
//! of the stored bytes the handlers send as they are.

use serde::Serialize;
use utoipa::ToSchema;

use domain::events::Subject;
use domain::timestamp::Timestamp;

/// An event as delivered: its envelope (docs/events.md and the document's `webhooks`).
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Event)]
#[allow(dead_code)] // The document's schema of the stored bytes the handlers send.
pub struct EventJson {
    #[schema(value_type = String, pattern = "^evt_[0-7][0-9A-HJKMNP-TV-Z]{25}$")]
    id: String,
    #[serde(rename = "type")]
    event_type: domain::events::EventType,
    occurred_at: Timestamp,
    subject: Subject,
    /// The subject's count of events, this one included: 1, 2, 3... with no gap.
    sequence: u64,
    api_version: String,
    /// The type's data (the document's `webhooks` section, by type).
    data: serde_json::Value,
}
