//! Webhook delivery (issue 46; docs/events.md, "Delivery"): the attempt engine both the Lambda
//! sender and local-api run ([`attempt`]: sign, POST through [`clients::webhooks`], judge the
//! answer with [`domain::webhooks::retry`]); the dispatcher's fan-out ([`dispatch`]) and the
//! sender's handling of one queued delivery ([`send`]), over a [`DeliveryQueue`] (SQS in the
//! Lambda glue, [`in_process`] in local-api) and the endpoints each instance keeps for 30 s
//! ([`EndpointCache`]); the operators' routes ([`endpoints`], [`operations`]).

pub mod dispatch;
pub mod endpoints;
pub mod in_flight;
pub mod in_process;
pub mod operations;
pub mod send;

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use bytes::Bytes;
use clients::webhooks::{Outgoing, WebhookClient};
use domain::events::EventId;
use domain::timestamp::Timestamp;
use domain::webhooks::delivery::{Attempt, AttemptResult, Delivery};
use domain::webhooks::endpoint::{Endpoint, EndpointId};
use domain::webhooks::retry::{Answer, Streak, Verdict, streak, verdict};
use domain::webhooks::signature_header;
use serde::{Deserialize, Serialize};
use store::StoreError;
use store::webhooks::WebhookEndpoints;

/// An attempt made: its record, what it decides for the delivery and for the endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempted {
    pub attempt: Attempt,
    pub verdict: Verdict,
    pub streak: Streak,
}

/// Makes attempt `number` of delivering `body` (event `event_id`'s bytes as stored) to
/// `endpoint`, signed with every secret that signs now; `jitter` is random (the retry's).
pub async fn attempt(
    client: &WebhookClient,
    endpoint: &Endpoint,
    event_id: &EventId,
    body: &Bytes,
    number: u32,
    jitter: u64,
) -> Attempted {
    let at = Timestamp::now();
    let timestamp = i64::try_from(at.unix_seconds()).unwrap_or(i64::MAX);
    let signature = signature_header(
        &endpoint.secrets.signing(at),
        event_id.as_str(),
        timestamp,
        body,
    );
    let sent = client
        .post(Outgoing {
            url: endpoint.url.as_str(),
            id: event_id.as_str(),
            timestamp,
            signature: &signature,
            body,
        })
        .await;
    let (answer, result, excerpt) = match sent.result {
        Ok(answered) => (
            Answer::Status {
                code: answered.status,
                retry_after: answered.retry_after,
            },
            AttemptResult::Status(answered.status),
            answered.excerpt,
        ),
        Err(failure) => (
            Answer::Failed(failure),
            AttemptResult::Failed(failure),
            String::new(),
        ),
    };
    let now = Timestamp::now();
    let verdict = verdict(&answer, number, now, jitter);
    Attempted {
        streak: streak(&verdict, endpoint.failing_since, now),
        verdict,
        attempt: Attempt {
            number,
            at,
            result,
            latency_ms: u64::try_from(sent.latency.as_millis()).unwrap_or(u64::MAX),
            excerpt,
        },
    }
}

/// The longest delay SQS gives a message: a longer wait hops through the queue until due.
pub const MAX_QUEUE_DELAY: Duration = Duration::from_secs(900);

/// How long an instance keeps the endpoints it read.
pub const ENDPOINTS_KEPT: Duration = Duration::from_secs(30);

/// One queued delivery: its next attempt and the event's bytes as stored (so an attempt reads
/// no event).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeliveryMessage {
    pub delivery: Delivery,
    pub body: String,
}

/// A message to queue, visible after `delay` (at most [`MAX_QUEUE_DELAY`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Queued {
    pub message: DeliveryMessage,
    pub delay: Duration,
}

/// Why the queue took nothing (each message's own failure is reported apart).
#[derive(Debug, Clone, thiserror::Error)]
#[error("the deliveries queue is unavailable: {0}")]
pub struct QueueError(pub String);

/// The deliveries queue.
pub trait DeliveryQueue: Send + Sync {
    /// Sends `batch` (at most 10 messages) in one call; the indexes of those not taken.
    fn send(&self, batch: &[Queued])
    -> impl Future<Output = Result<Vec<usize>, QueueError>> + Send;
}

/// The deliveries queue as a handler state holds it (whichever queue its process has).
pub trait EndpointsQueue: Send + Sync {
    fn send_batch<'a>(
        &'a self,
        batch: &'a [Queued],
    ) -> Pin<Box<dyn Future<Output = Result<Vec<usize>, QueueError>> + Send + 'a>>;
}

impl<Q: DeliveryQueue> EndpointsQueue for Q {
    fn send_batch<'a>(
        &'a self,
        batch: &'a [Queued],
    ) -> Pin<Box<dyn Future<Output = Result<Vec<usize>, QueueError>> + Send + 'a>> {
        Box::pin(self.send(batch))
    }
}

/// The most messages one call takes (SQS's SendMessageBatch).
pub const QUEUE_BATCH: usize = 10;

/// The endpoints, read at most once per [`ENDPOINTS_KEPT`] per instance (the dispatcher reads
/// them for every event; the sender for every attempt).
#[derive(Debug, Default)]
pub struct EndpointCache {
    kept: Mutex<Option<(Instant, Arc<Vec<Endpoint>>)>>,
}

impl EndpointCache {
    /// Every endpoint, as read within the last 30 s.
    pub async fn all(
        &self,
        store: &impl WebhookEndpoints,
    ) -> Result<Arc<Vec<Endpoint>>, StoreError> {
        if let Some((read, endpoints)) = self.lock().as_ref()
            && read.elapsed() < ENDPOINTS_KEPT
        {
            return Ok(endpoints.clone());
        }
        let endpoints = Arc::new(store.endpoints().await?);
        *self.lock() = Some((Instant::now(), endpoints.clone()));
        Ok(endpoints)
    }

    pub async fn get(
        &self,
        store: &impl WebhookEndpoints,
        id: &EndpointId,
    ) -> Result<Option<Endpoint>, StoreError> {
        Ok(self.all(store).await?.iter().find(|e| e.id == *id).cloned())
    }

    /// Reads again at the next use (this instance changed an endpoint).
    pub fn forget(&self) {
        *self.lock() = None;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<(Instant, Arc<Vec<Endpoint>>)>> {
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A random value for a retry's jitter.
pub fn jitter() -> u64 {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).expect("the system random source works");
    u64::from_le_bytes(bytes)
}
