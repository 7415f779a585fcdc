//! The catalogue of the functions' own CloudWatch metrics: what `template.yaml`'s dashboard and
//! alarms read, so that a name is spelled once (a test checks that the dashboard shows every one).
//!
//! They are emitted in CloudWatch Embedded Metric Format (a JSON log line the Lambda log group
//! turns into metrics), in [`NAMESPACE`], with one dimension set, `[["Function"]]` ([`DIMENSION`]),
//! whose value is the Lambda function's name (`AWS_LAMBDA_FUNCTION_NAME`, which starts with the
//! stack's name, so two stacks in one account do not mix). Identifiers with many values (`packId`,
//! `requestId`) go in the line as properties, never as dimensions: each distinct dimension value
//! is a metric of its own, billed and kept apart.

use std::cell::RefCell;
use std::future::Future;
use std::io::Write;

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

/// The CloudWatch namespace of every metric of the catalogue.
pub const NAMESPACE: &str = "FanApi";

/// The one dimension: the Lambda function's name.
pub const DIMENSION: &str = "Function";

/// Every metric the functions emit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// A request handled, whatever its answer.
    Requests,
    /// A request's time in the handler, in milliseconds.
    Latency,
    /// start-purchase reserved a unit. The dashboard reads the purchase metrics from the
    /// function named here.
    PurchasesStarted,
    /// start-purchase found no unit left.
    PurchasesSoldOut,
    /// start-purchase refused a buyer at the pack's `maxPerUser`.
    PurchaseLimitReached,
    /// complete-purchase took a payment.
    PurchasesCompleted,
    /// open-pack drew a paid pack's items.
    PacksOpened,
    /// An expired hold released, its unit back on sale (by any function that releases one).
    HoldsReleased,
    /// A Cash top-up begun.
    TopUpsCreated,
    /// A top-up credited to a Cash balance.
    TopUpsCredited,
    /// A paid session (signed) that does not match its top-up (session, amount or currency):
    /// a fan paid and was not credited. Alarmed on; settled by hand (docs/operations.md).
    TopUpsUnmatched,
    /// A paid top-up whose credit was refused (its reference used by another credit, or the
    /// balance at its largest): a fan paid and was not credited. Alarmed on, as above.
    TopUpsUncredited,
    /// A DynamoDB transaction cancelled by a concurrent one on the same item (then decided again).
    TransactionConflicts,
    /// A DynamoDB call throttled (after the SDK's retries).
    DynamoDbThrottled,
    /// A queued drop's beacon round still not fetched 10 minutes after its time: the draw
    /// waits (never a local random number). Alarmed on.
    QueueBeaconLate,
    /// A request refused by a rate limit (429), with its `rateClass` property (start, join,
    /// write, read) and `rateScope` (fan, addr).
    RateLimited,
    /// A webhook endpoint disabled by the sender (410 Gone, or 3 days failing). Alarmed on.
    WebhookEndpointsDisabled,
}

impl Metric {
    pub const ALL: [Metric; 17] = [
        Metric::Requests,
        Metric::Latency,
        Metric::PurchasesStarted,
        Metric::PurchasesSoldOut,
        Metric::PurchaseLimitReached,
        Metric::PurchasesCompleted,
        Metric::PacksOpened,
        Metric::HoldsReleased,
        Metric::TopUpsCreated,
        Metric::TopUpsCredited,
        Metric::TopUpsUnmatched,
        Metric::TopUpsUncredited,
        Metric::TransactionConflicts,
        Metric::DynamoDbThrottled,
        Metric::QueueBeaconLate,
        Metric::RateLimited,
        Metric::WebhookEndpointsDisabled,
    ];

    /// The CloudWatch metric name.
    pub const fn name(self) -> &'static str {
        match self {
            Metric::Requests => "Requests",
            Metric::Latency => "Latency",
            Metric::PurchasesStarted => "PurchasesStarted",
            Metric::PurchasesSoldOut => "PurchasesSoldOut",
            Metric::PurchaseLimitReached => "PurchaseLimitReached",
            Metric::PurchasesCompleted => "PurchasesCompleted",
            Metric::PacksOpened => "PacksOpened",
            Metric::HoldsReleased => "HoldsReleased",
            Metric::TopUpsCreated => "TopUpsCreated",
            Metric::TopUpsCredited => "TopUpsCredited",
            Metric::TopUpsUnmatched => "TopUpsUnmatched",
            Metric::TopUpsUncredited => "TopUpsUncredited",
            Metric::TransactionConflicts => "TransactionConflicts",
            Metric::DynamoDbThrottled => "DynamoDbThrottled",
            Metric::QueueBeaconLate => "QueueBeaconLate",
            Metric::RateLimited => "RateLimited",
            Metric::WebhookEndpointsDisabled => "WebhookEndpointsDisabled",
        }
    }

    /// The CloudWatch unit: every metric counts events, but the latency.
    pub const fn unit(self) -> &'static str {
        match self {
            Metric::Latency => "Milliseconds",
            _ => "Count",
        }
    }
}

// How the metrics are recorded and written. Each invocation runs in a scope of its own (a tokio
// task-local, see `record`): `count` adds to the scope of the invocation it runs in, wherever it
// is called from (a handler, the DynamoDB store's retry loops), with no recorder to pass along
// and no signature to change; outside a scope (local-api, tests, the operator's tools) it does
// nothing, so those neither print metric lines nor mix concurrent requests. (A task spawned
// from an invocation would have no scope: count in the invocation's own task.) At the end of the
// invocation `lambda::runtime` writes the scope's values as one EMF line on standard output.

/// What one invocation recorded: a value per metric it touched, and its properties.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Recorded {
    values: [Option<f64>; Metric::ALL.len()],
    properties: Vec<(&'static str, String)>,
}

impl Recorded {
    /// Adds `n` to `metric` (a count).
    pub fn add(&mut self, metric: Metric, n: u64) {
        let value = &mut self.values[metric as usize];
        *value = Some(value.unwrap_or(0.0) + n as f64);
    }

    /// Sets `metric` to `value` (a measurement: the latency).
    pub fn set(&mut self, metric: Metric, value: f64) {
        self.values[metric as usize] = Some(value);
    }

    /// Sets the property `name` (an identifier with many values, or a class of answers: never a
    /// dimension, which would make a metric of each value). Names are fixed in the code, so that
    /// nothing a client sends becomes a field.
    pub fn property(&mut self, name: &'static str, value: &str) {
        debug_assert!(
            name != DIMENSION && name != "_aws" && Metric::ALL.iter().all(|m| m.name() != name),
            "property {name} would hide a field of the line"
        );
        match self.properties.iter_mut().find(|(known, _)| *known == name) {
            Some((_, known)) => value.clone_into(known),
            None => self.properties.push((name, value.to_owned())),
        }
    }

    /// Whether nothing was recorded: no metric, so no line to write.
    pub fn is_empty(&self) -> bool {
        self.values.iter().all(Option::is_none)
    }

    /// The value recorded for `metric`, if any.
    pub fn value(&self, metric: Metric) -> Option<f64> {
        self.values[metric as usize]
    }

    /// The EMF line (without its newline): the `_aws` directive naming every metric recorded,
    /// the `Function` dimension, each metric's value and the properties, all at the top level.
    pub fn emf_line(&self, function: &str, timestamp_ms: u64) -> String {
        let recorded: Vec<(Metric, f64)> = Metric::ALL
            .iter()
            .filter_map(|&metric| Some((metric, self.value(metric)?)))
            .collect();
        let mut line = Vec::with_capacity(256 + 48 * recorded.len());
        let mut serializer = serde_json::Serializer::new(&mut line);
        let written = (|| {
            let mut map = serializer.serialize_map(None)?;
            map.serialize_entry(
                "_aws",
                &Directive {
                    timestamp: timestamp_ms,
                    cloud_watch_metrics: [MetricDirective {
                        namespace: NAMESPACE,
                        dimensions: [[DIMENSION]],
                        metrics: recorded
                            .iter()
                            .map(|(metric, _)| MetricDefinition {
                                name: metric.name(),
                                unit: metric.unit(),
                            })
                            .collect(),
                    }],
                },
            )?;
            map.serialize_entry(DIMENSION, function)?;
            for (metric, value) in &recorded {
                // Counts as integers: what a reader of the log expects to see.
                if value.fract() == 0.0 && *value < 9.0e15 {
                    map.serialize_entry(metric.name(), &(*value as u64))?;
                } else {
                    map.serialize_entry(metric.name(), value)?;
                }
            }
            for (name, value) in &self.properties {
                map.serialize_entry(name, value)?;
            }
            map.end()
        })();
        written.expect("a map of strings and numbers serialises");
        String::from_utf8(line).expect("serde_json writes UTF-8")
    }
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct Directive {
    timestamp: u64,
    cloud_watch_metrics: [MetricDirective; 1],
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct MetricDirective {
    namespace: &'static str,
    dimensions: [[&'static str; 1]; 1],
    metrics: Vec<MetricDefinition>,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct MetricDefinition {
    name: &'static str,
    unit: &'static str,
}

tokio::task_local! {
    static INVOCATION: RefCell<Recorded>;
}

/// Counts one `metric` event in the current invocation (nothing outside one).
pub fn count(metric: Metric) {
    let _ = INVOCATION.try_with(|recorded| recorded.borrow_mut().add(metric, 1));
}

/// Sets the property `name` of the current invocation's line (nothing outside one).
pub fn property(name: &'static str, value: &str) {
    let _ = INVOCATION.try_with(|recorded| recorded.borrow_mut().property(name, value));
}

/// Runs `work` as one invocation: what it (and everything it awaits in its task) counts.
pub async fn record<F: Future>(work: F) -> (F::Output, Recorded) {
    INVOCATION
        .scope(RefCell::default(), async {
            let output = work.await;
            (output, INVOCATION.with(|recorded| recorded.take()))
        })
        .await
}

/// Writes invocations' lines for one Lambda function, on standard output (the function's log).
#[derive(Debug, Clone)]
pub struct Emitter {
    function: String,
}

impl Emitter {
    /// The emitter of the function Lambda runs (`AWS_LAMBDA_FUNCTION_NAME`); `None` outside
    /// Lambda, where nothing is written.
    pub fn from_env() -> Option<Self> {
        std::env::var("AWS_LAMBDA_FUNCTION_NAME")
            .ok()
            .filter(|name| !name.is_empty())
            .map(|function| Self { function })
    }

    /// Writes `recorded` as one line of its own (one write of the whole line, as the JSON logs
    /// are written, so the two never interleave). Nothing when nothing was recorded.
    pub fn emit(&self, recorded: &Recorded) {
        if recorded.is_empty() {
            return;
        }
        let timestamp_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| {
                u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
            });
        let mut line = recorded.emf_line(&self.function, timestamp_ms);
        line.push('\n');
        // A log that cannot be written has nowhere to report it; the answer goes on.
        let _ = std::io::stdout().lock().write_all(line.as_bytes());
    }
}

/// The class of an HTTP status, as the `statusClass` property gives it (`2xx`, `4xx`, `5xx`).
pub fn status_class(status: u16) -> &'static str {
    match status / 100 {
        1 => "1xx",
        2 => "2xx",
        3 => "3xx",
        4 => "4xx",
        _ => "5xx",
    }
}
