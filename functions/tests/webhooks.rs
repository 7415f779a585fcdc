//! Issue 46's delivery pipeline through the real binaries, on moto (DynamoDB and SQS): a real
//! event item (a wallet link's), shaped as the table's stream gives it to Lambda, drives
//! `events-dispatcher`, which queues one delivery per subscribed endpoint; each queued message,
//! as SQS gives it to Lambda, drives `webhook-sender` (loopback allowed by its test-only
//! setting): a receiver answering 500, then 429 with Retry-After, then 410 shows each attempt
//! recorded, each retry queued with its delay, and the endpoint disabled; a message not yet due
//! hops through the queue; an endpoint failing for 3 days is disabled. The operators'
//! `webhook-endpoints` queues a test delivery on the same queue.

use std::time::Duration;

use serde_json::{Value, json};

use domain::events::EventType;
use domain::timestamp::Timestamp;
use domain::webhooks::delivery::AttemptResult;
use domain::webhooks::endpoint::{
    DisabledReason, Endpoint, EndpointId, EndpointState, EndpointUrl, SecretText, Secrets,
    Subscription, UrlPolicy,
};
use domain::webhooks::retry::Streak;
use store::DynamoStore;
use store::webhooks::{DeliveryStatus, WebhookDeliveries, WebhookEndpoints};
use testkit::lambda_events::{stream_record, wallet_event_item};
use testkit::runtime_api::{Outcome, RuntimeApi};
use testkit::webhook_receiver::{Answer, WebhookReceiver};

const DISPATCHER: &str = env!("CARGO_BIN_EXE_events-dispatcher");
const SENDER: &str = env!("CARGO_BIN_EXE_webhook-sender");
const ENDPOINTS: &str = env!("CARGO_BIN_EXE_webhook-endpoints");
const WAIT: Duration = Duration::from_secs(30);

/// A table and a deliveries queue on the shared moto_server.
struct Stack {
    store: DynamoStore,
    sqs: aws_sdk_sqs::Client,
    queue_url: String,
}

impl Stack {
    async fn new() -> Self {
        let store = testkit::moto::shared_table().await;
        let config = aws_sdk_sqs::Config::builder()
            .behavior_version(aws_sdk_sqs::config::BehaviorVersion::latest())
            .http_client(clients::http_client::sdk_http_client(
                clients::http_client::Roots::Amazon,
            ))
            .region(aws_sdk_sqs::config::Region::new("us-east-1"))
            .credentials_provider(aws_sdk_sqs::config::Credentials::new(
                "test", "test", None, None, "test",
            ))
            .endpoint_url(testkit::moto::shared_endpoint())
            .build();
        let sqs = aws_sdk_sqs::Client::from_conf(config);
        let queue_url = sqs
            .create_queue()
            .queue_name(format!("{}-deliveries", store.table()))
            .send()
            .await
            .expect("moto creates the queue")
            .queue_url
            .expect("a queue URL");
        Self {
            store,
            sqs,
            queue_url,
        }
    }

    /// `binary` on its own Runtime API emulator, with this stack's settings and `more`.
    async fn spawn(
        &self,
        binary: &str,
        more: &[(&str, &str)],
    ) -> (RuntimeApi, tokio::process::Child) {
        let api = RuntimeApi::start().await;
        let endpoint = testkit::moto::shared_endpoint();
        let mut env = vec![
            ("TABLE_NAME", self.store.table()),
            ("AWS_ENDPOINT_URL_DYNAMODB", endpoint),
            ("AWS_ENDPOINT_URL_SQS", endpoint),
            ("WEBHOOK_QUEUE_URL", self.queue_url.as_str()),
            ("RUST_LOG", "warn"),
        ];
        env.extend_from_slice(more);
        let child = api.spawn_quiet(binary, &env);
        (api, child)
    }

    /// The messages visible on the queue within `wait`, taken off it.
    async fn take(&self, wait: i32) -> Vec<aws_sdk_sqs::types::Message> {
        let received = self
            .sqs
            .receive_message()
            .queue_url(&self.queue_url)
            .max_number_of_messages(10)
            .wait_time_seconds(wait)
            .send()
            .await
            .expect("moto receives");
        let messages = received.messages.unwrap_or_default();
        for message in &messages {
            self.sqs
                .delete_message()
                .queue_url(&self.queue_url)
                .receipt_handle(message.receipt_handle().unwrap())
                .send()
                .await
                .expect("moto deletes");
        }
        messages
    }

    /// How many messages wait on the queue, delayed.
    async fn delayed(&self) -> u64 {
        let attributes = self
            .sqs
            .get_queue_attributes()
            .queue_url(&self.queue_url)
            .attribute_names(
                aws_sdk_sqs::types::QueueAttributeName::ApproximateNumberOfMessagesDelayed,
            )
            .send()
            .await
            .expect("moto answers")
            .attributes
            .unwrap_or_default();
        attributes
            .get(&aws_sdk_sqs::types::QueueAttributeName::ApproximateNumberOfMessagesDelayed)
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    }
}

fn endpoint(url: &str, subscription: Subscription) -> Endpoint {
    Endpoint {
        id: EndpointId::generate(),
        url: EndpointUrl::parse(url, UrlPolicy::AlsoLoopbackHttp).unwrap(),
        subscription,
        description: "pipeline".into(),
        state: EndpointState::Enabled,
        secrets: Secrets {
            current: SecretText::generate().unwrap(),
            previous: None,
        },
        failing_since: None,
        revision: 1,
    }
}

/// The SQS event Lambda gives the sender for `messages`.
fn sqs_event(messages: &[aws_sdk_sqs::types::Message]) -> Value {
    testkit::lambda_events::sqs_event(
        messages
            .iter()
            .map(|message| (message.message_id().unwrap(), message.body().unwrap())),
    )
}

async fn invoke(api: &RuntimeApi, event: Value) -> Value {
    match api.invoke(event, WAIT).await {
        Some(Outcome::Response(body)) => body,
        other => panic!("the function answered {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_flow_from_the_stream_to_the_receiver_with_each_retry_and_the_disabling() {
    let stack = Stack::new().await;
    let receiver = WebhookReceiver::start(Answer::status(200)).await;
    receiver.script([
        Answer::status(500),
        Answer::Status(429, vec![("retry-after", "7200".into())], String::new()),
        Answer::status(410),
    ]);
    let subscribed = endpoint(&receiver.url("/hooks"), Subscription::All);
    let elsewhere = endpoint(
        &receiver.url("/other"),
        Subscription::Only([EventType::PackOpened].into()),
    );
    for endpoint in [&subscribed, &elsewhere] {
        assert!(stack.store.create_endpoint(endpoint).await.unwrap());
    }
    let item = wallet_event_item(&stack.store, "fan-pipeline").await;

    // The dispatcher: the INSERT queues one delivery (the other endpoint wants another type);
    // a MODIFY (the filter would not let it through) is passed over.
    let (dispatcher, _d) = stack.spawn(DISPATCHER, &[]).await;
    let batch = json!({"Records": [
        stream_record("INSERT", "100", &item),
        stream_record("MODIFY", "101", &item),
    ]});
    assert_eq!(
        invoke(&dispatcher, batch).await,
        json!({"batchItemFailures": []})
    );
    let queued = stack.take(5).await;
    assert_eq!(queued.len(), 1, "{queued:?}");
    let message: Value = serde_json::from_str(queued[0].body().unwrap()).unwrap();
    let event_id = item["id"].as_s().unwrap();
    assert_eq!(message["delivery"]["eventId"], event_id.as_str());
    assert_eq!(message["delivery"]["endpointId"], subscribed.id.as_str());
    assert_eq!(message["delivery"]["attempt"], 1);
    assert_eq!(message["body"], item["body"].as_s().unwrap().as_str());

    // Attempt 1: 500. Recorded; attempt 2 queued 5 s later (with jitter).
    let (sender, _s) = stack
        .spawn(SENDER, &[("WEBHOOK_ALLOW_LOOPBACK_FOR_TESTS", "1")])
        .await;
    assert_eq!(
        invoke(&sender, sqs_event(&queued)).await,
        json!({"batchItemFailures": []})
    );
    let received = receiver.received();
    assert_eq!(received.len(), 1);
    assert_eq!(received[0].body, item["body"].as_s().unwrap().as_bytes());
    assert_eq!(received[0].header("webhook-id"), Some(event_id.as_str()));
    assert!(stack.take(0).await.is_empty(), "the retry is delayed");
    let retry = stack.take(10).await;
    assert_eq!(retry.len(), 1, "attempt 2 arrives after its delay");
    let next: Value = serde_json::from_str(retry[0].body().unwrap()).unwrap();
    assert_eq!(next["delivery"]["attempt"], 2);

    // Attempt 2: 429 asking for 2 hours: queued for SQS's longest delay, due in 2 hours.
    assert_eq!(
        invoke(&sender, sqs_event(&retry)).await,
        json!({"batchItemFailures": []})
    );
    assert_eq!(stack.delayed().await, 1);
    let delivery_id = {
        let delivery: domain::webhooks::delivery::Delivery =
            serde_json::from_value(next["delivery"].clone()).unwrap();
        delivery.id()
    };
    let record = stack.store.delivery(&delivery_id).await.unwrap().unwrap();
    let results: Vec<AttemptResult> = record.attempts.iter().map(|a| a.result).collect();
    assert_eq!(
        results,
        [AttemptResult::Status(500), AttemptResult::Status(429)]
    );
    assert_eq!(record.status, DeliveryStatus::Retrying);

    // A message not yet due (the 2-hour wait's) hops through the queue: nothing is sent.
    let mut later = next.clone();
    later["delivery"]["attempt"] = json!(3);
    later["delivery"]["due"] = json!(Timestamp::now().plus_seconds(7200).unwrap().to_string());
    let hop = sqs_message(&stack, &later).await;
    assert_eq!(
        invoke(&sender, sqs_event(&hop)).await,
        json!({"batchItemFailures": []})
    );
    assert_eq!(receiver.received().len(), 2);
    assert_eq!(stack.delayed().await, 2);

    // Attempt 3, due: 410 Gone disables the endpoint; nothing more is queued.
    let mut due = next.clone();
    due["delivery"]["attempt"] = json!(3);
    let gone = sqs_message(&stack, &due).await;
    assert_eq!(
        invoke(&sender, sqs_event(&gone)).await,
        json!({"batchItemFailures": []})
    );
    assert_eq!(receiver.received().len(), 3);
    let disabled = stack.store.endpoint(&subscribed.id).await.unwrap().unwrap();
    assert!(matches!(
        disabled.state,
        EndpointState::Disabled {
            reason: DisabledReason::Gone,
            ..
        }
    ));
    let record = stack.store.delivery(&delivery_id).await.unwrap().unwrap();
    assert_eq!(record.status, DeliveryStatus::Abandoned);
    assert_eq!(record.attempts.len(), 3);
    assert_eq!(stack.delayed().await, 2, "no retry after 410");
}

/// Puts `message` on the queue and takes it off as SQS would give it to the sender.
async fn sqs_message(stack: &Stack, message: &Value) -> Vec<aws_sdk_sqs::types::Message> {
    stack
        .sqs
        .send_message()
        .queue_url(&stack.queue_url)
        .message_body(message.to_string())
        .send()
        .await
        .unwrap();
    let taken = stack.take(5).await;
    assert_eq!(taken.len(), 1);
    taken
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endpoint_failing_for_3_days_is_disabled_by_its_next_failure() {
    let stack = Stack::new().await;
    let receiver = WebhookReceiver::start(Answer::status(503)).await;
    let failing = endpoint(&receiver.url("/"), Subscription::All);
    stack.store.create_endpoint(&failing).await.unwrap();
    let since = Timestamp::now().plus_seconds(-3 * 24 * 3600 - 60).unwrap();
    let started = Streak::Started(since);
    assert!(
        stack
            .store
            .change_streak(&failing.id, started, since)
            .await
            .unwrap()
    );
    let item = wallet_event_item(&stack.store, "fan-pipeline").await;
    let (dispatcher, _d) = stack.spawn(DISPATCHER, &[]).await;
    let batch = json!({"Records": [stream_record("INSERT", "200", &item)]});
    assert_eq!(
        invoke(&dispatcher, batch).await,
        json!({"batchItemFailures": []})
    );
    let queued = stack.take(5).await;
    let (sender, _s) = stack
        .spawn(SENDER, &[("WEBHOOK_ALLOW_LOOPBACK_FOR_TESTS", "1")])
        .await;
    assert_eq!(
        invoke(&sender, sqs_event(&queued)).await,
        json!({"batchItemFailures": []})
    );
    let read = stack.store.endpoint(&failing.id).await.unwrap().unwrap();
    assert!(matches!(
        read.state,
        EndpointState::Disabled {
            reason: DisabledReason::Failing,
            ..
        }
    ));
    assert_eq!(stack.delayed().await, 0, "no retry once disabled");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_test_setting_the_sender_refuses_a_loopback_receiver() {
    let stack = Stack::new().await;
    let receiver = WebhookReceiver::start(Answer::status(200)).await;
    let url = format!("https://127.0.0.1:{}/", receiver.port());
    let loopback = endpoint(&url, Subscription::All);
    stack.store.create_endpoint(&loopback).await.unwrap();
    let item = wallet_event_item(&stack.store, "fan-pipeline").await;
    let (dispatcher, _d) = stack.spawn(DISPATCHER, &[]).await;
    let batch = json!({"Records": [stream_record("INSERT", "300", &item)]});
    invoke(&dispatcher, batch).await;
    let queued = stack.take(5).await;
    let (sender, _s) = stack.spawn(SENDER, &[]).await;
    assert_eq!(
        invoke(&sender, sqs_event(&queued)).await,
        json!({"batchItemFailures": []})
    );
    assert_eq!(receiver.received().len(), 0);
    let message: Value = serde_json::from_str(queued[0].body().unwrap()).unwrap();
    let delivery: domain::webhooks::delivery::Delivery =
        serde_json::from_value(message["delivery"].clone()).unwrap();
    let record = stack.store.delivery(&delivery.id()).await.unwrap().unwrap();
    assert_eq!(
        record.attempts[0].result,
        AttemptResult::Failed(domain::webhooks::delivery::Failure::RefusedAddress)
    );
}

/// The operators' function itself (IAM-signed requests, as API Gateway's authorizer passes them
/// on): it starts with its settings, shows a new endpoint's secret once, and queues the endpoint's
/// test delivery on SQS; a fan's token is refused.
#[tokio::test]
async fn the_operators_function_creates_an_endpoint_and_queues_its_test_on_sqs() {
    use testkit::events::ApiEvent;
    use testkit::runtime_api::http_parts;
    let stack = Stack::new().await;
    let (api, _child) = stack.spawn(ENDPOINTS, &[]).await;
    let operator = "arn:aws:iam::123456789012:role/fan-api-operator";
    let call = |event: ApiEvent| {
        let api = &api;
        async move { http_parts(&Outcome::Response(invoke(api, event.to_json()).await)) }
    };
    let (status, created) = call(
        ApiEvent::post("/api/webhooks/endpoints")
            .iam(operator)
            .json(r#"{"url":"https://hooks.example.com/fan-api","description":"crm"}"#),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let secret = created["secret"].as_str().expect("the secret").to_owned();
    assert!(secret.starts_with("whsec_"), "{created}");
    let id = created["id"]
        .as_str()
        .expect("the endpoint's id")
        .to_owned();

    let (status, listed) = call(ApiEvent::get("/api/webhooks/endpoints").iam(operator)).await;
    assert_eq!(status, 200, "{listed}");
    assert!(listed.to_string().contains(&id));
    assert!(
        !listed.to_string().contains(&secret),
        "the secret is shown once"
    );

    let (status, tested) =
        call(ApiEvent::post(&format!("/api/webhooks/endpoints/{id}/test")).iam(operator)).await;
    assert_eq!(status, 202, "{tested}");
    let messages = stack.take(5).await;
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(messages[0].body().unwrap().contains(&id));

    let fan = testkit::tokens::token("fan-1", None);
    let (status, refused) = call(ApiEvent::get("/api/webhooks/endpoints").bearer(&fan)).await;
    assert_eq!(
        (status, &refused["error"]["code"]),
        (403, &json!("operator_required"))
    );
}
