//! The dispatcher (events-dispatcher, on the table's stream): each new event to every enabled
//! endpoint subscribed to its type, as one queued delivery per (event, endpoint), sent ten to a
//! call, the calls at once. A stream retries from the first record reported failed, so that is what is reported;
//! the records after it come again and their deliveries are the same (a delivery's id is its
//! event and endpoint, and its attempt is recorded once).

use std::time::Duration;

use domain::events::StoredEvent;
use domain::timestamp::Timestamp;
use domain::webhooks::delivery::Delivery;
use store::webhooks::WebhookEndpoints;

use super::{DeliveryMessage, DeliveryQueue, EndpointCache, QUEUE_BATCH, Queued};

/// The dispatcher's state, built once per cold start.
pub struct DispatchState<S, Q> {
    pub store: S,
    pub queue: Q,
    pub endpoints: EndpointCache,
}

/// Queues the deliveries of `events` (each with its stream record's id, in stream order);
/// the id of the first record whose deliveries were not all queued, if any.
pub async fn dispatch<S: WebhookEndpoints, Q: DeliveryQueue>(
    state: &DispatchState<S, Q>,
    events: &[(String, StoredEvent)],
) -> Option<String> {
    let first_id = || events.first().map(|(id, _)| id.clone());
    let endpoints = match state.endpoints.all(&state.store).await {
        Ok(endpoints) => endpoints,
        Err(error) => {
            tracing::error!(error = %error.detail(), "cannot read the webhook endpoints");
            return first_id();
        }
    };
    let now = Timestamp::now();
    // (the record's index, its message)
    let queued: Vec<(usize, Queued)> = events
        .iter()
        .enumerate()
        .flat_map(|(index, (_, event))| {
            endpoints
                .iter()
                .filter(|endpoint| endpoint.receives(event.event_type))
                .map(move |endpoint| {
                    let message = DeliveryMessage {
                        delivery: Delivery {
                            event_id: event.id.clone(),
                            endpoint_id: endpoint.id.clone(),
                            attempt: 1,
                            due: now,
                        },
                        body: event.body.clone(),
                    };
                    (
                        index,
                        Queued {
                            message,
                            delay: Duration::ZERO,
                        },
                    )
                })
        })
        .collect();
    // Every call at once: a batch costs one queue call's time, not ten (BENCHMARKS.md). A call
    // that failed makes the stream retry from its earliest record; the calls after it that
    // went through queue the same deliveries again, which the sender records once.
    let sends = queued.chunks(QUEUE_BATCH).map(|chunk| async move {
        let batch: Vec<Queued> = chunk.iter().map(|(_, queued)| queued.clone()).collect();
        let failed = match state.queue.send(&batch).await {
            Ok(failed) => failed,
            Err(error) => {
                tracing::error!(error = %error, "queueing deliveries failed");
                (0..batch.len()).collect()
            }
        };
        failed.iter().map(|index| chunk[*index].0).min()
    });
    let first_failed = futures_util::future::join_all(sends)
        .await
        .into_iter()
        .flatten()
        .min()?;
    Some(events[first_failed].0.clone())
}
