//! The sender (webhook-sender, on the deliveries queue): one queued delivery per message. Not yet
//! due, it hops through the queue again (SQS delays a message 15 minutes at most); due, it is
//! attempted, its attempt recorded, the endpoint's streak changed if it changed, and a retry
//! queued with its delay. A message whose attempt is already recorded (received twice, or
//! queued again by a retried stream batch) is dropped.

use std::num::NonZeroU32;
use std::time::Duration;

use bytes::Bytes;
use clients::webhooks::WebhookClient;
use domain::timestamp::Timestamp;
use domain::webhooks::retry::{Streak, Verdict};
use store::StoreError;
use store::metrics::{self, Metric};
use store::webhooks::{DeliveryStatus, WebhookStore};

use super::{
    DeliveryMessage, DeliveryQueue, EndpointCache, MAX_QUEUE_DELAY, QueueError, Queued, attempt,
    jitter,
};

/// The sender's state, built once per cold start.
pub struct SendState<S, Q> {
    pub store: S,
    pub queue: Q,
    pub client: WebhookClient,
    pub endpoints: EndpointCache,
    /// Each endpoint's attempts in flight in this instance ([`super::in_flight`]).
    pub in_flight: super::in_flight::InFlight,
    /// How much shorter than the schedule each retry waits.
    pub retry_scale: RetryScale,
}

/// What a retry's wait is divided by: 1 in the deployed sender (its glue sets nothing else), more
/// in local-api (`LOCAL_API_WEBHOOK_RETRY_SCALE`), so that a developer sees a delivery's retries
/// in seconds. The divided wait is the retry's due time as well as its delay, so the sender's
/// due check agrees with the queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryScale(pub NonZeroU32);

impl RetryScale {
    /// The schedule's own waits.
    pub const REAL: Self = Self(NonZeroU32::MIN);

    fn shorten(self, wait: Duration) -> Duration {
        wait / self.0.get()
    }
}

impl Default for RetryScale {
    fn default() -> Self {
        Self::REAL
    }
}

/// Why a message is left on the queue, to be received again.
#[derive(Debug, thiserror::Error)]
pub enum SendError {
    #[error("not a delivery message")]
    Malformed,
    #[error("{}", .0.detail())]
    Store(#[from] StoreError),
    #[error(transparent)]
    Queue(#[from] QueueError),
}

/// What became of one message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Handled {
    /// Not due: queued again, this much later.
    NotDue(Duration),
    /// Its endpoint is failing or slow and has its attempt in flight here: queued again,
    /// unattempted.
    Deferred,
    /// Its attempt was made and recorded: this verdict.
    Attempted(Verdict),
    /// Its attempt was recorded before, or its endpoint is gone or disabled.
    Dropped,
}

/// Handles one message of the deliveries queue.
pub async fn handle<S: WebhookStore, Q: DeliveryQueue>(
    state: &SendState<S, Q>,
    body: &str,
) -> Result<Handled, SendError> {
    let message: DeliveryMessage = serde_json::from_str(body).map_err(|_| SendError::Malformed)?;
    let delivery = &message.delivery;
    let now = Timestamp::now();
    // SQS delays by whole seconds: within one of its time, an attempt is due.
    let wait = Duration::from_millis(now.millis_until(delivery.due));
    if wait > Duration::from_secs(1) {
        requeue(&state.queue, message.clone(), wait).await?;
        return Ok(Handled::NotDue(wait.min(MAX_QUEUE_DELAY)));
    }
    let endpoint = state
        .endpoints
        .get(&state.store, &delivery.endpoint_id)
        .await?;
    let Some(endpoint) = endpoint.filter(|endpoint| endpoint.state.is_enabled()) else {
        return Ok(Handled::Dropped);
    };
    let Some(slot) = state.in_flight.take(&endpoint) else {
        requeue(&state.queue, message.clone(), super::in_flight::DEFERRED).await?;
        return Ok(Handled::Deferred);
    };
    let recorded = state.store.delivery(&delivery.id()).await?;
    if recorded.is_some_and(|record| record.attempts.len() >= delivery.attempt as usize) {
        return Ok(Handled::Dropped);
    }
    let body = Bytes::from(message.body.clone());
    let attempted = attempt(
        &state.client,
        &endpoint,
        &delivery.event_id,
        &body,
        delivery.attempt,
        jitter(),
    )
    .await;
    // Given back as the attempt ends: its time, not the store's, judges the endpoint slow.
    slot.attempted();
    let disabling = matches!(attempted.streak, Streak::Disable(_));
    let status = match (&attempted.verdict, disabling) {
        (Verdict::Delivered, _) => DeliveryStatus::Delivered,
        (Verdict::Gone, _) | (_, true) => DeliveryStatus::Abandoned,
        (Verdict::Exhausted, _) => DeliveryStatus::Failed,
        (Verdict::Retry(_), false) => DeliveryStatus::Retrying,
    };
    state
        .store
        .record_attempt(delivery, &attempted.attempt, status)
        .await?;
    if attempted.streak != Streak::Unchanged {
        let changed = state
            .store
            .change_streak(&endpoint.id, attempted.streak, Timestamp::now())
            .await?;
        if changed {
            state.endpoints.forget();
        }
        if changed && disabling {
            metrics::count(Metric::WebhookEndpointsDisabled);
            tracing::warn!(endpoint = %endpoint.id, "webhook endpoint disabled");
        }
    }
    if let (Verdict::Retry(wait), DeliveryStatus::Retrying) = (&attempted.verdict, status) {
        let wait = state.retry_scale.shorten(*wait);
        let mut next = message.clone();
        next.delivery.attempt += 1;
        next.delivery.due = Timestamp::now()
            .plus_seconds(i64::try_from(wait.as_secs()).unwrap_or(i64::MAX))
            .unwrap_or(now);
        requeue(&state.queue, next, wait).await?;
    }
    Ok(Handled::Attempted(attempted.verdict))
}

/// Queues `message` again, visible after `wait` (at most SQS's 15 minutes).
async fn requeue<Q: DeliveryQueue>(
    queue: &Q,
    message: DeliveryMessage,
    wait: Duration,
) -> Result<(), QueueError> {
    let queued = Queued {
        message,
        delay: wait.min(MAX_QUEUE_DELAY),
    };
    match queue.send(std::slice::from_ref(&queued)).await?.as_slice() {
        [] => Ok(()),
        _ => Err(QueueError("the message was not taken".into())),
    }
}
