//! Webhook endpoints and deliveries on DynamoDB (keys: [`crate::schema`]'s webhooks table):
//! an endpoint one item, written by operators and on a state change, each under its condition;
//! a delivery one item, written once per attempt (`attemptCount` the condition, so a message
//! received twice records its attempt once).

use aws_sdk_dynamodb::types::AttributeValue;
use serde::{Deserialize, Serialize};

use super::condition::{put_under, written};
use super::records::readable;
use super::{DynamoStore, Item, classify, key, number, s};
use crate::StoreError;
use crate::schema::{
    DELIVERY_SHARDS, DELIVERY_SK, ENDPOINT_REVISION, ENTITY, GSI5, GSI5_PK, GSI5_SK, TTL,
    WEBHOOKS_PK, deliveries_pk, delivery_index_pk, delivery_pk, endpoint_sk,
};
use crate::webhooks::{
    DeliveryRecord, DeliveryStatus, ManageEndpoints, Recorded, WebhookDeliveries, WebhookEndpoints,
    endpoint_as_read,
};
use domain::events::{EventType, RETENTION_SECONDS};
use domain::timestamp::Timestamp;
use domain::webhooks::delivery::{Attempt, AttemptResult, Delivery, DeliveryId};
use domain::webhooks::endpoint::{
    Endpoint, EndpointId, EndpointState, EndpointUrl, SecretText, Secrets, Subscription, UrlPolicy,
};
use domain::webhooks::retry::Streak;

const ENDPOINT_VERSION: u32 = 1;
const DELIVERY_VERSION: u32 = 1;

/// An endpoint's item.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct EndpointRecord {
    #[serde(rename = "PK")]
    pk: String,
    #[serde(rename = "SK")]
    sk: String,
    entity: String,
    schema_version: u32,
    id: String,
    url: String,
    /// Absent: every type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    types: Option<Vec<String>>,
    description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    disabled_reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    disabled_at: Option<String>,
    secret: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    previous_secret: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    previous_until: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    failing_since: Option<String>,
    /// [`ENDPOINT_REVISION`]: every write adds one.
    revision: u64,
}

impl From<&Endpoint> for EndpointRecord {
    fn from(endpoint: &Endpoint) -> Self {
        let (disabled_reason, disabled_at) = match endpoint.state {
            EndpointState::Enabled => (None, None),
            EndpointState::Disabled { reason, at } => {
                (Some(<&str>::from(reason).to_owned()), Some(at.to_string()))
            }
        };
        let (previous_secret, previous_until) = match &endpoint.secrets.previous {
            Some((secret, until)) => (Some(secret.expose().to_owned()), Some(until.to_string())),
            None => (None, None),
        };
        Self {
            pk: WEBHOOKS_PK.to_owned(),
            sk: endpoint_sk(&endpoint.id),
            entity: "webhook_endpoint".to_owned(),
            schema_version: ENDPOINT_VERSION,
            id: endpoint.id.to_string(),
            url: endpoint.url.as_str().to_owned(),
            types: match &endpoint.subscription {
                Subscription::All => None,
                Subscription::Only(types) => {
                    Some(types.iter().map(|t| <&str>::from(*t).to_owned()).collect())
                }
            },
            description: endpoint.description.clone(),
            disabled_reason,
            disabled_at,
            secret: endpoint.secrets.current.expose().to_owned(),
            previous_secret,
            previous_until,
            failing_since: endpoint.failing_since.map(|at| at.to_string()),
            revision: endpoint.revision,
        }
    }
}

fn corrupt(what: &str) -> StoreError {
    StoreError::internal(format!("webhook item: bad `{what}`"))
}

fn instant(text: Option<String>, what: &str) -> Result<Option<Timestamp>, StoreError> {
    text.map(|text| Timestamp::parse(&text).map_err(|_| corrupt(what)))
        .transpose()
}

impl TryFrom<EndpointRecord> for Endpoint {
    type Error = StoreError;

    fn try_from(record: EndpointRecord) -> Result<Self, StoreError> {
        readable("webhook endpoint", record.schema_version, ENDPOINT_VERSION)?;
        let secret = |text: String| SecretText::parse(text).map_err(|_| corrupt("secret"));
        let subscription = match record.types {
            None => Subscription::All,
            Some(types) => Subscription::Only(
                types
                    .iter()
                    .map(|t| t.parse::<EventType>().map_err(|_| corrupt("types")))
                    .collect::<Result<_, _>>()?,
            ),
        };
        let state = match (
            record.disabled_reason,
            instant(record.disabled_at, "disabledAt")?,
        ) {
            (Some(reason), Some(at)) => EndpointState::Disabled {
                reason: reason.parse().map_err(|_| corrupt("disabledReason"))?,
                at,
            },
            _ => EndpointState::Enabled,
        };
        let previous = match (
            record.previous_secret,
            instant(record.previous_until, "previousUntil")?,
        ) {
            (Some(text), Some(until)) => Some((secret(text)?, until)),
            _ => None,
        };
        Ok(Endpoint {
            id: EndpointId::parse(record.id).map_err(|_| corrupt("id"))?,
            // Stored as checked when created; a test stack's loopback URL reads back too.
            url: EndpointUrl::parse(&record.url, UrlPolicy::AlsoLoopbackHttp)
                .map_err(|_| corrupt("url"))?,
            subscription,
            description: record.description,
            state,
            secrets: Secrets {
                current: secret(record.secret)?,
                previous,
            },
            failing_since: instant(record.failing_since, "failingSince")?,
            revision: record.revision,
        })
    }
}

fn endpoint_from_item(item: Item) -> Result<Endpoint, StoreError> {
    serde_dynamo::from_item::<_, EndpointRecord>(item)
        .map_err(|e| StoreError::internal_from("webhook endpoint item", e))?
        .try_into()
}

fn endpoint_item(endpoint: &Endpoint) -> Result<Item, StoreError> {
    serde_dynamo::to_item(EndpointRecord::from(endpoint))
        .map_err(|e| StoreError::internal_from("webhook endpoint item", e))
}

impl WebhookEndpoints for DynamoStore {
    async fn create_endpoint(&self, endpoint: &Endpoint) -> Result<bool, StoreError> {
        let item = endpoint_item(endpoint)?;
        let result = self
            .client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item))
            .condition_expression("attribute_not_exists(PK)")
            .send()
            .await;
        Ok(written("PutItem", result)?.is_some())
    }

    async fn endpoint(&self, id: &EndpointId) -> Result<Option<Endpoint>, StoreError> {
        let output = self
            .client
            .get_item()
            .table_name(&self.table)
            .set_key(Some(key(WEBHOOKS_PK.to_owned(), &endpoint_sk(id))))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| classify("GetItem", e))?;
        output.item.map(endpoint_from_item).transpose()
    }

    async fn endpoints(&self) -> Result<Vec<Endpoint>, StoreError> {
        let mut endpoints = Vec::new();
        let mut start = None;
        loop {
            let output = self
                .client
                .query()
                .table_name(&self.table)
                .key_condition_expression("PK = :pk")
                .expression_attribute_values(":pk", s(WEBHOOKS_PK))
                .set_exclusive_start_key(start)
                .send()
                .await
                .map_err(|e| classify("Query", e))?;
            for item in output.items.unwrap_or_default() {
                endpoints.push(endpoint_from_item(item)?);
            }
            start = output.last_evaluated_key;
            if start.is_none() {
                return Ok(endpoints);
            }
        }
    }

    async fn change_streak(
        &self,
        id: &EndpointId,
        streak: Streak,
        now: Timestamp,
    ) -> Result<bool, StoreError> {
        let (expression, condition, values): (&str, &str, Vec<(&str, AttributeValue)>) =
            match streak {
                Streak::Unchanged => return Ok(false),
                Streak::Started(since) => (
                    "SET failingSince = :since ADD #revision :one",
                    "attribute_exists(PK) AND attribute_not_exists(failingSince)",
                    vec![(":since", s(since.to_string()))],
                ),
                Streak::Recovered => (
                    "REMOVE failingSince ADD #revision :one",
                    "attribute_exists(failingSince)",
                    vec![],
                ),
                Streak::Disable(reason) => (
                    "SET disabledReason = :reason, disabledAt = :at ADD #revision :one",
                    "attribute_exists(PK) AND attribute_not_exists(disabledReason)",
                    vec![
                        (":reason", s(<&str>::from(reason))),
                        (":at", s(now.to_string())),
                    ],
                ),
            };
        let mut update = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(WEBHOOKS_PK.to_owned(), &endpoint_sk(id))))
            .update_expression(expression)
            .condition_expression(condition)
            // Every write counts in the revision an operator's change is made at.
            .expression_attribute_names("#revision", ENDPOINT_REVISION)
            .expression_attribute_values(":one", number(1));
        for (name, value) in values {
            update = update.expression_attribute_values(name, value);
        }
        Ok(written("UpdateItem", update.send().await)?.is_some())
    }
}

impl ManageEndpoints for DynamoStore {
    /// One PutItem of the whole item under [`endpoint_as_read`].
    async fn replace_endpoint(&self, endpoint: &Endpoint) -> Result<Option<Endpoint>, StoreError> {
        let next = Endpoint {
            revision: endpoint.revision + 1,
            ..endpoint.clone()
        };
        let put = self
            .client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(endpoint_item(&next)?));
        let result = put_under(put, &endpoint_as_read(endpoint.revision))
            .send()
            .await;
        Ok(written("PutItem", result)?.map(|_| next))
    }

    async fn delete_endpoint(&self, id: &EndpointId) -> Result<bool, StoreError> {
        let result = self
            .client
            .delete_item()
            .table_name(&self.table)
            .set_key(Some(key(WEBHOOKS_PK.to_owned(), &endpoint_sk(id))))
            .condition_expression("attribute_exists(PK)")
            .send()
            .await;
        Ok(written("DeleteItem", result)?.is_some())
    }
}

/// One attempt inside its delivery's item: `status` or `failure`, never a header.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct AttemptRecord {
    number: u32,
    at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    status: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    failure: Option<String>,
    latency_ms: u64,
    excerpt: String,
}

impl From<&Attempt> for AttemptRecord {
    fn from(attempt: &Attempt) -> Self {
        let (status, failure) = match attempt.result {
            AttemptResult::Status(code) => (Some(code), None),
            AttemptResult::Failed(failure) => (None, Some(<&str>::from(failure).to_owned())),
        };
        Self {
            number: attempt.number,
            at: attempt.at.to_string(),
            status,
            failure,
            latency_ms: attempt.latency_ms,
            excerpt: attempt.excerpt.clone(),
        }
    }
}

impl TryFrom<AttemptRecord> for Attempt {
    type Error = StoreError;

    fn try_from(record: AttemptRecord) -> Result<Self, StoreError> {
        let result = match (record.status, record.failure) {
            (Some(code), _) => AttemptResult::Status(code),
            (None, Some(failure)) => {
                AttemptResult::Failed(failure.parse().map_err(|_| corrupt("failure"))?)
            }
            (None, None) => return Err(corrupt("attempts")),
        };
        Ok(Attempt {
            number: record.number,
            at: Timestamp::parse(&record.at).map_err(|_| corrupt("at"))?,
            result,
            latency_ms: record.latency_ms,
            excerpt: record.excerpt,
        })
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct DeliveryItem {
    schema_version: u32,
    event_id: String,
    endpoint_id: String,
    status: String,
    attempts: Vec<AttemptRecord>,
}

fn delivery_from_item(item: Item) -> Result<DeliveryRecord, StoreError> {
    let record: DeliveryItem = serde_dynamo::from_item(item)
        .map_err(|e| StoreError::internal_from("webhook delivery item", e))?;
    readable("webhook delivery", record.schema_version, DELIVERY_VERSION)?;
    let event_id =
        domain::events::EventId::parse(record.event_id).map_err(|_| corrupt("eventId"))?;
    let endpoint_id = EndpointId::parse(record.endpoint_id).map_err(|_| corrupt("endpointId"))?;
    Ok(DeliveryRecord {
        id: DeliveryId::of(&event_id, &endpoint_id),
        event_id,
        endpoint_id,
        status: DeliveryStatus::parse(&record.status).ok_or_else(|| corrupt("status"))?,
        attempts: record
            .attempts
            .into_iter()
            .map(Attempt::try_from)
            .collect::<Result<_, _>>()?,
    })
}

impl WebhookDeliveries for DynamoStore {
    async fn record_attempt(
        &self,
        delivery: &Delivery,
        attempt: &Attempt,
        status: DeliveryStatus,
    ) -> Result<Recorded, StoreError> {
        let one = serde_dynamo::to_attribute_value(vec![AttemptRecord::from(attempt)])
            .map_err(|e| StoreError::internal_from("webhook attempt", e))?;
        let expires =
            i64::try_from(attempt.at.unix_seconds()).unwrap_or(i64::MAX) + RETENTION_SECONDS;
        let condition = if attempt.number == 1 {
            "attribute_not_exists(PK)"
        } else {
            "attemptCount = :previous"
        };
        let mut update = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(delivery_pk(&delivery.id()), DELIVERY_SK)))
            .update_expression(
                "SET #entity = :entity, schemaVersion = :sv, eventId = :event, \
                 endpointId = :endpoint, #status = :status, attemptCount = :n, \
                 attempts = list_append(if_not_exists(attempts, :empty), :one), \
                 #gpk = :gpk, #gsk = :event, #ttl = :ttl",
            )
            .condition_expression(condition)
            .expression_attribute_names("#entity", ENTITY)
            .expression_attribute_names("#status", "status")
            .expression_attribute_names("#gpk", GSI5_PK)
            .expression_attribute_names("#gsk", GSI5_SK)
            .expression_attribute_names("#ttl", TTL)
            .expression_attribute_values(":entity", s("webhook_delivery"))
            .expression_attribute_values(":sv", number(DELIVERY_VERSION))
            .expression_attribute_values(":event", s(delivery.event_id.as_str()))
            .expression_attribute_values(":endpoint", s(delivery.endpoint_id.as_str()))
            .expression_attribute_values(":status", s(status.as_str()))
            .expression_attribute_values(":n", number(attempt.number))
            .expression_attribute_values(":empty", AttributeValue::L(Vec::new()))
            .expression_attribute_values(":one", one)
            .expression_attribute_values(
                ":gpk",
                s(delivery_index_pk(&delivery.endpoint_id, &delivery.event_id)),
            )
            .expression_attribute_values(":ttl", number(expires));
        if attempt.number != 1 {
            update = update
                .expression_attribute_values(":previous", number(attempt.number.saturating_sub(1)));
        }
        Ok(match written("UpdateItem", update.send().await)? {
            Some(_) => Recorded::Written,
            None => Recorded::AlreadyRecorded,
        })
    }

    async fn delivery(&self, id: &DeliveryId) -> Result<Option<DeliveryRecord>, StoreError> {
        let output = self
            .client
            .get_item()
            .table_name(&self.table)
            .set_key(Some(key(delivery_pk(id), DELIVERY_SK)))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| classify("GetItem", e))?;
        output.item.map(delivery_from_item).transpose()
    }

    /// One bounded Query per shard (newest first), merged.
    async fn endpoint_deliveries(
        &self,
        endpoint: &EndpointId,
        limit: usize,
    ) -> Result<Vec<DeliveryRecord>, StoreError> {
        let page = i32::try_from(limit).unwrap_or(i32::MAX);
        let mut queries = tokio::task::JoinSet::new();
        for shard in 0..DELIVERY_SHARDS {
            let query = self
                .client
                .query()
                .table_name(&self.table)
                .index_name(GSI5)
                .key_condition_expression("#pk = :pk")
                .expression_attribute_names("#pk", GSI5_PK)
                .expression_attribute_values(":pk", s(deliveries_pk(endpoint, shard)))
                .scan_index_forward(false)
                .limit(page)
                .send();
            queries.spawn(query);
        }
        let mut deliveries = Vec::new();
        for output in queries.join_all().await {
            let output = output.map_err(|e| classify("Query", e))?;
            for item in output.items.unwrap_or_default() {
                deliveries.push(delivery_from_item(item)?);
            }
        }
        deliveries.sort_by(|a, b| b.event_id.cmp(&a.event_id));
        deliveries.truncate(limit);
        Ok(deliveries)
    }
}
