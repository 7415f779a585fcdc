//! Webhook endpoints and deliveries on both stores (`store::webhooks`): an endpoint reads back
//! as written (secrets through a rotation, its subscription, a disabling); its item changes only
//! when a failing streak starts or ends or it is disabled, each change made once however many
//! senders report it; a delivery records each attempt once, in order; an endpoint's deliveries
//! list across the index's shards.

use std::time::Duration;

use domain::events::{EventId, EventType};
use domain::timestamp::Timestamp;
use domain::webhooks::delivery::{Attempt, AttemptResult, Delivery, Failure};
use domain::webhooks::endpoint::{
    DisabledReason, Endpoint, EndpointId, EndpointState, EndpointUrl, SecretText, Secrets,
    Subscription, UrlPolicy,
};
use domain::webhooks::retry::Streak;
use store::webhooks::{DeliveryStatus, Recorded, WebhookStore};
use testkit::packs::at;

testkit::store_contract!(
    by_ref:
    an_endpoint_reads_back_as_created_and_is_created_once,
    an_endpoints_item_changes_only_on_a_streaks_start_end_or_disabling,
    a_delivery_records_each_attempt_once_and_in_order,
    an_endpoints_deliveries_list_newest_first_across_shards,
);

fn endpoint(subscription: Subscription) -> Endpoint {
    let now = at(-60);
    Endpoint {
        id: EndpointId::generate(),
        url: EndpointUrl::parse("https://hooks.example.com/in", UrlPolicy::HttpsOnly).unwrap(),
        subscription,
        description: "CRM sync".into(),
        state: EndpointState::Enabled,
        secrets: Secrets {
            current: SecretText::generate().unwrap(),
            previous: None,
        }
        .rotated(SecretText::generate().unwrap(), now),
        failing_since: None,
        revision: 1,
    }
}

async fn an_endpoint_reads_back_as_created_and_is_created_once(store: &impl WebhookStore) {
    let only = endpoint(Subscription::Only(
        [EventType::WalletLinked, EventType::WalletRemoved].into(),
    ));
    let all = endpoint(Subscription::All);
    assert!(store.create_endpoint(&only).await.unwrap());
    assert!(store.create_endpoint(&all).await.unwrap());
    let mut again = only.clone();
    again.description = "replaced?".into();
    assert!(!store.create_endpoint(&again).await.unwrap());
    assert_eq!(store.endpoint(&only.id).await.unwrap(), Some(only.clone()));
    assert_eq!(store.endpoint(&EndpointId::generate()).await.unwrap(), None);
    let mut listed = store.endpoints().await.unwrap();
    listed.sort_by(|a, b| a.id.cmp(&b.id));
    let mut expected = vec![only, all];
    expected.sort_by(|a, b| a.id.cmp(&b.id));
    assert_eq!(listed, expected);
}

async fn an_endpoints_item_changes_only_on_a_streaks_start_end_or_disabling(
    store: &impl WebhookStore,
) {
    let endpoint = endpoint(Subscription::All);
    store.create_endpoint(&endpoint).await.unwrap();
    let id = &endpoint.id;
    let (first, later) = (at(-30), at(-20));
    assert!(
        !store
            .change_streak(id, Streak::Unchanged, first)
            .await
            .unwrap()
    );
    assert!(
        !store
            .change_streak(id, Streak::Recovered, first)
            .await
            .unwrap()
    );
    assert!(
        store
            .change_streak(id, Streak::Started(first), first)
            .await
            .unwrap()
    );
    // A second sender's first failure of the same streak changes nothing.
    assert!(
        !store
            .change_streak(id, Streak::Started(later), later)
            .await
            .unwrap()
    );
    let read = store.endpoint(id).await.unwrap().unwrap();
    assert_eq!(read.failing_since, Some(first));
    assert!(
        store
            .change_streak(id, Streak::Recovered, later)
            .await
            .unwrap()
    );
    assert_eq!(
        store.endpoint(id).await.unwrap().unwrap().failing_since,
        None
    );

    let gone = Streak::Disable(DisabledReason::Gone);
    assert!(store.change_streak(id, gone, later).await.unwrap());
    assert!(!store.change_streak(id, gone, at(-10)).await.unwrap());
    let failing = Streak::Disable(DisabledReason::Failing);
    assert!(!store.change_streak(id, failing, at(-10)).await.unwrap());
    let read = store.endpoint(id).await.unwrap().unwrap();
    assert_eq!(
        read.state,
        EndpointState::Disabled {
            reason: DisabledReason::Gone,
            at: later
        }
    );
    assert!(!read.receives(EventType::WalletLinked));
    let unknown = EndpointId::generate();
    assert!(!store.change_streak(&unknown, gone, later).await.unwrap());
    assert_eq!(store.endpoint(&unknown).await.unwrap(), None);
}

fn attempt(number: u32, result: AttemptResult) -> Attempt {
    Attempt {
        number,
        at: at(-10 + i64::from(number)),
        result,
        latency_ms: 120 + u64::from(number),
        excerpt: format!("answer {number} é"),
    }
}

fn delivery(event_id: &EventId, endpoint: &EndpointId, number: u32) -> Delivery {
    Delivery {
        event_id: event_id.clone(),
        endpoint_id: endpoint.clone(),
        attempt: number,
        due: at(0),
    }
}

async fn a_delivery_records_each_attempt_once_and_in_order(store: &impl WebhookStore) {
    let endpoint = EndpointId::generate();
    let event = EventId::new(Timestamp::now());
    let first = attempt(1, AttemptResult::Failed(Failure::Timeout));
    let second = attempt(2, AttemptResult::Status(503));
    let third = attempt(3, AttemptResult::Status(200));
    let record = |n, attempt, status| {
        let delivery = delivery(&event, &endpoint, n);
        async move {
            store
                .record_attempt(&delivery, &attempt, status)
                .await
                .unwrap()
        }
    };
    // Attempt 2 before 1 is not recorded.
    assert_eq!(
        record(2, second.clone(), DeliveryStatus::Retrying).await,
        Recorded::AlreadyRecorded
    );
    let id = delivery(&event, &endpoint, 1).id();
    assert_eq!(store.delivery(&id).await.unwrap(), None);
    assert_eq!(
        record(1, first.clone(), DeliveryStatus::Retrying).await,
        Recorded::Written
    );
    // The same message received twice: recorded once.
    assert_eq!(
        record(1, first.clone(), DeliveryStatus::Retrying).await,
        Recorded::AlreadyRecorded
    );
    assert_eq!(
        record(2, second.clone(), DeliveryStatus::Retrying).await,
        Recorded::Written
    );
    assert_eq!(
        record(2, second.clone(), DeliveryStatus::Retrying).await,
        Recorded::AlreadyRecorded
    );
    assert_eq!(
        record(3, third.clone(), DeliveryStatus::Delivered).await,
        Recorded::Written
    );
    let read = store.delivery(&id).await.unwrap().unwrap();
    assert_eq!(read.id, id);
    assert_eq!((&read.event_id, &read.endpoint_id), (&event, &endpoint));
    assert_eq!(read.status, DeliveryStatus::Delivered);
    assert_eq!(read.attempts, [first, second, third]);
}

async fn an_endpoints_deliveries_list_newest_first_across_shards(store: &impl WebhookStore) {
    let (endpoint, other) = (EndpointId::generate(), EndpointId::generate());
    let mut events = Vec::new();
    for n in 0..12 {
        let event = EventId::new(Timestamp::now());
        let answered = attempt(1, AttemptResult::Status(200));
        store
            .record_attempt(
                &delivery(&event, &endpoint, 1),
                &answered,
                DeliveryStatus::Delivered,
            )
            .await
            .unwrap();
        events.push(event);
        if n % 4 == 0 {
            let event = EventId::new(Timestamp::now());
            store
                .record_attempt(
                    &delivery(&event, &other, 1),
                    &answered,
                    DeliveryStatus::Delivered,
                )
                .await
                .unwrap();
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    events.reverse();
    let listed = store.endpoint_deliveries(&endpoint, 5).await.unwrap();
    let ids: Vec<&EventId> = listed.iter().map(|d| &d.event_id).collect();
    assert_eq!(ids, events.iter().take(5).collect::<Vec<_>>());
    assert_eq!(
        store
            .endpoint_deliveries(&endpoint, 100)
            .await
            .unwrap()
            .len(),
        12
    );
    assert_eq!(
        store.endpoint_deliveries(&other, 100).await.unwrap().len(),
        3
    );
}
