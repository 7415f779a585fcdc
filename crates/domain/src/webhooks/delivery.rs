//! A delivery (one event to one endpoint) and the record of each of its attempts: when, what
//! answered (a status, or why nothing did), how long it took and the answer's first 1 KB as text.
//! Never a header or a secret: a receiver's answer may echo what it was sent.

use serde::{Deserialize, Serialize};

use super::endpoint::EndpointId;
use crate::events::EventId;
use crate::ids::InvalidId;
use crate::timestamp::Timestamp;

/// The most bytes of an answer an attempt keeps.
pub const EXCERPT_BYTES: usize = 1024;

/// A delivery's id: `dlv_`, the event's ULID and the endpoint's, so that the same event sent
/// twice to one endpoint (a stream batch retried) is the same delivery.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct DeliveryId(String);

const DELIVERY_PREFIX: &str = "dlv_";

impl DeliveryId {
    pub fn of(event: &EventId, endpoint: &EndpointId) -> Self {
        let event = event.as_str().trim_start_matches("evt_");
        let endpoint = endpoint.as_str().trim_start_matches("ep_");
        Self(format!("{DELIVERY_PREFIX}{event}_{endpoint}"))
    }

    pub fn parse(text: impl Into<String>) -> Result<Self, InvalidId> {
        let text = text.into();
        let parts = text
            .strip_prefix(DELIVERY_PREFIX)
            .and_then(|rest| rest.split_once('_'));
        match parts {
            Some((event, endpoint))
                if EventId::parse(format!("evt_{event}")).is_ok()
                    && EndpointId::parse(format!("ep_{endpoint}")).is_ok() =>
            {
                Ok(Self(text))
            }
            _ => Err(InvalidId {
                kind: "a delivery id",
                rule: "dlv_, an event's ULID, _ and an endpoint's id",
            }),
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

id_text!(DeliveryId);

/// One delivery's next attempt: what a deliveries queue message carries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Delivery {
    pub event_id: EventId,
    pub endpoint_id: EndpointId,
    /// The attempt this message makes, from 1.
    pub attempt: u32,
    /// When the attempt is due (a wait longer than SQS's 15-minute delay hops through the
    /// queue until then).
    pub due: Timestamp,
}

impl Delivery {
    pub fn id(&self) -> DeliveryId {
        DeliveryId::of(&self.event_id, &self.endpoint_id)
    }
}

/// Why an attempt got no answer.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::EnumString,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Failure {
    /// No answer within the timeout.
    Timeout,
    /// The host resolved to an address a delivery may not reach.
    RefusedAddress,
    /// The URL's scheme is not allowed.
    RefusedScheme,
    /// The host did not resolve.
    Dns,
    /// No connection, or it broke.
    Connection,
    /// The TLS handshake failed.
    Tls,
}

/// What an attempt got: a status or a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptResult {
    Status(u16),
    Failed(Failure),
}

/// The record of one attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    pub number: u32,
    pub at: Timestamp,
    pub result: AttemptResult,
    pub latency_ms: u64,
    /// The answer's first [`EXCERPT_BYTES`], as text.
    pub excerpt: String,
}

/// The first [`EXCERPT_BYTES`] of `body` as text: invalid UTF-8 replaced, a character cut at the
/// limit left out.
pub fn excerpt(body: &[u8]) -> String {
    let cut = &body[..body.len().min(EXCERPT_BYTES)];
    match std::str::from_utf8(cut) {
        Ok(text) => text.to_owned(),
        Err(error) if error.error_len().is_none() => {
            String::from_utf8_lossy(&cut[..error.valid_up_to()]).into_owned()
        }
        Err(_) => String::from_utf8_lossy(cut).into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_delivery_id_is_its_event_and_endpoint() {
        let event = EventId::new(Timestamp::parse("2026-11-29T08:00:00Z").unwrap());
        let endpoint = EndpointId::generate();
        let id = DeliveryId::of(&event, &endpoint);
        assert_eq!(id, DeliveryId::of(&event, &endpoint));
        assert_eq!(DeliveryId::parse(id.as_str()).unwrap(), id);
        assert!(DeliveryId::parse("dlv_x_y").is_err());
    }

    #[test]
    fn an_excerpt_keeps_the_first_kilobyte_as_text() {
        assert_eq!(excerpt(b"ok"), "ok");
        assert_eq!(excerpt(&[b'a'; 2000]).len(), EXCERPT_BYTES);
        // A two-byte character across the limit is left out, not mangled.
        let mut body = vec![b'a'; EXCERPT_BYTES - 1];
        body.extend_from_slice("é".as_bytes());
        assert_eq!(excerpt(&body), "a".repeat(EXCERPT_BYTES - 1));
        assert_eq!(excerpt(&[0xff, b'x']), "\u{fffd}x");
    }
}
