//! Issue 46: one failing endpoint never delays the others' deliveries. The sender lets a failing
//! endpoint have one attempt in flight per instance; its other messages go back on the queue,
//! unattempted, while a healthy endpoint's are attempted at once (`handlers::webhooks::in_flight`).

use std::sync::{Arc, Mutex};

use api::handlers::webhooks::in_flight::DEFERRED;
use api::handlers::webhooks::send::{Handled, SendState, handle};
use api::handlers::webhooks::{DeliveryMessage, DeliveryQueue, EndpointCache, QueueError, Queued};
use clients::webhooks::{Reach, WebhookClient};
use domain::events::EventId;
use domain::timestamp::Timestamp;
use domain::webhooks::delivery::Delivery;
use domain::webhooks::endpoint::{
    Endpoint, EndpointId, EndpointState, EndpointUrl, SecretText, Secrets, Subscription, UrlPolicy,
};
use store::MemoryStore;
use store::webhooks::WebhookEndpoints;
use testkit::webhook_receiver::{Answer, WebhookReceiver};

#[derive(Clone, Default)]
struct Recorded(Arc<Mutex<Vec<Queued>>>);

impl DeliveryQueue for Recorded {
    async fn send(&self, batch: &[Queued]) -> Result<Vec<usize>, QueueError> {
        self.0.lock().unwrap().extend_from_slice(batch);
        Ok(Vec::new())
    }
}

async fn saved(store: &MemoryStore, url: &str, failing: bool) -> Endpoint {
    let endpoint = Endpoint {
        id: EndpointId::generate(),
        url: EndpointUrl::parse(url, UrlPolicy::AlsoLoopbackHttp).unwrap(),
        subscription: Subscription::All,
        description: "in flight".into(),
        state: EndpointState::Enabled,
        secrets: Secrets {
            current: SecretText::generate().unwrap(),
            previous: None,
        },
        failing_since: failing.then(|| Timestamp::now().plus_seconds(-60).unwrap()),
        revision: 1,
    };
    assert!(store.create_endpoint(&endpoint).await.unwrap());
    endpoint
}

fn message(endpoint: &Endpoint) -> String {
    let event = EventId::new(Timestamp::now());
    let body = format!(r#"{{"id":"{event}","type":"wallet.linked"}}"#);
    serde_json::to_string(&DeliveryMessage {
        delivery: Delivery {
            event_id: event,
            endpoint_id: endpoint.id.clone(),
            attempt: 1,
            due: Timestamp::now(),
        },
        body,
    })
    .unwrap()
}

#[tokio::test]
async fn a_failing_endpoint_has_one_attempt_in_flight_and_a_healthy_one_is_not_held_back() {
    let receiver = WebhookReceiver::start(Answer::status(204)).await;
    let store = MemoryStore::default();
    let failing = saved(&store, &receiver.url("/hooks"), true).await;
    let healthy = saved(&store, &receiver.url("/hooks"), false).await;
    let queue = Recorded::default();
    let state = SendState {
        store,
        queue: queue.clone(),
        client: WebhookClient::new(Reach::AlsoLoopbackForTests),
        endpoints: EndpointCache::default(),
        in_flight: Default::default(),
    };
    // An attempt to the failing endpoint is in flight in this instance (as one stalled).
    let held = state
        .in_flight
        .take(&failing)
        .expect("the first is let through");
    assert_eq!(
        handle(&state, &message(&failing)).await.unwrap(),
        Handled::Deferred
    );
    let requeued = queue.0.lock().unwrap().clone();
    assert_eq!(requeued.len(), 1);
    assert_eq!(requeued[0].delay, DEFERRED);
    assert_eq!(requeued[0].message.delivery.attempt, 1, "unattempted");
    // The healthy endpoint's deliveries go at once, two in flight together.
    let (first, second) = (message(&healthy), message(&healthy));
    let (one, two) = tokio::join!(handle(&state, &first), handle(&state, &second));
    assert!(matches!(one.unwrap(), Handled::Attempted(_)));
    assert!(matches!(two.unwrap(), Handled::Attempted(_)));
    // Once the failing endpoint's attempt ends, its next is attempted.
    drop(held);
    assert!(matches!(
        handle(&state, &message(&failing)).await.unwrap(),
        Handled::Attempted(_)
    ));
    assert_eq!(receiver.received().len(), 3);
}
