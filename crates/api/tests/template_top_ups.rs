//! `template.yaml`'s guards of Cash top-ups: an alarm on every paid top-up the webhook could not
//! credit (`TopUpsUnmatched`, `TopUpsUncredited`: answered 200 to Stripe, so no Lambda error or
//! 5xx shows them), and the create's own throttle, below Stripe's documented rate limit. Each
//! checker takes the file's text and returns the problems, and is shown to catch altered copies.

use crate::support;

use serde_norway::Value;
use store::metrics::{DIMENSION, Metric, NAMESPACE};
use support::{assert_each_alteration_caught, assert_none, parse, read, resources, yaml};

/// Stripe's documented limit on one endpoint (`POST /v1/checkout/sessions`), and a sandbox
/// account's on all of them: 25 requests a second (docs.stripe.com/rate-limits).
const STRIPE_REQUESTS_PER_SECOND: u64 = 25;

/// Each metric of a paid top-up not credited has an alarm that fires on any one: the sum over a
/// minute of the webhook function's metric (the EMF dimension `Function`, its name) above 0,
/// missing data not breaching (no event is no data), notifying the alarm topic.
fn unsettled_alarm_problems(template_text: &str) -> Vec<String> {
    let template = parse(template_text);
    let alarms = resources(&template, "AWS::CloudWatch::Alarm");
    let dimensions = yaml(&format!(
        "[{{Name: {DIMENSION}, Value: !Ref StripeWebhookFunction}}]"
    ));
    let mut problems = Vec::new();
    for metric in [Metric::TopUpsUnmatched, Metric::TopUpsUncredited] {
        let fires_on_any = alarms.iter().any(|(_, alarm)| {
            let p = &alarm["Properties"];
            p["Namespace"].as_str() == Some(NAMESPACE)
                && p["MetricName"].as_str() == Some(metric.name())
                && p["Dimensions"] == dimensions
                && p["Statistic"].as_str() == Some("Sum")
                && p["Threshold"].as_u64() == Some(0)
                && p["ComparisonOperator"].as_str() == Some("GreaterThanThreshold")
                && p["EvaluationPeriods"].as_u64() == Some(1)
                && p["DatapointsToAlarm"].as_u64() == Some(1)
                && p["TreatMissingData"].as_str() == Some("notBreaching")
                && p["AlarmActions"] == yaml("[!Ref AlarmTopic]")
        });
        if !fires_on_any {
            problems.push(format!(
                "no alarm fires on any {} of the webhook function",
                metric.name()
            ));
        }
    }
    problems
}

#[test]
fn every_paid_top_up_not_credited_is_alarmed_on() {
    assert_none(unsettled_alarm_problems(&read("template.yaml")));
}

#[test]
fn an_unsettled_top_up_alarm_that_misses_one_is_caught() {
    assert_each_alteration_caught(
        &read("template.yaml"),
        &[
            // Gone.
            (
                "  TopUpsUnmatchedAlarm:\n    Type: AWS::CloudWatch::Alarm",
                "  TopUpsUnmatchedAlarm:\n    Type: AWS::CloudWatch::Dashboard",
            ),
            // Another function's metric (none: the webhook counts it).
            (
                "MetricName: TopUpsUncredited\n      Dimensions: [{Name: Function, Value: !Ref StripeWebhookFunction}]",
                "MetricName: TopUpsUncredited\n      Dimensions: [{Name: Function, Value: !Ref CashTopUpsFunction}]",
            ),
            // Only from the second one on.
            (
                "MetricName: TopUpsUnmatched\n      Dimensions: [{Name: Function, Value: !Ref StripeWebhookFunction}]\n      Statistic: Sum\n      Period: 60\n      EvaluationPeriods: 1\n      DatapointsToAlarm: 1\n      Threshold: 0",
                "MetricName: TopUpsUnmatched\n      Dimensions: [{Name: Function, Value: !Ref StripeWebhookFunction}]\n      Statistic: Sum\n      Period: 60\n      EvaluationPeriods: 1\n      DatapointsToAlarm: 1\n      Threshold: 1",
            ),
            // Telling no one.
            (
                "MetricName: TopUpsUncredited\n      Dimensions: [{Name: Function, Value: !Ref StripeWebhookFunction}]\n      Statistic: Sum\n      Period: 60\n      EvaluationPeriods: 1\n      DatapointsToAlarm: 1\n      Threshold: 0\n      ComparisonOperator: GreaterThanThreshold\n      TreatMissingData: notBreaching\n      AlarmActions: [!Ref AlarmTopic]",
                "MetricName: TopUpsUncredited\n      Dimensions: [{Name: Function, Value: !Ref StripeWebhookFunction}]\n      Statistic: Sum\n      Period: 60\n      EvaluationPeriods: 1\n      DatapointsToAlarm: 1\n      Threshold: 0\n      ComparisonOperator: GreaterThanThreshold\n      TreatMissingData: notBreaching\n      AlarmActions: []",
            ),
        ],
        unsettled_alarm_problems,
    );
}

/// The default of a Number parameter.
fn default_of(template: &Value, parameter: &str) -> Option<u64> {
    template["Parameters"][parameter]["Default"].as_u64()
}

/// The create's route (`CreateTopUp`, of cash-top-ups) has its own throttle, `TopUpRateLimit`
/// and `TopUpBurstLimit`, whose defaults together stay under Stripe's limit in any second (a
/// full burst and a second's rate).
fn top_up_throttle_problems(template_text: &str) -> Vec<String> {
    let template = parse(template_text);
    let event = &template["Resources"]["CashTopUpsFunction"]["Properties"]["Events"]["CreateTopUp"];
    let settings = &event["Properties"]["RouteSettings"];
    let mut problems = Vec::new();
    for (setting, parameter) in [
        ("ThrottlingRateLimit", "TopUpRateLimit"),
        ("ThrottlingBurstLimit", "TopUpBurstLimit"),
    ] {
        if settings[setting] != yaml(&format!("!Ref {parameter}")) {
            problems.push(format!("CreateTopUp's {setting} is not !Ref {parameter}"));
        }
    }
    match (
        default_of(&template, "TopUpRateLimit"),
        default_of(&template, "TopUpBurstLimit"),
    ) {
        (Some(rate), Some(burst)) if rate + burst < STRIPE_REQUESTS_PER_SECOND => {}
        other => problems.push(format!(
            "TopUpRateLimit + TopUpBurstLimit defaults {other:?} do not stay under Stripe's \
             {STRIPE_REQUESTS_PER_SECOND} a second"
        )),
    }
    problems
}

#[test]
fn the_top_up_route_has_its_own_throttle_under_stripes_limit() {
    assert_none(top_up_throttle_problems(&read("template.yaml")));
}

#[test]
fn a_top_up_throttle_missing_or_above_stripes_limit_is_caught() {
    assert_each_alteration_caught(
        &read("template.yaml"),
        &[
            // The API's default throttle only.
            (
                "            # Tighter than the API's default: see TopUpRateLimit.\n            RouteSettings:\n              ThrottlingRateLimit: !Ref TopUpRateLimit\n              ThrottlingBurstLimit: !Ref TopUpBurstLimit\n",
                "",
            ),
            // Stripe's whole live limit.
            (
                "  TopUpRateLimit:\n    Type: Number\n    Default: 10",
                "  TopUpRateLimit:\n    Type: Number\n    Default: 100",
            ),
            (
                "  TopUpBurstLimit:\n    Type: Number\n    Default: 10",
                "  TopUpBurstLimit:\n    Type: Number\n    Default: 20",
            ),
        ],
        top_up_throttle_problems,
    );
}
