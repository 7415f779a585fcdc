//! Issue 46: one failing or slow endpoint never delays the others' deliveries. The sender lets a
//! failing endpoint, or one whose attempt took long even if it answered 2xx, have one attempt in
//! flight per instance; its other messages go back on the queue, unattempted, while a healthy
//! endpoint's are attempted at once (`handlers::webhooks::in_flight`).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use api::handlers::webhooks::in_flight::{DEFERRED, InFlight};
use api::handlers::webhooks::send::{Handled, SendState, handle};
use api::handlers::webhooks::{DeliveryMessage, DeliveryQueue, EndpointCache, QueueError, Queued};
use clients::webhooks::{Reach, WebhookClient};
use domain::events::EventId;
use domain::timestamp::Timestamp;
use domain::webhooks::delivery::Delivery;
use domain::webhooks::endpoint::{
    Endpoint, EndpointId, EndpointState, EndpointUrl, SecretText, Secrets, Subscription, UrlPolicy,
};
use domain::webhooks::retry::Verdict;
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

fn sender(
    store: MemoryStore,
    queue: Recorded,
    in_flight: InFlight,
) -> SendState<MemoryStore, Recorded> {
    SendState {
        store,
        queue,
        client: WebhookClient::new(Reach::AlsoLoopbackForTests),
        endpoints: EndpointCache::default(),
        in_flight,
        retry_scale: Default::default(),
    }
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
    let state = sender(store, queue.clone(), InFlight::default());
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

/// A slow endpoint that still answers 2xx is bounded like a failing one: from the moment an
/// attempt to it has taken the slow time (here 100 ms, the sender's 5 s), its other messages in
/// this instance are deferred while one is in flight, and a quick endpoint's deliveries go at once
/// beside it. The mark stays after the slow attempt ends, and a quick attempt clears it.
#[tokio::test]
async fn a_slow_endpoint_answering_2xx_has_one_attempt_in_flight_and_a_fast_one_goes_beside_it() {
    let stalling = WebhookReceiver::start(Answer::status(200)).await;
    stalling.script([Answer::Stall(Duration::from_secs(3))]);
    let quick = WebhookReceiver::start(Answer::status(204)).await;
    let store = MemoryStore::default();
    let slow = saved(&store, &stalling.url("/hooks"), false).await;
    let fast = saved(&store, &quick.url("/hooks"), false).await;
    let queue = Recorded::default();
    let state = sender(
        store,
        queue.clone(),
        InFlight::slow_after(Duration::from_millis(100)),
    );

    let stalled = message(&slow);
    let beside = async {
        // The stalled attempt is at the receiver and has been in flight past the slow time.
        while stalling.received().is_empty() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        let deferred = handle(&state, &message(&slow)).await.unwrap();
        let (one, two, three) = (message(&fast), message(&fast), message(&fast));
        let fast_ones = tokio::join!(
            handle(&state, &one),
            handle(&state, &two),
            handle(&state, &three)
        );
        // Still in flight: no slot for the slow endpoint yet.
        let still_stalled = state.in_flight.take(&slow).is_none();
        (deferred, fast_ones, still_stalled)
    };
    let (first, (deferred, (one, two, three), still_stalled)) =
        tokio::join!(handle(&state, &stalled), beside);
    assert_eq!(
        deferred,
        Handled::Deferred,
        "the slow endpoint's second waits"
    );
    for fast_one in [one, two, three] {
        assert_eq!(fast_one.unwrap(), Handled::Attempted(Verdict::Delivered));
    }
    assert!(
        still_stalled,
        "the quick deliveries went while the slow one was in flight"
    );
    assert_eq!(quick.received().len(), 3);
    assert_eq!(first.unwrap(), Handled::Attempted(Verdict::Delivered));
    let requeued = queue.0.lock().unwrap().clone();
    assert_eq!(requeued.len(), 1);
    assert_eq!(requeued[0].delay, DEFERRED);
    assert_eq!(requeued[0].message.delivery.attempt, 1, "unattempted");

    // It ended slow: still one at a time. Its next attempt is quick, and clears the mark.
    let held = state.in_flight.take(&slow).expect("one is let through");
    assert_eq!(
        handle(&state, &message(&slow)).await.unwrap(),
        Handled::Deferred
    );
    drop(held);
    assert_eq!(
        handle(&state, &message(&slow)).await.unwrap(),
        Handled::Attempted(Verdict::Delivered)
    );
    let (one, two) = (message(&slow), message(&slow));
    let (one, two) = tokio::join!(handle(&state, &one), handle(&state, &two));
    assert_eq!(one.unwrap(), Handled::Attempted(Verdict::Delivered));
    assert_eq!(two.unwrap(), Handled::Attempted(Verdict::Delivered));
    assert_eq!(stalling.received().len(), 4);
}
