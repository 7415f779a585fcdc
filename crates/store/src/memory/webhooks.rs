//! Webhook endpoints and deliveries in memory, each change under the store's lock with the
//! conditions the DynamoDB store puts on its writes.

use std::collections::{BTreeMap, HashMap};

use super::MemoryStore;
use crate::StoreError;
use crate::condition::{Attributes, Value};
use crate::schema::ENDPOINT_REVISION;
use crate::webhooks::{
    DeliveryRecord, DeliveryStatus, ManageEndpoints, Recorded, WebhookDeliveries, WebhookEndpoints,
    endpoint_as_read,
};
use domain::timestamp::Timestamp;
use domain::webhooks::delivery::{Attempt, Delivery, DeliveryId};
use domain::webhooks::endpoint::{Endpoint, EndpointId, EndpointState};
use domain::webhooks::retry::Streak;

#[derive(Default)]
struct Webhooks {
    endpoints: BTreeMap<EndpointId, Endpoint>,
    deliveries: HashMap<DeliveryId, DeliveryRecord>,
}

impl WebhookEndpoints for MemoryStore {
    async fn create_endpoint(&self, endpoint: &Endpoint) -> Result<bool, StoreError> {
        let mut tables = self.write();
        let endpoints = &mut tables.table_mut::<Webhooks>().endpoints;
        if endpoints.contains_key(&endpoint.id) {
            return Ok(false);
        }
        endpoints.insert(endpoint.id.clone(), endpoint.clone());
        Ok(true)
    }

    async fn endpoint(&self, id: &EndpointId) -> Result<Option<Endpoint>, StoreError> {
        let tables = self.read();
        Ok(tables
            .table::<Webhooks>()
            .and_then(|webhooks| webhooks.endpoints.get(id).cloned()))
    }

    async fn endpoints(&self) -> Result<Vec<Endpoint>, StoreError> {
        let tables = self.read();
        Ok(tables
            .table::<Webhooks>()
            .map(|webhooks| webhooks.endpoints.values().cloned().collect())
            .unwrap_or_default())
    }

    async fn change_streak(
        &self,
        id: &EndpointId,
        streak: Streak,
        now: Timestamp,
    ) -> Result<bool, StoreError> {
        let mut tables = self.write();
        let Some(endpoint) = tables.table_mut::<Webhooks>().endpoints.get_mut(id) else {
            return Ok(false);
        };
        let changed = match streak {
            Streak::Unchanged => false,
            Streak::Started(since) if endpoint.failing_since.is_none() => {
                endpoint.failing_since = Some(since);
                true
            }
            Streak::Recovered if endpoint.failing_since.is_some() => {
                endpoint.failing_since = None;
                true
            }
            Streak::Disable(reason) if endpoint.state == EndpointState::Enabled => {
                endpoint.state = EndpointState::Disabled { reason, at: now };
                true
            }
            _ => false,
        };
        // As on DynamoDB: every write counts in the revision an operator's change is made at.
        endpoint.revision += u64::from(changed);
        Ok(changed)
    }
}

/// An endpoint as the condition of a replacement reads it: its revision.
struct Stored<'a>(Option<&'a Endpoint>);

impl Attributes for Stored<'_> {
    fn attribute(&self, path: &[&str]) -> Option<Value> {
        self.0
            .filter(|_| path == [ENDPOINT_REVISION])
            .map(|endpoint| endpoint.revision.into())
    }
}

impl ManageEndpoints for MemoryStore {
    async fn replace_endpoint(&self, endpoint: &Endpoint) -> Result<Option<Endpoint>, StoreError> {
        let mut tables = self.write();
        let endpoints = &mut tables.table_mut::<Webhooks>().endpoints;
        let stored = Stored(endpoints.get(&endpoint.id));
        if !endpoint_as_read(endpoint.revision).holds(Some(&stored)) {
            return Ok(None);
        }
        let written = Endpoint {
            revision: endpoint.revision + 1,
            ..endpoint.clone()
        };
        endpoints.insert(endpoint.id.clone(), written.clone());
        Ok(Some(written))
    }

    async fn delete_endpoint(&self, id: &EndpointId) -> Result<bool, StoreError> {
        let mut tables = self.write();
        Ok(tables
            .table_mut::<Webhooks>()
            .endpoints
            .remove(id)
            .is_some())
    }
}

impl WebhookDeliveries for MemoryStore {
    async fn record_attempt(
        &self,
        delivery: &Delivery,
        attempt: &Attempt,
        status: DeliveryStatus,
    ) -> Result<Recorded, StoreError> {
        let mut tables = self.write();
        let deliveries = &mut tables.table_mut::<Webhooks>().deliveries;
        let id = delivery.id();
        // The same condition as DynamoDB's: the attempt is the delivery's next.
        let next = deliveries
            .get(&id)
            .map_or(1, |record| record.attempts.len() + 1);
        if usize::try_from(attempt.number).ok() != Some(next) {
            return Ok(Recorded::AlreadyRecorded);
        }
        let record = deliveries
            .entry(id.clone())
            .or_insert_with(|| DeliveryRecord {
                id,
                event_id: delivery.event_id.clone(),
                endpoint_id: delivery.endpoint_id.clone(),
                status,
                attempts: Vec::new(),
            });
        record.attempts.push(attempt.clone());
        record.status = status;
        Ok(Recorded::Written)
    }

    async fn delivery(&self, id: &DeliveryId) -> Result<Option<DeliveryRecord>, StoreError> {
        let tables = self.read();
        Ok(tables
            .table::<Webhooks>()
            .and_then(|webhooks| webhooks.deliveries.get(id).cloned()))
    }

    async fn endpoint_deliveries(
        &self,
        endpoint: &EndpointId,
        limit: usize,
    ) -> Result<Vec<DeliveryRecord>, StoreError> {
        let tables = self.read();
        let mut deliveries: Vec<DeliveryRecord> = tables
            .table::<Webhooks>()
            .map(|webhooks| {
                webhooks
                    .deliveries
                    .values()
                    .filter(|record| record.endpoint_id == *endpoint)
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        deliveries.sort_by(|a, b| b.event_id.cmp(&a.event_id));
        deliveries.truncate(limit);
        Ok(deliveries)
    }
}
