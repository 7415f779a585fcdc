//! The keys of webhook endpoints and deliveries (docs/events.md, "Delivery"):
//!
//! | entity | `PK` | `SK` | `GSI5PK` / `GSI5SK` |
//! |---|---|---|---|
//! | an endpoint | `WHEP#ALL` | `EP#<endpointId>` | - |
//! | a delivery, its attempts inside (TTL 30 days) | `WHDLV#<deliveryId>` | `DLV` | `WHDLV#<endpointId>#<shard>` / `<eventId>` |
//!
//! Endpoints are few and written only by operators and on state changes (a failing streak
//! starting or ending, a disabling), never on each delivery; the dispatcher reads them all (one
//! Query) once per 30 s per instance. A delivery is its own partition, written once per attempt
//! (its attempts a list in the item: at most 10 of about 1.1 KB), so a drop's 5,000 deliveries a
//! second to one endpoint share no key; the endpoint's listing is `GSI5` over
//! [`DELIVERY_SHARDS`] keys (the shard from the event id's random bits), about 160 index writes
//! a second per key with every delivery tried twice.

use domain::events::EventId;
use domain::webhooks::delivery::DeliveryId;
use domain::webhooks::endpoint::EndpointId;

/// The endpoints' partition.
pub const WEBHOOKS_PK: &str = "WHEP#ALL";
pub const ENDPOINT_SK_PREFIX: &str = "EP#";
pub fn endpoint_sk(id: &EndpointId) -> String {
    format!("{ENDPOINT_SK_PREFIX}{id}")
}
/// The attribute counting an endpoint's writes: an operator's change's condition.
pub const ENDPOINT_REVISION: &str = "revision";
pub const DELIVERY_PREFIX: &str = "WHDLV#";
pub const DELIVERY_SK: &str = "DLV";
pub fn delivery_pk(id: &DeliveryId) -> String {
    format!("{DELIVERY_PREFIX}{id}")
}
/// The shares of an endpoint's deliveries index.
pub const DELIVERY_SHARDS: u32 = 32;
/// Share `shard` of `endpoint`'s deliveries in `GSI5`.
pub fn deliveries_pk(endpoint: &EndpointId, shard: u32) -> String {
    format!("{DELIVERY_PREFIX}{endpoint}#{shard:02}")
}
/// The index key of the delivery of `event` to `endpoint`.
pub fn delivery_index_pk(endpoint: &EndpointId, event: &EventId) -> String {
    deliveries_pk(endpoint, event.shard(DELIVERY_SHARDS))
}
