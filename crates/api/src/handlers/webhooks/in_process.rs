//! local-api's deliveries queue: each message handed, once its delay has passed, to the
//! sender's own engine ([`super::send::handle`]) in this process, with the same signing,
//! recording and retries as webhook-sender on SQS (its retries' waits divided by local-api's
//! [`RetryScale`]). Receivers may be on loopback: local-api is for a developer's machine only.

use std::sync::Arc;

use clients::webhooks::{Reach, WebhookClient};
use store::webhooks::WebhookStore;
use tokio::sync::mpsc;

use super::send::{RetryScale, SendState, handle};
use super::{DeliveryQueue, EndpointCache, EndpointsQueue, QueueError, Queued};

/// The queue of this process's sender: a channel its worker reads.
pub struct InProcessQueue(mpsc::UnboundedSender<Queued>);

impl InProcessQueue {
    /// A sender over `store` whose retries wait the schedule divided by `retry_scale`, working
    /// on the current runtime, and the queue that feeds it.
    pub fn start<S: WebhookStore + 'static>(
        store: S,
        retry_scale: RetryScale,
    ) -> Arc<dyn EndpointsQueue> {
        let (queue, mut received) = mpsc::unbounded_channel::<Queued>();
        let sender = Arc::new(SendState {
            store,
            queue: InProcessQueue(queue.clone()),
            client: WebhookClient::new(Reach::AlsoLoopbackForTests),
            endpoints: EndpointCache::default(),
            in_flight: Default::default(),
            retry_scale,
        });
        tokio::spawn(async move {
            while let Some(queued) = received.recv().await {
                let sender = sender.clone();
                tokio::spawn(async move {
                    tokio::time::sleep(queued.delay).await;
                    let body =
                        serde_json::to_string(&queued.message).expect("a message serialises");
                    if let Err(error) = handle(&sender, &body).await {
                        tracing::warn!(error = %error, "local delivery not handled");
                    }
                });
            }
        });
        Arc::new(InProcessQueue(queue))
    }
}

impl DeliveryQueue for InProcessQueue {
    async fn send(&self, batch: &[Queued]) -> Result<Vec<usize>, QueueError> {
        for queued in batch {
            self.0
                .send(queued.clone())
                .map_err(|_| QueueError("the local sender stopped".into()))?;
        }
        Ok(Vec::new())
    }
}
