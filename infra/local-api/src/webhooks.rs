//! local-api's deliveries (issue 46, docs/events.md): what the table's stream and the dispatcher
//! are to the deployed stack. A task follows the in-memory store's journal of events and hands
//! each to the dispatcher's own code, which queues one delivery per subscribed endpoint to the
//! sender's engine in this process (the same signing, recording and retries). Endpoints come
//! from an operator (`POST /api/webhooks/endpoints` with the printed key) or from
//! `LOCAL_API_WEBHOOK_URLS`, each created at start with its secret printed. Retries wait the
//! schedule divided by `LOCAL_API_WEBHOOK_RETRY_SCALE` (1, the real schedule, unless set).

use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

use api::handlers::webhooks::dispatch::{DispatchState, dispatch};
use api::handlers::webhooks::in_process::InProcessQueue;
use api::handlers::webhooks::send::RetryScale;
use api::handlers::webhooks::{DeliveryQueue, EndpointCache, EndpointsQueue, QueueError, Queued};
use domain::webhooks::endpoint::{
    Endpoint, EndpointId, EndpointState, EndpointUrl, SecretText, Secrets, Subscription, UrlPolicy,
};
use store::MemoryStore;
use store::webhooks::WebhookEndpoints;

/// Names the URLs (comma-separated) local-api delivers every event to.
pub const URLS_VAR: &str = "LOCAL_API_WEBHOOK_URLS";

/// Divides every retry's wait (`60`: 5 s, 5 min, 30 min become 83 ms, 5 s, 30 s). local-api
/// only: the deployed sender reads no such setting.
pub const RETRY_SCALE_VAR: &str = "LOCAL_API_WEBHOOK_RETRY_SCALE";

/// `LOCAL_API_WEBHOOK_RETRY_SCALE`, a whole number from 1; the real schedule when unset.
pub fn retry_scale_from_env() -> Result<RetryScale, String> {
    match std::env::var(RETRY_SCALE_VAR) {
        Err(_) => Ok(RetryScale::REAL),
        Ok(text) => text
            .trim()
            .parse::<NonZeroU32>()
            .map(RetryScale)
            .map_err(|_| format!("{RETRY_SCALE_VAR}: {text:?} is not a whole number from 1")),
    }
}

/// How often the journal is looked at.
const POLL: Duration = Duration::from_millis(200);

/// An endpoint for each URL of `LOCAL_API_WEBHOOK_URLS`, receiving every type: each URL with
/// its secret (`whsec_`), to print.
pub async fn endpoints_from_env(
    store: &impl WebhookEndpoints,
) -> Result<Vec<(String, String)>, String> {
    let Ok(urls) = std::env::var(URLS_VAR) else {
        return Ok(Vec::new());
    };
    let mut made = Vec::new();
    for text in urls.split(',').map(str::trim).filter(|url| !url.is_empty()) {
        let url = EndpointUrl::parse(text, UrlPolicy::AlsoLoopbackHttp)
            .map_err(|e| format!("{URLS_VAR}: {text}: {e}"))?;
        let secret = SecretText::generate().map_err(|e| format!("no random secret: {e}"))?;
        let endpoint = Endpoint {
            id: EndpointId::generate(),
            url,
            subscription: Subscription::All,
            description: URLS_VAR.to_owned(),
            state: EndpointState::Enabled,
            secrets: Secrets {
                current: secret.clone(),
                previous: None,
            },
            failing_since: None,
            revision: 1,
        };
        store
            .create_endpoint(&endpoint)
            .await
            .map_err(|e| e.to_string())?;
        made.push((text.to_owned(), secret.expose().to_owned()));
    }
    Ok(made)
}

/// The in-process sender's queue, as the dispatcher's code takes one.
struct Sender(Arc<dyn EndpointsQueue>);

impl DeliveryQueue for Sender {
    async fn send(&self, batch: &[Queued]) -> Result<Vec<usize>, QueueError> {
        self.0.send_batch(batch).await
    }
}

/// Follows `store`'s journal from its first event, dispatching each (retries divided by
/// `retry_scale`); an event whose deliveries could not all be queued is tried again at the next
/// look.
pub fn follow(store: MemoryStore, retry_scale: RetryScale) {
    let state = DispatchState {
        store: store.clone(),
        queue: Sender(InProcessQueue::start(store.clone(), retry_scale)),
        endpoints: EndpointCache::default(),
    };
    tokio::spawn(async move {
        let mut position = 0;
        loop {
            tokio::time::sleep(POLL).await;
            let (events, next) = store.journal(position);
            if events.is_empty() {
                continue;
            }
            // Read afresh each time: an endpoint an operator just made receives the next event.
            state.endpoints.forget();
            let records: Vec<(String, _)> = events
                .into_iter()
                .enumerate()
                .map(|(at, event)| ((position + at).to_string(), event))
                .collect();
            position = match dispatch(&state, &records).await {
                None => next,
                Some(failed) => failed.parse().unwrap_or(next),
            };
        }
    });
}
