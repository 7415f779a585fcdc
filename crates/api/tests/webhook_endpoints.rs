//! The operators' webhook routes (`webhook-endpoints`) through the handlers, on both stores,
//! signed by IAM: a created endpoint's secret is shown once and never listed; two changes at
//! one revision, or a change after a sender's streak, write once (409 `endpoint_changed`); a
//! rotation's test event is signed by both secrets (the standardwebhooks library judges); a
//! replay queues exactly its range's events, to that endpoint; a fan's token is refused.

use std::sync::{Arc, Mutex};

use api::handlers::webhooks::endpoints::EndpointsState;
use api::handlers::webhooks::{DeliveryQueue, QueueError, Queued};
use api::http::operator::OperatorAuth;
use api::http::routes::webhook_endpoints_routes;
use domain::timestamp::Timestamp;
use domain::webhooks::endpoint::{EndpointId, UrlPolicy};
use domain::webhooks::retry::Streak;
use domain::webhooks::signature_header;
use serde_json::{Value, json};
use store::Store;
use testkit::events::{ApiEvent, call, parts};
use testkit::ids::user;
use testkit::packs::at;
use testkit::tokens::token;

testkit::store_contract!(
    by_value:
    a_created_endpoints_secret_is_shown_once_and_never_listed,
    a_change_is_written_only_at_the_revision_it_read,
    a_rotations_test_event_is_signed_by_both_secrets,
    a_replay_queues_exactly_its_ranges_events,
    a_fans_token_and_a_bad_body_are_refused,
    a_replacement_at_a_stale_revision_writes_nothing,
);

const OPERATOR: &str = "arn:aws:iam::123456789012:user/ops";

/// The deliveries queue, as the handlers fill it.
#[derive(Default, Clone)]
struct Recorded(Arc<Mutex<Vec<Queued>>>);

impl DeliveryQueue for Recorded {
    async fn send(&self, batch: &[Queued]) -> Result<Vec<usize>, QueueError> {
        self.0.lock().unwrap().extend_from_slice(batch);
        Ok(Vec::new())
    }
}

struct Api<S> {
    state: Arc<EndpointsState<S>>,
    queued: Recorded,
}

impl<S: Store + Clone + 'static> Api<S> {
    fn new(store: S) -> Self {
        let queued = Recorded::default();
        let state = Arc::new(EndpointsState {
            store,
            queue: Arc::new(queued.clone()),
            url_policy: UrlPolicy::HttpsOnly,
            operators: OperatorAuth::Iam,
            max_body_bytes: 16 * 1024,
        });
        Self { state, queued }
    }

    async fn send(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let mut event = ApiEvent::new(method, path).iam(OPERATOR);
        if let Some(body) = body {
            event = event.json(&body.to_string());
        }
        parts(&call(webhook_endpoints_routes(), &self.state, event.request()).await)
    }

    async fn create(&self, body: Value) -> Value {
        let (status, created) = self
            .send("POST", "/api/webhooks/endpoints", Some(body))
            .await;
        assert_eq!(status, 201, "{created}");
        created
    }

    fn taken(&self) -> Vec<Queued> {
        std::mem::take(&mut *self.queued.0.lock().unwrap())
    }
}

fn code(body: &Value) -> &str {
    body["error"]["code"].as_str().unwrap_or_default()
}

async fn a_created_endpoints_secret_is_shown_once_and_never_listed<S: Store + Clone + 'static>(
    store: S,
) {
    let api = Api::new(store);
    let created = api
        .create(json!({"url": " https://hooks.example.com/in ", "description": "  CRM \n sync "}))
        .await;
    let secret = created["secret"].as_str().unwrap().to_owned();
    assert!(secret.starts_with("whsec_"), "{created}");
    assert_eq!(created["url"], "https://hooks.example.com/in");
    assert_eq!(created["description"], "CRM sync");
    assert_eq!(created["eventTypes"], Value::Null);
    assert_eq!(
        (&created["enabled"], &created["revision"]),
        (&json!(true), &json!(1))
    );
    let id = created["id"].as_str().unwrap();
    for path in [
        "/api/webhooks/endpoints".to_owned(),
        format!("/api/webhooks/endpoints/{id}"),
    ] {
        let (status, read) = api.send("GET", &path, None).await;
        assert_eq!(status, 200, "{read}");
        assert!(
            !read.to_string().contains(&secret),
            "{path} shows the secret"
        );
        assert!(!read.to_string().contains("\"secret\""), "{read}");
    }
    let (_, listed) = api.send("GET", "/api/webhooks/endpoints", None).await;
    assert_eq!(listed["endpoints"][0]["id"], id);
    let (status, deleted) = api
        .send("DELETE", &format!("/api/webhooks/endpoints/{id}"), None)
        .await;
    assert_eq!(status, 204, "{deleted}");
    let (status, gone) = api
        .send("GET", &format!("/api/webhooks/endpoints/{id}"), None)
        .await;
    assert_eq!((status, code(&gone)), (404, "endpoint_not_found"));
}

async fn a_change_is_written_only_at_the_revision_it_read<S: Store + Clone + 'static>(store: S) {
    let api = Api::new(store.clone());
    let created = api
        .create(json!({"url": "https://hooks.example.com/in", "eventTypes": ["wallet.linked"]}))
        .await;
    let path = format!(
        "/api/webhooks/endpoints/{}",
        created["id"].as_str().unwrap()
    );
    // Two operators change it from the revision both read: one write, the other refused.
    let (first, second) = tokio::join!(
        api.send(
            "PATCH",
            &path,
            Some(json!({"description": "one", "revision": 1}))
        ),
        api.send(
            "PATCH",
            &path,
            Some(json!({"description": "two", "revision": 1}))
        ),
    );
    let mut statuses = [first.0, second.0];
    statuses.sort_unstable();
    assert_eq!(statuses, [200, 409], "{first:?} {second:?}");
    let (winner, loser) = if first.0 == 200 {
        (first, second)
    } else {
        (second, first)
    };
    assert_eq!(code(&loser.1), "endpoint_changed");
    assert_eq!(winner.1["revision"], 2);
    let (_, read) = api.send("GET", &path, None).await;
    assert_eq!(read["description"], winner.1["description"]);

    // A sender's streak is a write too: a change decided before it is refused.
    let id = EndpointId::parse(read["id"].as_str().unwrap()).unwrap();
    assert!(
        store
            .change_streak(&id, Streak::Started(at(-5)), at(-5))
            .await
            .unwrap()
    );
    let (status, stale) = api
        .send(
            "PATCH",
            &path,
            Some(json!({"enabled": false, "revision": 2})),
        )
        .await;
    assert_eq!((status, code(&stale)), (409, "endpoint_changed"));
    let (status, disabled) = api
        .send(
            "PATCH",
            &path,
            Some(json!({"enabled": false, "eventTypes": null})),
        )
        .await;
    assert_eq!(status, 200, "{disabled}");
    assert_eq!(
        (
            &disabled["enabled"],
            &disabled["disabledReason"],
            &disabled["eventTypes"]
        ),
        (&json!(false), &json!("operator"), &Value::Null)
    );
    let (status, refused) = api.send("POST", &format!("{path}/test"), None).await;
    assert_eq!((status, code(&refused)), (409, "endpoint_disabled"));
    let (status, enabled) = api
        .send("PATCH", &path, Some(json!({"enabled": true})))
        .await;
    assert_eq!(status, 200, "{enabled}");
    assert_eq!(enabled["enabled"], true);
    assert_eq!(
        enabled.get("failingSince"),
        None,
        "enabling ends the streak"
    );
}

async fn a_rotations_test_event_is_signed_by_both_secrets<S: Store + Clone + 'static>(store: S) {
    let api = Api::new(store.clone());
    let created = api
        .create(json!({"url": "https://hooks.example.com/in"}))
        .await;
    let first = created["secret"].as_str().unwrap().to_owned();
    let path = format!(
        "/api/webhooks/endpoints/{}",
        created["id"].as_str().unwrap()
    );
    let (status, rotated) = api.send("POST", &format!("{path}/rotate"), None).await;
    assert_eq!(status, 200, "{rotated}");
    let second = rotated["secret"].as_str().unwrap().to_owned();
    assert_ne!(first, second);
    assert!(rotated["previousSecretUntil"].is_string(), "{rotated}");

    let (status, tested) = api.send("POST", &format!("{path}/test"), None).await;
    assert_eq!(status, 202, "{tested}");
    let [queued] = api.taken().try_into().unwrap();
    let delivery = &queued.message.delivery;
    assert_eq!(tested["deliveryId"], delivery.id().as_str());
    assert_eq!(delivery.attempt, 1);
    let envelope: Value = serde_json::from_str(&queued.message.body).unwrap();
    assert_eq!(envelope["type"], "webhook.test");
    // Signed as the sender signs its next attempt: each secret alone verifies it.
    let endpoint = store
        .endpoint(&delivery.endpoint_id)
        .await
        .unwrap()
        .unwrap();
    let now = Timestamp::now();
    let timestamp = i64::try_from(now.unix_seconds()).unwrap();
    let id = delivery.event_id.as_str();
    let body = queued.message.body.as_bytes();
    let signature = signature_header(&endpoint.secrets.signing(now), id, timestamp, body);
    for secret in [&first, &second] {
        testkit::standard_webhooks::verifies(secret, id, timestamp, &signature, body).unwrap();
    }
}

async fn a_replay_queues_exactly_its_ranges_events<S: Store + Clone + 'static>(store: S) {
    let api = Api::new(store.clone());
    let fan = user("fan");
    // One instant for the range and the events (`at` reads the clock at each call).
    let now = Timestamp::now();
    let at = |seconds: i64| now.plus_seconds(seconds).unwrap();
    for (n, seconds) in [(1, -50), (2, -40), (3, -30), (4, -20)] {
        let payload = format!(r#"{{"address":"0x{n:040x}","chainId":1}}"#);
        testkit::wallets::link(&store, &fan, &payload, at(seconds), None)
            .await
            .unwrap();
    }
    let created = api
        .create(json!({"url": "https://hooks.example.com/in", "eventTypes": ["wallet.linked"]}))
        .await;
    let other = api
        .create(json!({"url": "https://other.example.com/in"}))
        .await;
    let path = format!(
        "/api/webhooks/endpoints/{}",
        created["id"].as_str().unwrap()
    );
    let range = json!({"since": at(-45), "until": at(-25)});
    let (status, replayed) = api
        .send("POST", &format!("{path}/replay"), Some(range))
        .await;
    assert_eq!(status, 202, "{replayed}");
    assert_eq!(replayed, json!({"queued": 2, "next": null}));
    let queued = api.taken();
    let at_of = |q: &Queued| {
        let envelope: Value = serde_json::from_str(&q.message.body).unwrap();
        envelope["occurredAt"].as_str().unwrap().to_owned()
    };
    assert_eq!(
        queued.iter().map(at_of).collect::<Vec<_>>(),
        [at(-40).rfc3339_millis(), at(-30).rfc3339_millis()]
    );
    assert!(
        queued
            .iter()
            .all(|q| q.message.delivery.endpoint_id.as_str() == created["id"]
                && q.message.delivery.endpoint_id.as_str() != other["id"]
                && q.message.delivery.attempt == 1)
    );
    let (status, refused) = api
        .send(
            "POST",
            &format!("{path}/replay"),
            Some(json!({"since": at(-25), "until": at(-45)})),
        )
        .await;
    assert_eq!((status, code(&refused)), (400, "invalid_body"));
}

async fn a_fans_token_and_a_bad_body_are_refused<S: Store + Clone + 'static>(store: S) {
    let api = Api::new(store);
    let event = ApiEvent::get("/api/webhooks/endpoints").bearer(&token("fan-1", None));
    let (status, body) =
        parts(&call(webhook_endpoints_routes(), &api.state, event.request()).await);
    assert_eq!((status, code(&body)), (403, "operator_required"));
    for body in [
        json!({"url": "http://hooks.example.com/in"}),
        json!({"url": "https://hooks.example.com/in", "eventTypes": ["no.such"]}),
        json!({"url": "https://hooks.example.com/in", "eventTypes": []}),
        json!({"url": "https://hooks.example.com/in", "description": "x".repeat(201)}),
        json!({"url": "https://hooks.example.com/in", "secret": "whsec_mine"}),
    ] {
        let (status, refused) = api
            .send("POST", "/api/webhooks/endpoints", Some(body.clone()))
            .await;
        assert_eq!((status, code(&refused)), (400, "invalid_body"), "{body}");
    }
    let (status, missing) = api
        .send("POST", "/api/webhooks/deliveries/dlv_x/retry", None)
        .await;
    assert_eq!((status, code(&missing)), (404, "not_found"));
}

/// The store's own condition, without the handler's check before it: a write from a revision
/// that is no longer the endpoint's, or of an endpoint deleted, writes nothing.
async fn a_replacement_at_a_stale_revision_writes_nothing<S: Store + Clone + 'static>(store: S) {
    let api = Api::new(store.clone());
    let created = api
        .create(json!({"url": "https://hooks.example.com/in"}))
        .await;
    let id = EndpointId::parse(created["id"].as_str().unwrap()).unwrap();
    let read = store.endpoint(&id).await.unwrap().unwrap();
    let mut first = read.clone();
    first.description = "first".into();
    let written = store.replace_endpoint(&first).await.unwrap().unwrap();
    assert_eq!(written.revision, read.revision + 1);
    let mut stale = read.clone();
    stale.description = "stale".into();
    assert_eq!(store.replace_endpoint(&stale).await.unwrap(), None);
    assert_eq!(store.endpoint(&id).await.unwrap(), Some(written.clone()));
    assert!(store.delete_endpoint(&id).await.unwrap());
    assert!(!store.delete_endpoint(&id).await.unwrap());
    assert_eq!(store.replace_endpoint(&written).await.unwrap(), None);
    assert_eq!(store.endpoint(&id).await.unwrap(), None);
}
