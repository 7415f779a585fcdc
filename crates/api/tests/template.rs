//! `template.yaml`: the table `seed-packs --create-table` makes agrees with it (the table created
//! on moto_server is described and compared with the template's declaration); the functions'
//! build; and what an operator relies on in a drop: an alarm on every function's errors, the
//! sweep of expired holds kept running (scheduled, with its event fixture), and a dashboard that
//! shows every metric of `store::metrics`. Its functions' heads, events, log groups and errors
//! alarms are generated (`scripts/gen`) and its IAM policies snapshotted (policies.rs). Like
//! policies.rs, each of those checkers takes the file's text and returns the problems, and is
//! shown to catch altered copies of the real file.

use crate::support;

use std::collections::BTreeSet;

use serde_norway::Value;
use store::metrics::{DIMENSION, Metric, NAMESPACE};
use support::{assert_each_alteration_caught, assert_none, parse, read, resources, text, yaml};

fn template() -> Value {
    parse(&read("template.yaml"))
}

/// (name, key schema, projection type) of a global secondary index.
type Index = (String, Vec<(String, String)>, String);

/// (name, type) pairs of the SDK's key schema.
fn sdk_keys(schema: &[aws_sdk_dynamodb::types::KeySchemaElement]) -> Vec<(String, String)> {
    schema
        .iter()
        .map(|k| {
            (
                k.attribute_name().to_owned(),
                k.key_type().as_str().to_owned(),
            )
        })
        .collect()
}

/// (name, type) pairs of a KeySchema list.
fn keys(list: &Value) -> Vec<(String, String)> {
    list.as_sequence()
        .unwrap()
        .iter()
        .map(|k| (text(&k["AttributeName"]), text(&k["KeyType"])))
        .collect()
}

#[tokio::test]
async fn created_table_matches_the_template() {
    let template = template();
    let declared = &template["Resources"]["Table"]["Properties"];

    let store = testkit::moto::shared_table().await;
    let table = store
        .client()
        .describe_table()
        .table_name(store.table())
        .send()
        .await
        .unwrap()
        .table
        .unwrap();

    let declared_attributes: BTreeSet<(String, String)> = declared["AttributeDefinitions"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|a| (text(&a["AttributeName"]), text(&a["AttributeType"])))
        .collect();
    let actual_attributes: BTreeSet<(String, String)> = table
        .attribute_definitions()
        .iter()
        .map(|a| {
            (
                a.attribute_name().to_owned(),
                a.attribute_type().as_str().to_owned(),
            )
        })
        .collect();
    assert_eq!(actual_attributes, declared_attributes);

    assert_eq!(sdk_keys(table.key_schema()), keys(&declared["KeySchema"]));

    let declared_indexes: BTreeSet<Index> = declared["GlobalSecondaryIndexes"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|i| {
            (
                text(&i["IndexName"]),
                keys(&i["KeySchema"]),
                text(&i["Projection"]["ProjectionType"]),
            )
        })
        .collect();
    let actual_indexes: BTreeSet<Index> = table
        .global_secondary_indexes()
        .iter()
        .map(|i| {
            let keys = sdk_keys(i.key_schema());
            let projection = i
                .projection()
                .and_then(|p| p.projection_type())
                .map(|p| p.as_str().to_owned())
                .unwrap_or_default();
            (i.index_name().unwrap().to_owned(), keys, projection)
        })
        .collect();
    assert_eq!(actual_indexes, declared_indexes);
    assert!(
        table.local_secondary_indexes().is_empty()
            && declared.get("LocalSecondaryIndexes").is_none()
    );

    assert_eq!(text(&declared["BillingMode"]), "PAY_PER_REQUEST");
    let billing = table
        .billing_mode_summary()
        .and_then(|b| b.billing_mode())
        .map(|b| b.as_str().to_owned());
    assert_eq!(billing.as_deref(), Some("PAY_PER_REQUEST"));
}

#[test]
fn functions_are_arm64_al2023_128mb_built_with_cargo_lambda() {
    let template = template();
    let globals = &template["Globals"]["Function"];
    assert_eq!(text(&globals["Runtime"]), "provided.al2023");
    assert_eq!(
        globals["Architectures"].as_sequence().unwrap(),
        &[Value::from("arm64")]
    );
    assert_eq!(globals["MemorySize"].as_u64(), Some(128));
    let mut binaries = BTreeSet::new();
    for (_, resource) in template["Resources"].as_mapping().unwrap() {
        if resource["Type"].as_str() == Some("AWS::Serverless::Function") {
            assert_eq!(
                text(&resource["Metadata"]["BuildMethod"]),
                "rust-cargolambda"
            );
            binaries.insert(text(&resource["Metadata"]["BuildProperties"]["Binary"]));
        }
    }
    // Every function of a route, the scheduled sweep of expired purchase holds and the queue
    // keeper.
    let mut expected: BTreeSet<String> = api::http::routes::routes()
        .iter()
        .map(|route| route.function.to_owned())
        .collect();
    expected.insert("release-holds".to_owned());
    expected.insert("queue-keeper".to_owned());
    // Issue 47's erasure of deleted accounts, every minute.
    expected.insert("account-erasure".to_owned());
    // Issue 46's delivery: on the table's stream and on the deliveries queue.
    expected.insert("events-dispatcher".to_owned());
    expected.insert("webhook-sender".to_owned());
    assert_eq!(binaries, expected);
}

/// The (namespace, metric name, dimension values) an alarm without metric math watches.
fn alarm_metric(alarm: &Value) -> (Option<&str>, Option<&str>, Vec<&Value>) {
    let properties = &alarm["Properties"];
    let dimensions = properties["Dimensions"]
        .as_sequence()
        .map_or_else(Vec::new, |d| d.iter().map(|d| &d["Value"]).collect());
    (
        properties["Namespace"].as_str(),
        properties["MetricName"].as_str(),
        dimensions,
    )
}

/// Every function has an alarm on its `Errors` (AWS/Lambda, `FunctionName` its `!Ref`), and
/// every alarm notifies an SNS topic of the template.
fn alarm_problems(template_text: &str) -> Vec<String> {
    let template = parse(template_text);
    let topics: Vec<Value> = resources(&template, "AWS::SNS::Topic")
        .iter()
        .map(|(name, _)| yaml(&format!("!Ref {name}")))
        .collect();
    let alarms = resources(&template, "AWS::CloudWatch::Alarm");
    let mut problems = Vec::new();
    for (name, alarm) in &alarms {
        let notifies = alarm["Properties"]["AlarmActions"]
            .as_sequence()
            .is_some_and(|actions| actions.iter().any(|a| topics.contains(a)));
        if !notifies {
            problems.push(format!("{name} notifies no topic of the template"));
        }
    }
    for (function, _) in resources(&template, "AWS::Serverless::Function") {
        let function_ref = yaml(&format!("!Ref {function}"));
        let alarmed = alarms.iter().any(|(_, alarm)| {
            alarm_metric(alarm) == (Some("AWS/Lambda"), Some("Errors"), vec![&function_ref])
        });
        if !alarmed {
            problems.push(format!("{function} has no alarm on its Errors"));
        }
    }
    problems
}

#[test]
fn every_function_has_an_errors_alarm_and_every_alarm_notifies() {
    assert_none(alarm_problems(&read("template.yaml")));
}

#[test]
fn a_function_without_an_errors_alarm_is_caught() {
    assert_each_alteration_caught(
        &read("template.yaml"),
        &[
            // The first alarm naming open-pack is its Errors alarm: now it watches get-pack.
            (
                "Value: !Ref OpenPackFunction}]",
                "Value: !Ref GetPackFunction}]",
            ),
            // release-holds' alarm watches another metric.
            (
                "MetricName: Errors\n      Dimensions: [{Name: FunctionName, Value: !Ref ReleaseHoldsFunction}]",
                "MetricName: Duration\n      Dimensions: [{Name: FunctionName, Value: !Ref ReleaseHoldsFunction}]",
            ),
            // A new function, with no alarm.
            (
                "  ListPacksLogs:\n",
                "  RefundFunction:\n    Type: AWS::Serverless::Function\n    Properties: {}\n\n  ListPacksLogs:\n",
            ),
            // An alarm that tells no one.
            ("      AlarmActions: [!Ref AlarmTopic]\n", ""),
        ],
        alarm_problems,
    );
}

/// release-holds, which puts expired holds back on sale, runs whatever the traffic: it has its
/// own reserved concurrency; its schedule retries a run Scheduler could not start and then puts
/// it on an SQS queue that keeps it (`MessageRetentionPeriod`), with an alarm on that queue; and
/// an alarm fires when it has not run, missing data breaching (no invocation is no data).
fn sweep_problems(template_text: &str) -> Vec<String> {
    let template = parse(template_text);
    let mut problems = Vec::new();
    let functions = resources(&template, "AWS::Serverless::Function");
    let Some((name, function)) = functions.iter().find(|(_, f)| {
        f["Metadata"]["BuildProperties"]["Binary"].as_str() == Some("release-holds")
    }) else {
        return vec!["no release-holds function".to_owned()];
    };
    let properties = &function["Properties"];
    if properties["ReservedConcurrentExecutions"]
        .as_u64()
        .is_none_or(|n| n < 1)
    {
        problems.push(format!(
            "{name}: ReservedConcurrentExecutions is {:?}, not 1 or more",
            properties["ReservedConcurrentExecutions"]
        ));
    }
    let schedules: Vec<&Value> = properties["Events"]
        .as_mapping()
        .into_iter()
        .flatten()
        .map(|(_, event)| event)
        .filter(|event| event["Type"].as_str() == Some("ScheduleV2"))
        .collect();
    let [schedule] = &schedules[..] else {
        return vec![format!(
            "{name} has {} ScheduleV2 events, not one",
            schedules.len()
        )];
    };
    let schedule = &schedule["Properties"];
    for field in ["MaximumRetryAttempts", "MaximumEventAgeInSeconds"] {
        if schedule["RetryPolicy"][field].as_u64().is_none() {
            problems.push(format!("{name}'s schedule has no RetryPolicy.{field}"));
        }
    }
    let alarms = resources(&template, "AWS::CloudWatch::Alarm");
    let dead_letters = resources(&template, "AWS::SQS::Queue")
        .into_iter()
        .find(|(queue, _)| {
            schedule["DeadLetterConfig"]["Arn"] == yaml(&format!("!GetAtt {queue}.Arn"))
        });
    match dead_letters {
        None => problems.push(format!(
            "{name}'s schedule has no DeadLetterConfig.Arn of a queue of the template"
        )),
        Some((queue, resource)) => {
            if resource["Properties"]["MessageRetentionPeriod"]
                .as_u64()
                .is_none()
            {
                problems.push(format!("{queue} has no MessageRetentionPeriod"));
            }
            let queue_name = yaml(&format!("!GetAtt {queue}.QueueName"));
            let watched = alarms.iter().any(|(_, alarm)| {
                alarm_metric(alarm)
                    == (
                        Some("AWS/SQS"),
                        Some("ApproximateNumberOfMessagesVisible"),
                        vec![&queue_name],
                    )
            });
            if !watched {
                problems.push(format!("no alarm on the messages of {queue}"));
            }
        }
    }
    let function_ref = yaml(&format!("!Ref {name}"));
    let not_run_alarm = alarms.iter().any(|(_, alarm)| {
        alarm_metric(alarm) == (Some("AWS/Lambda"), Some("Invocations"), vec![&function_ref])
            && alarm["Properties"]["TreatMissingData"].as_str() == Some("breaching")
    });
    if !not_run_alarm {
        problems.push(format!(
            "no alarm on {name}'s Invocations that treats missing data as breaching"
        ));
    }
    problems
}

#[test]
fn the_sweep_keeps_running_and_says_when_it_does_not() {
    assert_none(sweep_problems(&read("template.yaml")));
}

#[test]
fn a_sweep_that_may_stop_unnoticed_is_caught() {
    assert_each_alteration_caught(
        &read("template.yaml"),
        &[
            ("      ReservedConcurrentExecutions: 2\n", ""),
            (
                "ReservedConcurrentExecutions: 2",
                "ReservedConcurrentExecutions: 0",
            ),
            ("              MaximumRetryAttempts: 3\n", ""),
            (
                "            DeadLetterConfig:\n              Arn: !GetAtt ReleaseHoldsDeadLetters.Arn\n",
                "",
            ),
            (
                "Arn: !GetAtt ReleaseHoldsDeadLetters.Arn",
                "Arn: !GetAtt AlarmTopic.TopicArn",
            ),
            ("      MessageRetentionPeriod: 1209600\n", ""),
            (
                "Value: !GetAtt ReleaseHoldsDeadLetters.QueueName}]",
                "Value: !GetAtt ReleaseHoldsDeadLetters.Arn}]",
            ),
            (
                "TreatMissingData: breaching",
                "TreatMissingData: notBreaching",
            ),
        ],
        sweep_problems,
    );
}

/// `infra/events/release-holds.json` is what EventBridge Scheduler sends a Lambda target without
/// an `Input` (the function it starts is no route's), and the template schedules that function.
#[test]
fn the_sweep_fixture_is_a_scheduler_event_and_the_sweep_is_scheduled() {
    let event: serde_json::Value =
        serde_json::from_str(&read("infra/events/release-holds.json")).unwrap();
    assert_eq!(event["source"], "aws.scheduler");
    assert_eq!(event["detail-type"], "Scheduled Event");
    assert_eq!(event["detail"], "{}");
    assert!(
        event["resources"][0]
            .as_str()
            .is_some_and(|arn| arn.starts_with("arn:aws:scheduler:")),
        "{event}"
    );
    assert!(
        api::http::routes::routes()
            .iter()
            .all(|r| r.function != "release-holds"),
        "release-holds is not routed"
    );
    let template = template();
    let function = &template["Resources"]["ReleaseHoldsFunction"];
    assert_eq!(
        function["Metadata"]["BuildProperties"]["Binary"].as_str(),
        Some("release-holds")
    );
    let events = function["Properties"]["Events"].as_mapping().unwrap();
    assert_eq!(events.len(), 1, "only its schedule: {events:?}");
    let (_, schedule) = events.iter().next().unwrap();
    assert_eq!(schedule["Type"].as_str(), Some("ScheduleV2"));
    assert_eq!(
        schedule["Properties"]["ScheduleExpression"].as_str(),
        Some("rate(1 minute)")
    );
    // The sweep stops starting batches after 45 s (functions/src/bin/release-holds.rs).
    assert_eq!(function["Properties"]["Timeout"].as_u64(), Some(60));
}

/// The metric names of [`NAMESPACE`] a dashboard body shows: rows `[NAMESPACE, name, DIMENSION,
/// ...]`, and `SEARCH('{NAMESPACE,DIMENSION} MetricName="name"', ...)` expressions.
fn dashboard_metrics(body: &serde_json::Value) -> BTreeSet<String> {
    let search = format!("{{{NAMESPACE},{DIMENSION}}} MetricName=\"");
    let mut names = BTreeSet::new();
    for widget in body["widgets"].as_array().into_iter().flatten() {
        for row in widget["properties"]["metrics"]
            .as_array()
            .into_iter()
            .flatten()
        {
            if row[0] == NAMESPACE && row[2] == DIMENSION {
                names.extend(row[1].as_str().map(str::to_owned));
            }
            let expression = row[0]["expression"].as_str().unwrap_or_default();
            for rest in expression.split(&search).skip(1) {
                names.extend(rest.split('"').next().map(str::to_owned));
            }
        }
    }
    names
}

/// The dashboard (its body a `!Sub` of JSON) shows every metric of the catalogue, and no name
/// of its namespace the catalogue lacks (a misspelt one would show nothing).
fn dashboard_problems(template_text: &str) -> Vec<String> {
    let template = parse(template_text);
    let dashboards = resources(&template, "AWS::CloudWatch::Dashboard");
    let [(name, dashboard)] = &dashboards[..] else {
        return vec![format!("{} dashboards, not one", dashboards.len())];
    };
    let Value::Tagged(sub) = &dashboard["Properties"]["DashboardBody"] else {
        return vec![format!("{name}'s DashboardBody is not a !Sub")];
    };
    // A `!Sub` of the text alone, or of the text and its variables (the edge's, which are
    // `!If`s: the body deploys with the edge off).
    let text = match &sub.value {
        Value::Sequence(parts) => parts.first(),
        text => Some(text),
    };
    // `${...}` only stands inside JSON strings, so the text parses before substitution.
    let body = match text.and_then(Value::as_str).map(serde_json::from_str) {
        Some(Ok(body)) => body,
        other => return vec![format!("{name}'s DashboardBody is not JSON: {other:?}")],
    };
    let shown = dashboard_metrics(&body);
    let catalogue: BTreeSet<String> = Metric::ALL.iter().map(|m| m.name().to_owned()).collect();
    let mut problems: Vec<String> = catalogue
        .difference(&shown)
        .map(|metric| format!("{name} does not show {NAMESPACE} {metric}"))
        .collect();
    problems.extend(
        shown
            .difference(&catalogue)
            .map(|metric| format!("{name} shows {NAMESPACE} {metric}, which Metric lacks")),
    );
    problems
}

#[test]
fn the_dashboard_shows_every_metric_of_the_catalogue() {
    assert_none(dashboard_problems(&read("template.yaml")));
}

#[test]
fn a_dashboard_that_leaves_a_metric_out_is_caught() {
    assert_each_alteration_caught(
        &read("template.yaml"),
        &[
            (
                r#"MetricName=\"TopUpsCredited\""#,
                r#"MetricName=\"TopUpCredited\""#,
            ),
            (
                r#"["FanApi", "PacksOpened", "Function""#,
                r#"["FanApi", "PacksOpened", "FunctionName""#,
            ),
            (
                r#"SEARCH('{FanApi,Function} MetricName=\"Requests\"', 'Sum', 60)"#,
                r#"SEARCH('{AWS/Lambda,FunctionName} MetricName=\"Invocations\"', 'Sum', 60)"#,
            ),
        ],
        dashboard_problems,
    );
}

/// Every index of the table (`store::schema::INDEXES`) has an alarm on its own read and
/// write throttle events (AWS/DynamoDB, `TableName` the table and `GlobalSecondaryIndexName` the
/// index), that notifies: an index that throttles holds back the table's writes.
fn index_alarm_problems(template_text: &str) -> Vec<String> {
    let template = parse(template_text);
    let alarms = resources(&template, "AWS::CloudWatch::Alarm");
    let watched = |alarm: &Value, metric: &str, index: &str| {
        alarm["Properties"]["Metrics"]
            .as_sequence()
            .into_iter()
            .flatten()
            .any(|query| {
                let stat = &query["MetricStat"]["Metric"];
                stat["Namespace"].as_str() == Some("AWS/DynamoDB")
                    && stat["MetricName"].as_str() == Some(metric)
                    && stat["Dimensions"]
                        == yaml(&format!(
                            "[{{Name: TableName, Value: !Ref Table}}, {{Name: GlobalSecondaryIndexName, Value: {index}}}]"
                        ))
            })
            && alarm["Properties"]["AlarmActions"] == yaml("[!Ref AlarmTopic]")
    };
    let mut problems = Vec::new();
    for (index, _, _) in store::schema::INDEXES {
        let alarmed = alarms.iter().any(|(_, alarm)| {
            watched(alarm, "ReadThrottleEvents", index)
                && watched(alarm, "WriteThrottleEvents", index)
        });
        if !alarmed {
            problems.push(format!(
                "the index {index} has no alarm on its throttle events"
            ));
        }
    }
    problems
}

#[test]
fn every_index_has_a_throttle_alarm() {
    assert_none(index_alarm_problems(&read("template.yaml")));
}

#[test]
fn an_index_without_a_throttle_alarm_is_caught() {
    assert_each_alteration_caught(
        &read("template.yaml"),
        &[
            // The fan's index's alarm watches another index's writes.
            (
                "MetricName: WriteThrottleEvents\n              Dimensions: [{Name: TableName, Value: !Ref Table}, {Name: GlobalSecondaryIndexName, Value: GSI3}]",
                "MetricName: WriteThrottleEvents\n              Dimensions: [{Name: TableName, Value: !Ref Table}, {Name: GlobalSecondaryIndexName, Value: GSI2}]",
            ),
            // ... or only its reads.
            (
                "MetricName: WriteThrottleEvents\n              Dimensions: [{Name: TableName, Value: !Ref Table}, {Name: GlobalSecondaryIndexName, Value: GSI3}]",
                "MetricName: ReadThrottleEvents\n              Dimensions: [{Name: TableName, Value: !Ref Table}, {Name: GlobalSecondaryIndexName, Value: GSI3}]",
            ),
            // The listing index's alarm is gone.
            (
                "  Gsi1ThrottledAlarm:\n    Type: AWS::CloudWatch::Alarm",
                "  Gsi1ThrottledAlarm:\n    Type: AWS::CloudWatch::Dashboard",
            ),
        ],
        index_alarm_problems,
    );
}

/// The table deletes the rate-limit counters and spent human-check tokens by their `ttl`
/// (`store::schema::TTL`): without it every window's counter would stay for ever.
#[test]
fn the_table_expires_items_by_the_schemas_ttl_attribute() {
    let template = parse(&read("template.yaml"));
    let tables = resources(&template, "AWS::DynamoDB::Table");
    let [(_, table)] = &tables[..] else {
        panic!("{} tables, not one", tables.len());
    };
    let ttl = &table["Properties"]["TimeToLiveSpecification"];
    assert_eq!(text(&ttl["AttributeName"]), store::schema::TTL);
    assert_eq!(ttl["Enabled"].as_bool(), Some(true));
}
