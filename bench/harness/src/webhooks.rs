//! `webhooks`: the rates of issue 46's delivery functions, through their release binaries on the
//! Runtime API emulator, with DynamoDB on moto.
//!
//! - events-dispatcher, given batches of [`RECORDS`] stream records (new event items, as Lambda
//!   gives them), one endpoint subscribed: [`RECORDS`] deliveries queued per batch, in
//!   `SendMessageBatch` calls of 10. The queue is moto's SQS, or a stub answering every call at
//!   once or after [`SQS_MODEL_MS`] (what the time per batch is made of: the function's CPU and
//!   its 10 calls one after the other).
//! - webhook-sender, given batches of 10 due deliveries (as Lambda gives the queue's messages),
//!   to a loopback receiver answering 204 at once or after [`RECEIVER_MODEL_MS`]: each message
//!   reads its delivery and records its attempt on moto.
//!
//! Each round runs every setup once, in an order that turns each round; the figures are the
//! medians over rounds. One instance of each function, invoked one batch after another: records
//! (or messages) a second per instance, time per invocation, CPU per record.

use std::path::Path;
use std::time::{Duration, Instant};

use domain::events::{EventId, EventType};
use domain::timestamp::Timestamp;
use domain::webhooks::endpoint::{
    Endpoint, EndpointId, EndpointState, EndpointUrl, SecretText, Secrets, Subscription, UrlPolicy,
};
use serde_json::{Value, json};
use store::DynamoStore;
use store::webhooks::WebhookEndpoints;
use testkit::http_stub::{HttpStub, Reply};
use testkit::lambda_events::{sqs_event, stream_record, wallet_event_item};
use testkit::moto::MotoServer;
use testkit::runtime_api::{Outcome, RuntimeApi};
use testkit::webhook_receiver::{Answer, WebhookReceiver};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::stats::{cpu_seconds, median, ms};

/// Stream records per dispatcher invocation: the event source mapping's batch size.
pub const RECORDS: usize = 100;
/// Messages per sender invocation: its event source mapping's batch size.
pub const MESSAGES: usize = 10;
/// The stub queue's modelled answer time (an in-region `SendMessageBatch`, assumed).
pub const SQS_MODEL_MS: u64 = 10;
/// The slower receiver's answer time: the receiver the sender's capacity was computed for.
pub const RECEIVER_MODEL_MS: u64 = 100;

const TIMEOUT: Duration = Duration::from_secs(60);
const EMPTY_BATCH: &str = r#"{"Successful":[],"Failed":[]}"#;

/// Makes each invocation's event.
type Batches = Box<dyn FnMut() -> Value + Send>;

/// What one instance runs: its binary, its SQS (endpoint, queue URL), the units of a batch and
/// the batches.
struct Setup<'a> {
    name: String,
    binary: &'a Path,
    sqs: (String, String),
    units_per_batch: usize,
    batch: Batches,
}

/// One function instance on its own emulator, and the batches it is given.
struct Instance {
    name: String,
    runtime: RuntimeApi,
    child: tokio::process::Child,
    units_per_batch: usize,
    batch: Batches,
    /// Per round: units a second, ms per invocation (median), CPU µs per unit.
    rounds: Vec<(f64, f64, f64)>,
    /// Invocations that reported a record or message failed.
    failed: usize,
    /// moto's queue, emptied after each run.
    moto_queue: Option<String>,
}

impl Instance {
    async fn run(&mut self, invocations: usize) {
        let pid = self.child.id().expect("the function runs");
        let cpu_before = cpu_seconds(pid);
        let started = Instant::now();
        let mut each = Vec::with_capacity(invocations);
        for _ in 0..invocations {
            let event = (self.batch)();
            let at = Instant::now();
            match self.runtime.invoke(event, TIMEOUT).await {
                Some(Outcome::Response(body)) if body["batchItemFailures"] == json!([]) => {}
                // A queue or store call that failed (moto, loaded): the batch would come again.
                Some(Outcome::Response(_)) => self.failed += 1,
                other => panic!("{}: {other:?}", self.name),
            }
            each.push(ms(at.elapsed()));
        }
        let wall = started.elapsed().as_secs_f64();
        let units = (invocations * self.units_per_batch) as f64;
        let cpu_us = (cpu_seconds(pid) - cpu_before) * 1e6 / units;
        self.rounds.push((units / wall, median(&mut each), cpu_us));
    }

    fn figures(&self) -> (f64, f64, f64) {
        let column = |pick: fn(&(f64, f64, f64)) -> f64| {
            median(&mut self.rounds.iter().map(pick).collect::<Vec<_>>())
        };
        (column(|r| r.0), column(|r| r.1), column(|r| r.2))
    }
}

fn endpoint(url: &str, subscription: Subscription) -> Endpoint {
    Endpoint {
        id: EndpointId::generate(),
        url: EndpointUrl::parse(url, UrlPolicy::AlsoLoopbackHttp).expect("a loopback URL"),
        subscription,
        description: "bench".into(),
        state: EndpointState::Enabled,
        secrets: Secrets {
            current: SecretText::generate().expect("a random secret"),
            previous: None,
        },
        failing_since: None,
        revision: 1,
    }
}

/// A queue on moto's SQS: its URL.
async fn moto_queue(endpoint: &str, name: &str) -> String {
    let answer = moto_sqs(endpoint, &format!("Action=CreateQueue&QueueName={name}")).await;
    let url = answer
        .split("<QueueUrl>")
        .nth(1)
        .and_then(|rest| rest.split("</QueueUrl>").next())
        .unwrap_or_else(|| panic!("moto made no queue: {answer}"));
    url.to_owned()
}

/// Empties the queue at `url` (moto slows as it fills).
async fn purge(endpoint: &str, url: &str) {
    moto_sqs(endpoint, &format!("Action=PurgeQueue&QueueUrl={url}")).await;
}

/// One call of moto's SQS in its query protocol, by hand (the credential scope names the
/// service; the harness needs no SQS client): the whole answer.
async fn moto_sqs(endpoint: &str, params: &str) -> String {
    let host = endpoint.trim_start_matches("http://");
    let body = format!("{params}&Version=2012-11-05");
    let mut stream = tokio::net::TcpStream::connect(host).await.expect("moto");
    let request = format!(
        "POST / HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/x-www-form-urlencoded\r\n\
         Authorization: AWS4-HMAC-SHA256 Credential=test/20261129/us-east-1/sqs/aws4_request, \
         SignedHeaders=host, Signature=0\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.expect("sent");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.expect("answered");
    answer
}

/// `binary` on its own emulator, over `store`, its deliveries queue `queue_url` at `sqs`.
async fn spawn(
    binary: &Path,
    store: &DynamoStore,
    moto: &str,
    sqs: &str,
    queue_url: &str,
) -> (RuntimeApi, tokio::process::Child) {
    let runtime = RuntimeApi::start().await;
    let env = [
        ("TABLE_NAME", store.table()),
        ("AWS_ENDPOINT_URL_DYNAMODB", moto),
        ("AWS_ENDPOINT_URL_SQS", sqs),
        ("WEBHOOK_QUEUE_URL", queue_url),
        // The sender's receivers are on loopback (the dispatcher reads no such setting).
        ("WEBHOOK_ALLOW_LOOPBACK_FOR_TESTS", "1"),
        ("RUST_LOG", "warn"),
    ];
    let child = runtime.spawn_quiet(&binary.display().to_string(), &env);
    (runtime, child)
}

/// A dispatcher's batch: [`RECORDS`] new event items, each `item` with an id of its own.
fn stream_batch(
    item: &std::collections::HashMap<String, aws_sdk_dynamodb::types::AttributeValue>,
) -> impl FnMut() -> Value + Send + use<> {
    let item = item.clone();
    let mut sequence = 0u64;
    move || {
        let records: Vec<Value> = (0..RECORDS)
            .map(|_| {
                sequence += 1;
                let mut event = item.clone();
                event.insert(
                    "id".into(),
                    aws_sdk_dynamodb::types::AttributeValue::S(
                        EventId::new(Timestamp::now()).to_string(),
                    ),
                );
                stream_record("INSERT", &sequence.to_string(), &event)
            })
            .collect();
        json!({ "Records": records })
    }
}

/// A sender's batch: [`MESSAGES`] due first attempts to `endpoint`, each of its own event.
fn queue_batch(endpoint: EndpointId, body: String) -> impl FnMut() -> Value + Send + use<> {
    let mut sent = 0u64;
    move || {
        let messages: Vec<(String, String)> = (0..MESSAGES)
            .map(|_| {
                sent += 1;
                let message = api::handlers::webhooks::DeliveryMessage {
                    delivery: domain::webhooks::delivery::Delivery {
                        event_id: EventId::new(Timestamp::now()),
                        endpoint_id: endpoint.clone(),
                        attempt: 1,
                        due: Timestamp::now(),
                    },
                    body: body.clone(),
                };
                let text = serde_json::to_string(&message).expect("a message serialises");
                (format!("m-{sent}"), text)
            })
            .collect();
        sqs_event(
            messages
                .iter()
                .map(|(id, body)| (id.as_str(), body.as_str())),
        )
    }
}

/// Runs the part: `rounds` rounds of `invocations` invocations of each setup.
pub async fn run(bin_dir: &Path, rounds: usize, invocations: usize) -> Value {
    let moto = MotoServer::start().await;
    let store = moto.new_table().await;
    let moto_url = moto.endpoint.clone();
    let quick = WebhookReceiver::start(Answer::status(204)).await;
    let slower =
        WebhookReceiver::start(Answer::Stall(Duration::from_millis(RECEIVER_MODEL_MS))).await;
    let subscribed = endpoint(&quick.url("/hooks"), Subscription::All);
    // Sent to by the sender's messages only: no event of the dispatcher's is its type.
    let at_100_ms = endpoint(
        &slower.url("/hooks"),
        Subscription::Only([EventType::PackSoldOut].into()),
    );
    for endpoint in [&subscribed, &at_100_ms] {
        assert!(store.create_endpoint(endpoint).await.expect("moto writes"));
    }
    let item = wallet_event_item(&store, "bench-fan").await;
    let body = item["body"].as_s().expect("the event's body").clone();
    let queue_url = moto_queue(&moto_url, &format!("{}-deliveries", store.table())).await;
    let stub = HttpStub::start(Reply::Json(EMPTY_BATCH.into())).await;
    let slow_stub = HttpStub::start(Reply::Delay(
        Duration::from_millis(SQS_MODEL_MS),
        Box::new(Reply::Json(EMPTY_BATCH.into())),
    ))
    .await;
    let stub_queue = |stub: &HttpStub| stub.url("/123456789012/deliveries");

    let dispatcher: &Path = &bin_dir.join("events-dispatcher");
    let sender: &Path = &bin_dir.join("webhook-sender");
    let moto_sqs = (moto_url.clone(), queue_url.clone());
    let stub_sqs = (stub.url(""), stub_queue(&stub));
    let slow_sqs = (slow_stub.url(""), stub_queue(&slow_stub));
    let setup = |name: String, binary, sqs, units_per_batch, batch: Batches| Setup {
        name,
        binary,
        sqs,
        units_per_batch,
        batch,
    };
    let setups = [
        setup(
            "events-dispatcher, moto's SQS".into(),
            dispatcher,
            moto_sqs,
            RECORDS,
            Box::new(stream_batch(&item)),
        ),
        setup(
            "events-dispatcher, SQS answering at once (stub)".into(),
            dispatcher,
            stub_sqs.clone(),
            RECORDS,
            Box::new(stream_batch(&item)),
        ),
        setup(
            format!("events-dispatcher, SQS answering in {SQS_MODEL_MS} ms (stub)"),
            dispatcher,
            slow_sqs,
            RECORDS,
            Box::new(stream_batch(&item)),
        ),
        setup(
            "webhook-sender, receiver answering at once".into(),
            sender,
            stub_sqs.clone(),
            MESSAGES,
            Box::new(queue_batch(subscribed.id.clone(), body.clone())),
        ),
        setup(
            format!("webhook-sender, receiver answering in {RECEIVER_MODEL_MS} ms"),
            sender,
            stub_sqs,
            MESSAGES,
            Box::new(queue_batch(at_100_ms.id.clone(), body.clone())),
        ),
    ];
    let mut instances = Vec::new();
    for Setup {
        name,
        binary,
        sqs: (sqs, queue),
        units_per_batch,
        batch,
    } in setups
    {
        let (runtime, child) = spawn(binary, &store, &moto_url, &sqs, &queue).await;
        let mut instance = Instance {
            name,
            runtime,
            child,
            units_per_batch,
            batch,
            rounds: Vec::new(),
            failed: 0,
            moto_queue: (sqs == moto_url).then(|| queue.clone()),
        };
        // Warm: connections open, the endpoints read (kept 30 s), every path taken once.
        instance.run(2).await;
        instance.rounds.clear();
        instance.failed = 0;
        instances.push(instance);
    }
    for round in 0..rounds {
        let count = instances.len();
        for turn in 0..count {
            let instance = &mut instances[(round + turn) % count];
            instance.run(invocations).await;
            if let Some(queue) = &instance.moto_queue {
                purge(&moto_url, queue).await;
            }
        }
    }

    println!(
        "| setup (one instance, invoked one batch after another) | per batch | units a second per instance | ms per invocation (median) | CPU µs per unit | invocations with a failure |"
    );
    println!("|---|---|---|---|---|---|");
    let mut figures = Vec::new();
    for instance in &instances {
        let (rate, per_invocation, cpu) = instance.figures();
        let unit = if instance.units_per_batch == RECORDS {
            "records"
        } else {
            "messages"
        };
        println!(
            "| {} | {} {unit} | {rate:.0} | {per_invocation:.1} | {cpu:.0} | {} |",
            instance.name, instance.units_per_batch, instance.failed
        );
        figures.push(json!({
            "setup": instance.name,
            "per_batch": instance.units_per_batch,
            "per_second": rate,
            "ms_per_invocation": per_invocation,
            "cpu_us_per_unit": cpu,
            "failed_invocations": instance.failed,
        }));
    }
    println!(
        "
({rounds} rounds of {invocations} invocations of each, alternated; medians over rounds)"
    );
    json!({ "webhooks": figures, "rounds": rounds, "invocations": invocations })
}
