//! The webhook functions' glue (issue 46): the deliveries queue on SQS, the dispatcher's and the
//! sender's state from the environment, and their Lambda events (the table's stream records,
//! the queue's messages) turned into the handlers' inputs and their partial batch failures.

use std::collections::HashMap;

use aws_lambda_events::event::dynamodb::Event as StreamEvent;
use aws_lambda_events::event::sqs::{BatchItemFailure, SqsBatchResponse, SqsEvent};
use aws_lambda_events::event::streams::{DynamoDbBatchItemFailure, DynamoDbEventResponse};
use aws_sdk_dynamodb::types::AttributeValue;
use aws_sdk_sqs::types::SendMessageBatchRequestEntry;

use crate::aws::lambda_sqs_client;
use crate::runtime::{require, store_from_env, warm};
use api::config::{self, Env};
use api::handlers::webhooks::dispatch::{DispatchState, dispatch};
use api::handlers::webhooks::endpoints::EndpointsState;
use api::handlers::webhooks::send::{RetryScale, SendState, handle};
use api::handlers::webhooks::{DeliveryQueue, EndpointCache, QueueError, Queued};
use api::http::operator::OperatorAuth;
use clients::webhooks::{Reach, WebhookClient};
use domain::webhooks::endpoint::UrlPolicy;
use store::DynamoStore;

/// The deliveries queue on SQS.
pub struct SqsQueue {
    client: aws_sdk_sqs::Client,
    url: String,
}

impl SqsQueue {
    /// `WEBHOOK_QUEUE_URL`, through a client built from Lambda's environment.
    pub fn from_env() -> Self {
        Self {
            client: require(lambda_sqs_client(&Env)),
            url: require(config::webhook_queue_url(&Env)),
        }
    }
}

impl DeliveryQueue for SqsQueue {
    async fn send(&self, batch: &[Queued]) -> Result<Vec<usize>, QueueError> {
        let mut entries = Vec::with_capacity(batch.len());
        for (index, queued) in batch.iter().enumerate() {
            let body = serde_json::to_string(&queued.message)
                .map_err(|error| QueueError(error.to_string()))?;
            let entry = SendMessageBatchRequestEntry::builder()
                .id(index.to_string())
                .message_body(body)
                .delay_seconds(i32::try_from(queued.delay.as_secs()).unwrap_or(900))
                .build()
                .map_err(|error| QueueError(error.to_string()))?;
            entries.push(entry);
        }
        let output = self
            .client
            .send_message_batch()
            .queue_url(&self.url)
            .set_entries(Some(entries))
            .send()
            .await
            .map_err(|error| {
                QueueError(aws_sdk_sqs::error::DisplayErrorContext(error).to_string())
            })?;
        Ok(output
            .failed
            .iter()
            .filter_map(|failed| failed.id.parse().ok())
            .collect())
    }
}

/// The dispatcher's state: `TABLE_NAME`, `WEBHOOK_QUEUE_URL`; the DynamoDB connection warmed.
pub async fn dispatch_state() -> DispatchState<DynamoStore, SqsQueue> {
    let (store, dynamodb) = store_from_env();
    let queue = SqsQueue::from_env();
    warm(&dynamodb, None).await;
    DispatchState {
        store,
        queue,
        endpoints: EndpointCache::default(),
    }
}

/// The sender's state: `TABLE_NAME`, `WEBHOOK_QUEUE_URL` and (tests only)
/// `WEBHOOK_ALLOW_LOOPBACK_FOR_TESTS`; the DynamoDB connection warmed.
pub async fn send_state() -> SendState<DynamoStore, SqsQueue> {
    let (store, dynamodb) = store_from_env();
    let queue = SqsQueue::from_env();
    let client = WebhookClient::new(require(config::webhook_reach(&Env)));
    warm(&dynamodb, None).await;
    SendState {
        store,
        queue,
        client,
        endpoints: EndpointCache::default(),
        in_flight: Default::default(),
        retry_scale: RetryScale::REAL,
    }
}

/// The operators' state (webhook-endpoints): `TABLE_NAME`, `WEBHOOK_QUEUE_URL`,
/// `MAX_BODY_BYTES` and (tests only) `WEBHOOK_ALLOW_LOOPBACK_FOR_TESTS`, which lets an
/// endpoint's URL be loopback http as it lets the sender reach it; operators known by IAM.
pub async fn endpoints_state() -> EndpointsState<DynamoStore> {
    let (store, dynamodb) = store_from_env();
    let queue = SqsQueue::from_env();
    let url_policy = match require(config::webhook_reach(&Env)) {
        Reach::PublicOnly => UrlPolicy::HttpsOnly,
        Reach::AlsoLoopbackForTests => UrlPolicy::AlsoLoopbackHttp,
    };
    let max_body_bytes = require(config::max_body_bytes(&Env));
    warm(&dynamodb, None).await;
    EndpointsState {
        store,
        queue: std::sync::Arc::new(queue),
        url_policy,
        operators: OperatorAuth::Iam,
        max_body_bytes,
    }
}

/// The dispatcher's invocation: the batch's new event items (the filter lets only those through;
/// any other record, or an image that is not an event, is logged and passed over), dispatched;
/// the first record not fully queued reported, so the stream retries from it.
pub async fn on_stream(
    state: &DispatchState<DynamoStore, SqsQueue>,
    event: StreamEvent,
) -> Result<DynamoDbEventResponse, lambda_runtime::Error> {
    let mut events = Vec::with_capacity(event.records.len());
    for record in event.records {
        let id = record.change.sequence_number.clone().unwrap_or_default();
        if record.event_name != "INSERT" {
            continue;
        }
        let image: HashMap<String, AttributeValue> = record.change.new_image.into();
        match store::dynamo::event_from_item(&image) {
            Ok(stored) => events.push((id, stored)),
            Err(error) => {
                tracing::error!(error = %error.detail(), sequence = %id, "not an event item");
            }
        }
    }
    let mut response = DynamoDbEventResponse::default();
    if let Some(failed) = dispatch(state, &events).await {
        let mut failure = DynamoDbBatchItemFailure::default();
        failure.item_identifier = Some(failed);
        response.batch_item_failures.push(failure);
    }
    Ok(response)
}

/// The sender's invocation: each message handled at once (one slow endpoint does not hold the
/// others back); each that failed is reported, and SQS delivers it again.
pub async fn on_messages(
    state: &'static SendState<DynamoStore, SqsQueue>,
    event: SqsEvent,
) -> Result<SqsBatchResponse, lambda_runtime::Error> {
    let mut handled = tokio::task::JoinSet::new();
    for message in event.records {
        let id = message.message_id.unwrap_or_default();
        let body = message.body.unwrap_or_default();
        handled.spawn(async move { (id, handle(state, &body).await) });
    }
    let mut response = SqsBatchResponse::default();
    for (id, result) in handled.join_all().await {
        match result {
            Ok(outcome) => tracing::info!(message = %id, outcome = ?outcome, "delivery handled"),
            Err(error) => {
                tracing::error!(message = %id, error = %error, "delivery left on the queue");
                let mut failure = BatchItemFailure::default();
                failure.item_identifier = id;
                response.batch_item_failures.push(failure);
            }
        }
    }
    Ok(response)
}
