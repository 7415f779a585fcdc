//! Webhook endpoints and deliveries (docs/events.md, "Delivery"): the endpoints an operator
//! manages and the dispatcher reads, each delivery's record with its attempts, written by the
//! sender once per attempt.

use std::future::Future;

use crate::StoreError;
use crate::condition::Condition;
use crate::schema::ENDPOINT_REVISION;
use domain::events::EventId;
use domain::timestamp::Timestamp;
use domain::webhooks::delivery::{Attempt, Delivery, DeliveryId};
use domain::webhooks::endpoint::{Endpoint, EndpointId};
use domain::webhooks::retry::Streak;

/// Where a delivery stands after its last attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryStatus {
    /// Another attempt is scheduled.
    Retrying,
    Delivered,
    /// Every attempt failed.
    Failed,
    /// The endpoint answered 410 Gone, or was disabled.
    Abandoned,
}

impl DeliveryStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Retrying => "retrying",
            Self::Delivered => "delivered",
            Self::Failed => "failed",
            Self::Abandoned => "abandoned",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        [
            Self::Retrying,
            Self::Delivered,
            Self::Failed,
            Self::Abandoned,
        ]
        .into_iter()
        .find(|status| status.as_str() == text)
    }
}

/// A delivery as stored: its event and endpoint, where it stands and every attempt so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryRecord {
    pub id: DeliveryId,
    pub event_id: EventId,
    pub endpoint_id: EndpointId,
    pub status: DeliveryStatus,
    pub attempts: Vec<Attempt>,
}

/// Whether an attempt's record was written, or was already there (a message received twice).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    Written,
    AlreadyRecorded,
}

pub trait WebhookEndpoints: Send + Sync {
    /// Creates `endpoint`; `false` when one of its id exists (nothing changed).
    fn create_endpoint(
        &self,
        endpoint: &Endpoint,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    fn endpoint(
        &self,
        id: &EndpointId,
    ) -> impl Future<Output = Result<Option<Endpoint>, StoreError>> + Send;

    /// Every endpoint, enabled or not (the dispatcher keeps the enabled ones).
    fn endpoints(&self) -> impl Future<Output = Result<Vec<Endpoint>, StoreError>> + Send;

    /// Applies `streak` (decided at `now`) to the endpoint: the streak's start written only if
    /// none is, its end only if one is, a disabling only if enabled. `true` when this call
    /// changed it (so one sender alone reports a disabling); [`Streak::Unchanged`] writes
    /// nothing.
    fn change_streak(
        &self,
        id: &EndpointId,
        streak: Streak,
        now: Timestamp,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;
}

/// An operator's writes of an endpoint (`webhook-endpoints`).
pub trait ManageEndpoints: Send + Sync {
    /// Writes `endpoint`, as changed from its `revision`, if the stored one is still at that
    /// revision: what was stored (its revision one more), or `None` when it changed since (an
    /// operator, a sender's streak) or is gone.
    fn replace_endpoint(
        &self,
        endpoint: &Endpoint,
    ) -> impl Future<Output = Result<Option<Endpoint>, StoreError>> + Send;

    /// Deletes the endpoint; `false` when there is none (its deliveries' records stay, to
    /// expire).
    fn delete_endpoint(
        &self,
        id: &EndpointId,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;
}

/// A replacement's one condition, run by both stores: the endpoint is still at the revision the
/// change was decided on (an absent endpoint has none), so that no write is lost.
pub(crate) fn endpoint_as_read(revision: u64) -> Condition {
    Condition::eq(ENDPOINT_REVISION, revision)
}

pub trait WebhookDeliveries: Send + Sync {
    /// Records `attempt` of `delivery` (its number the delivery's next) and where the delivery
    /// then stands, in one conditional write.
    fn record_attempt(
        &self,
        delivery: &Delivery,
        attempt: &Attempt,
        status: DeliveryStatus,
    ) -> impl Future<Output = Result<Recorded, StoreError>> + Send;

    fn delivery(
        &self,
        id: &DeliveryId,
    ) -> impl Future<Output = Result<Option<DeliveryRecord>, StoreError>> + Send;

    /// An endpoint's deliveries, newest event first, at most `limit`.
    fn endpoint_deliveries(
        &self,
        endpoint: &EndpointId,
        limit: usize,
    ) -> impl Future<Output = Result<Vec<DeliveryRecord>, StoreError>> + Send;
}

/// Every webhook operation the sender needs.
pub trait WebhookStore: WebhookEndpoints + WebhookDeliveries {}
impl<S: WebhookEndpoints + WebhookDeliveries> WebhookStore for S {}
