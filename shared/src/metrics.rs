//! The catalogue of the functions' own CloudWatch metrics: what `template.yaml`'s dashboard and
//! alarms read, so that a name is spelled once (a test checks that the dashboard shows every one).
//!
//! They are emitted in CloudWatch Embedded Metric Format (a JSON log line the Lambda log group
//! turns into metrics), in [`NAMESPACE`], with one dimension set, `[["Function"]]` ([`DIMENSION`]),
//! whose value is the Lambda function's name (`AWS_LAMBDA_FUNCTION_NAME`, which starts with the
//! stack's name, so two stacks in one account do not mix). Identifiers with many values (`packId`,
//! `requestId`) go in the line as properties, never as dimensions: each distinct dimension value
//! is a metric of its own, billed and kept apart.

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
    /// A DynamoDB transaction cancelled by a concurrent one on the same item (then decided again).
    TransactionConflicts,
    /// A DynamoDB call throttled (after the SDK's retries).
    DynamoDbThrottled,
}

impl Metric {
    pub const ALL: [Metric; 12] = [
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
        Metric::TransactionConflicts,
        Metric::DynamoDbThrottled,
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
            Metric::TransactionConflicts => "TransactionConflicts",
            Metric::DynamoDbThrottled => "DynamoDbThrottled",
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
