//! `template.yaml`'s webhook delivery (issue 46; docs/events.md, "Delivery"): the dispatcher's
//! stream mapping lets only new event items through and reports partial failures, retries a
//! bounded number of times, bisects and keeps what it gave up on in a dead-letter queue; the
//! deliveries queue has its dead letters; the sender reports partial failures with bounded
//! concurrency; the dead letters and a disabled endpoint alarm; and no function sets a test-only
//! setting. Each checker takes the file's text and is shown to catch altered copies. (The two
//! functions' IAM is checked with every other's in `policies`.)

use crate::support;

use serde_norway::Value;
use store::metrics::{DIMENSION, Metric, NAMESPACE};
use support::{assert_each_alteration_caught, assert_none, parse, read, yaml};

/// The only pattern the stream's filter may have: INSERTs of event items.
const EVENT_INSERTS: &str =
    r#"{"eventName": ["INSERT"], "dynamodb": {"NewImage": {"entity": {"S": ["event"]}}}}"#;

fn function_events<'a>(template: &'a Value, function: &str, source: &str) -> &'a Value {
    &template["Resources"][function]["Properties"]["Events"][source]["Properties"]
}

fn dispatcher_problems(text: &str) -> Vec<String> {
    let template = parse(text);
    let stream = function_events(&template, "EventsDispatcherFunction", "Stream");
    let mut problems = Vec::new();
    let mut expect = |what: &str, ok: bool| {
        if !ok {
            problems.push(format!("the dispatcher's stream mapping: {what}"));
        }
    };
    expect(
        "on the table's stream",
        stream["Stream"] == yaml("!GetAtt Table.StreamArn"),
    );
    let patterns: Vec<&str> = stream["FilterCriteria"]["Filters"]
        .as_sequence()
        .map(|filters| {
            filters
                .iter()
                .filter_map(|f| f["Pattern"].as_str())
                .collect()
        })
        .unwrap_or_default();
    let only_events = patterns.len() == 1
        && serde_json::from_str::<serde_json::Value>(patterns[0]).ok()
            == serde_json::from_str(EVENT_INSERTS).ok();
    expect("filtered to INSERTs of event items", only_events);
    expect(
        "reports partial batch failures",
        stream["FunctionResponseTypes"] == yaml("[ReportBatchItemFailures]"),
    );
    expect(
        "bisects a failing batch",
        stream["BisectBatchOnFunctionError"].as_bool() == Some(true),
    );
    expect(
        "retries a bounded number of times",
        stream["MaximumRetryAttempts"]
            .as_u64()
            .is_some_and(|n| n <= 10),
    );
    expect(
        "keeps what it gave up on",
        stream["DestinationConfig"]["OnFailure"]["Destination"]
            == yaml("!GetAtt EventsDispatcherDeadLetters.Arn"),
    );
    expect(
        "keeps up with a drop (batches of 100, 10 at once per shard)",
        stream["BatchSize"].as_u64() >= Some(100)
            && stream["ParallelizationFactor"].as_u64() == Some(10),
    );
    problems
}

fn sender_problems(text: &str) -> Vec<String> {
    let template = parse(text);
    let queue = function_events(&template, "WebhookSenderFunction", "Queue");
    let deliveries = &template["Resources"]["WebhookDeliveries"]["Properties"];
    let mut problems = Vec::new();
    let mut expect = |what: &str, ok: bool| {
        if !ok {
            problems.push(format!("the sender: {what}"));
        }
    };
    expect(
        "on the deliveries queue",
        queue["Queue"] == yaml("!GetAtt WebhookDeliveries.Arn"),
    );
    expect(
        "reports partial batch failures",
        queue["FunctionResponseTypes"] == yaml("[ReportBatchItemFailures]"),
    );
    expect(
        "bounded concurrency",
        queue["ScalingConfig"]["MaximumConcurrency"]
            .as_u64()
            .is_some(),
    );
    expect(
        "the queue's dead letters",
        deliveries["RedrivePolicy"]["deadLetterTargetArn"]
            == yaml("!GetAtt WebhookDeliveriesDeadLetters.Arn")
            && deliveries["RedrivePolicy"]["maxReceiveCount"]
                .as_u64()
                .is_some(),
    );
    let timeout = template["Resources"]["WebhookSenderFunction"]["Properties"]["Timeout"].as_u64();
    expect(
        "a message is seen again only after the sender's timeout",
        deliveries["VisibilityTimeout"].as_u64() >= timeout.map(|t| 6 * t),
    );
    problems
}

fn alarm_problems(text: &str) -> Vec<String> {
    let template = parse(text);
    let alarms = support::resources(&template, "AWS::CloudWatch::Alarm");
    let fires = |namespace: &str, metric: &str, dimensions: Value| {
        alarms.iter().any(|(_, alarm)| {
            let p = &alarm["Properties"];
            p["Namespace"].as_str() == Some(namespace)
                && p["MetricName"].as_str() == Some(metric)
                && p["Dimensions"] == dimensions
                && p["Threshold"].as_u64() == Some(0)
                && p["ComparisonOperator"].as_str() == Some("GreaterThanThreshold")
                && p["AlarmActions"] == yaml("[!Ref AlarmTopic]")
        })
    };
    let mut problems = Vec::new();
    for queue in [
        "EventsDispatcherDeadLetters",
        "WebhookDeliveriesDeadLetters",
    ] {
        let dimensions = yaml(&format!(
            "[{{Name: QueueName, Value: !GetAtt {queue}.QueueName}}]"
        ));
        if !fires("AWS/SQS", "ApproximateNumberOfMessagesVisible", dimensions) {
            problems.push(format!("no alarm on {queue} not empty"));
        }
    }
    let sender = yaml(&format!(
        "[{{Name: {DIMENSION}, Value: !Ref WebhookSenderFunction}}]"
    ));
    if !fires(NAMESPACE, Metric::WebhookEndpointsDisabled.name(), sender) {
        problems.push("no alarm on an endpoint disabled".into());
    }
    problems
}

/// The settings only tests may set: a deployed function with one would reach loopback (the
/// webhook sender) or run its clock ahead.
fn test_only_problems(text: &str) -> Vec<String> {
    ["WEBHOOK_ALLOW_LOOPBACK_FOR_TESTS", "CLOCK_SKEW_SECONDS"]
        .into_iter()
        .filter(|name| text.contains(name))
        .map(|name| format!("the template sets {name}"))
        .collect()
}

#[test]
fn only_new_event_items_reach_the_dispatcher_and_failures_are_kept() {
    let template = read("template.yaml");
    assert_none(dispatcher_problems(&template));
    assert_each_alteration_caught(
        &template,
        &[
            (r#"{"eventName": ["INSERT"], "#, r#"{"#),
            (
                r#""entity": {"S": ["event"]}"#,
                r#""entity": {"S": ["event", "purchase"]}"#,
            ),
            ("            BisectBatchOnFunctionError: true\n", ""),
            ("            MaximumRetryAttempts: 10\n", ""),
            (
                "                Destination: !GetAtt EventsDispatcherDeadLetters.Arn",
                "                Destination: !GetAtt WebhookDeliveries.Arn",
            ),
            ("            ParallelizationFactor: 10\n", ""),
        ],
        dispatcher_problems,
    );
    // ReportBatchItemFailures: the dispatcher's line is the first.
    let without = template.replacen(
        "            FunctionResponseTypes: [ReportBatchItemFailures]\n",
        "",
        1,
    );
    assert!(!dispatcher_problems(&without).is_empty());
}

#[test]
fn the_sender_reports_each_failed_message_and_the_queue_keeps_its_dead_letters() {
    let template = read("template.yaml");
    assert_none(sender_problems(&template));
    assert_each_alteration_caught(
        &template,
        &[
            (
                "        deadLetterTargetArn: !GetAtt WebhookDeliveriesDeadLetters.Arn\n",
                "",
            ),
            ("              MaximumConcurrency: 50\n", ""),
            (
                "      VisibilityTimeout: 180",
                "      VisibilityTimeout: 30",
            ),
        ],
        sender_problems,
    );
    // ReportBatchItemFailures: the sender's line is the second.
    let line = "            FunctionResponseTypes: [ReportBatchItemFailures]\n";
    let at = template.match_indices(line).nth(1).unwrap().0;
    let without = format!("{}{}", &template[..at], &template[at + line.len()..]);
    assert!(!sender_problems(&without).is_empty());
}

#[test]
fn the_dead_letters_and_a_disabled_endpoint_alarm() {
    let template = read("template.yaml");
    assert_none(alarm_problems(&template));
    assert_each_alteration_caught(
        &template,
        &[
            ("MetricName: WebhookEndpointsDisabled", "MetricName: Other"),
            (
                "Value: !GetAtt WebhookDeliveriesDeadLetters.QueueName}]",
                "Value: !GetAtt WebhookDeliveries.QueueName}]",
            ),
            (
                "Value: !GetAtt EventsDispatcherDeadLetters.QueueName}]",
                "Value: !GetAtt Other.QueueName}]",
            ),
        ],
        alarm_problems,
    );
}

#[test]
fn no_deployed_function_can_turn_a_test_only_setting_on() {
    let template = read("template.yaml");
    assert_none(test_only_problems(&template));
    let with = template.replacen(
        "          WEBHOOK_QUEUE_URL: !Ref WebhookDeliveries\n",
        "          WEBHOOK_QUEUE_URL: !Ref WebhookDeliveries\n          WEBHOOK_ALLOW_LOOPBACK_FOR_TESTS: \"1\"\n",
        2,
    );
    assert!(!test_only_problems(&with).is_empty());
}
