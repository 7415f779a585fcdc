//! The metrics line (CloudWatch Embedded Metric Format) checked against the specification
//! (`testkit::emf`), the per-invocation scope that counts, and the business events the handlers
//! count over the in-memory store (the binaries' test counts them on DynamoDB).

use api::http::routes::{complete_purchase_routes, open_pack_routes, start_purchase_routes};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use api::handlers::release_holds::{SweepState, release_holds};
use api::state::PurchaseState;
use lambda_http::{Body, Response};
use store::MemoryStore;
use store::metrics::{self, DIMENSION, Metric, NAMESPACE, Recorded};
use testkit::emf;
use testkit::events::{ApiEvent, call, parts};
use testkit::tokens::token;

const NOW_MS: u64 = 1_764_000_000_123;

#[test]
fn a_line_is_emf_with_every_recorded_metric_and_only_those() {
    let mut recorded = Recorded::default();
    recorded.add(Metric::Requests, 1);
    recorded.set(Metric::Latency, 12.5);
    recorded.add(Metric::PurchasesStarted, 1);
    recorded.add(Metric::TransactionConflicts, 1);
    recorded.add(Metric::TransactionConflicts, 1);
    recorded.property("statusClass", "2xx");
    recorded.property("packId", "nba-rookie-2026");
    let line = recorded.emf_line("fan-api-StartPurchaseFunction-AbC", NOW_MS);
    assert!(!line.contains('\n'), "one line: {line}");
    let parsed = emf::parse(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
    assert_eq!(parsed.timestamp_ms, NOW_MS);
    assert_eq!(parsed.namespace, NAMESPACE);
    assert_eq!(parsed.dimensions, [[DIMENSION]]);
    assert_eq!(
        parsed.dimension_values[DIMENSION],
        "fan-api-StartPurchaseFunction-AbC"
    );
    let metrics: Vec<(&str, f64, &str)> = parsed
        .metrics
        .iter()
        .map(|(name, (value, unit))| (name.as_str(), *value, unit.as_str()))
        .collect();
    assert_eq!(
        metrics,
        [
            ("Latency", 12.5, "Milliseconds"),
            ("PurchasesStarted", 1.0, "Count"),
            ("Requests", 1.0, "Count"),
            ("TransactionConflicts", 2.0, "Count"),
        ]
    );
    assert_eq!(parsed.property("statusClass"), Some("2xx"));
    assert_eq!(parsed.property("packId"), Some("nba-rookie-2026"));
    assert_eq!(parsed.properties.len(), 2, "{line}");
    // Counts are written as whole numbers.
    assert!(line.contains(r#""Requests":1,"#), "{line}");
}

#[test]
fn every_metric_of_the_catalogue_makes_a_valid_line_with_its_unit() {
    let mut recorded = Recorded::default();
    for (n, metric) in Metric::ALL.into_iter().enumerate() {
        assert_eq!(metric as usize, n, "Metric::ALL is in declaration order");
        recorded.add(metric, 3);
    }
    let parsed = emf::parse(&recorded.emf_line("f", NOW_MS)).unwrap();
    assert_eq!(parsed.metrics.len(), Metric::ALL.len());
    for metric in Metric::ALL {
        assert_eq!(
            parsed.metrics[metric.name()],
            (3.0, metric.unit().to_owned()),
            "{metric:?}"
        );
    }
}

#[test]
fn names_and_properties_are_escaped_and_a_property_set_twice_keeps_the_last() {
    let mut recorded = Recorded::default();
    recorded.add(Metric::Requests, 1);
    recorded.property("requestId", "a\"b\\c\n");
    recorded.property("requestId", "x\"y");
    let line = recorded.emf_line("we\"ird\nname", NOW_MS);
    assert!(!line.contains('\n'));
    let parsed = emf::parse(&line).unwrap();
    assert_eq!(parsed.dimension_values[DIMENSION], "we\"ird\nname");
    assert_eq!(parsed.property("requestId"), Some("x\"y"));
    assert_eq!(parsed.properties.len(), 1);
}

#[test]
fn the_checker_refuses_lines_that_break_the_specification() {
    let good = r#"{"_aws":{"Timestamp":1764000000123,"CloudWatchMetrics":[{"Namespace":"FanApi","Dimensions":[["Function"]],"Metrics":[{"Name":"Requests","Unit":"Count"}]}]},"Function":"f","Requests":1}"#;
    assert!(emf::parse(good).is_ok());
    for (bad, why) in [
        (good.replace("1764000000123", "1764000000"), "seconds"),
        (good.replace(r#""Function":"f","#, ""), "no dimension value"),
        (
            good.replace(r#""Function":"f""#, r#""Function":7"#),
            "dimension a number",
        ),
        (good.replace(r#","Requests":1"#, ""), "no metric value"),
        (
            good.replace(r#""Requests":1"#, r#""Requests":"1""#),
            "metric a string",
        ),
        (good.replace(r#""Count""#, r#""Counts""#), "unknown unit"),
        (good.replace(r#""_aws""#, r#""aws""#), "no _aws"),
        (
            good.replace(r#"[["Function"]]"#, r#"["Function"]"#),
            "flat dimensions",
        ),
    ] {
        assert!(emf::parse(&bad).is_err(), "{why}: {bad}");
    }
    // A JSON log line carrying `_aws` inside another field is not EMF: CloudWatch ignores it.
    let nested = format!(r#"{{"level":"INFO","fields":{good}}}"#);
    assert!(emf::lines(&nested).is_empty());
    assert_eq!(emf::lines(&format!("text\n{good}\n{nested}\n")).len(), 1);
}

#[test]
fn status_classes() {
    for (status, class) in [
        (200, "2xx"),
        (201, "2xx"),
        (404, "4xx"),
        (429, "4xx"),
        (503, "5xx"),
    ] {
        assert_eq!(metrics::status_class(status), class);
    }
}

#[tokio::test]
async fn counts_land_in_their_own_invocation_and_nowhere_outside_one() {
    // Outside an invocation (local-api, tools): nothing, and no failure.
    metrics::count(Metric::PurchasesStarted);
    let ((), recorded) = metrics::record(async {}).await;
    assert!(recorded.is_empty());

    // Two invocations at once on one task: each keeps its own counts, across awaits.
    let invocation = |metric: Metric, times: u64| {
        metrics::record(async move {
            for _ in 0..times {
                metrics::count(metric);
                tokio::task::yield_now().await;
            }
            metrics::property("packId", "p");
        })
    };
    // Counted between their steps, outside both: lands in neither.
    let outside = async {
        for _ in 0..3 {
            metrics::count(Metric::PacksOpened);
            tokio::task::yield_now().await;
        }
    };
    let (((), one), ((), two), ()) = tokio::join!(
        invocation(Metric::PacksOpened, 3),
        invocation(Metric::HoldsReleased, 2),
        outside
    );
    assert_eq!(one.value(Metric::PacksOpened), Some(3.0));
    assert_eq!(one.value(Metric::HoldsReleased), None);
    assert_eq!(two.value(Metric::HoldsReleased), Some(2.0));
    assert_eq!(two.value(Metric::PacksOpened), None);
}

/// The business events over the in-memory store (what local-api runs), counted by the handlers
/// as on DynamoDB: the same flow as the binaries' test (functions/tests/start_purchase_metrics.rs).
#[tokio::test]
async fn the_handlers_count_a_flows_business_events_over_the_memory_store() {
    let store = MemoryStore::default();
    let mut drop = testkit::packs::active("drop", 60);
    (drop.total_supply, drop.remaining, drop.max_per_user) = (2, 2, Some(1));
    let mut late = testkit::packs::active("late", 60);
    (late.total_supply, late.remaining) = (1, 1);
    for pack in [&drop, &late, &testkit::packs::active("gone", 60)] {
        testkit::packs::save(&store, pack).await;
    }
    let state = Arc::new(PurchaseState {
        store,
        verifier: testkit::tokens::verifier(),
        hold: Duration::from_secs(600),
        max_body_bytes: api::http::request::DEFAULT_MAX_BODY_BYTES,
        policy: testkit::purchases::ROOMY,
        human: None,
    });
    // Holds of no time at all: they have run out by the next request.
    let dead_holds = Arc::new(PurchaseState {
        hold: Duration::ZERO,
        store: state.store.clone(),
        verifier: testkit::tokens::verifier(),
        max_body_bytes: state.max_body_bytes,
        policy: state.policy,
        human: None,
    });
    let start = |pack: &str, user: &str| {
        ApiEvent::post(&format!("/api/packs/{pack}/purchases"))
            .bearer(&token(user, Some("fan@example.com")))
            .header("idempotency-key", "k")
    };
    use Metric::*;
    let (status, recorded, body) = counted(call(
        start_purchase_routes(),
        &state,
        start("drop", "a").request(),
    ))
    .await;
    assert_eq!(
        (status, counts(&recorded)),
        (201, vec![(PurchasesStarted, 1)])
    );
    let id = body["purchase"]["id"].as_str().unwrap().to_owned();
    let (status, recorded, _) = counted(call(
        start_purchase_routes(),
        &state,
        start("drop", "a").request(),
    ))
    .await;
    assert_eq!(
        (status, counts(&recorded)),
        (201, vec![]),
        "a replay starts nothing"
    );
    let (status, recorded, _) = counted(call(
        start_purchase_routes(),
        &state,
        start("drop", "a").header("idempotency-key", "k2").request(),
    ))
    .await;
    assert_eq!(
        (status, counts(&recorded)),
        (409, vec![(PurchaseLimitReached, 1)])
    );
    let (status, _, _) = counted(call(
        start_purchase_routes(),
        &state,
        start("drop", "b").request(),
    ))
    .await;
    assert_eq!(status, 201);
    let (status, recorded, _) = counted(call(
        start_purchase_routes(),
        &state,
        start("drop", "c").request(),
    ))
    .await;
    assert_eq!(
        (status, counts(&recorded)),
        (409, vec![(PurchasesSoldOut, 1)])
    );

    testkit::purchases::credit(&state.store, "a", 1000, "USD", "grant-a").await;
    let pay = ApiEvent::new("PUT", &format!("/api/packs/drop/purchases/{id}"))
        .bearer(&token("a", None))
        .json(r#"{"payment":{"method":"cash"}}"#);
    let (status, recorded, _) =
        counted(call(complete_purchase_routes(), &state, pay.request())).await;
    assert_eq!(
        (status, counts(&recorded)),
        (200, vec![(PurchasesCompleted, 1)])
    );
    let (status, recorded, _) =
        counted(call(complete_purchase_routes(), &state, pay.request())).await;
    assert_eq!(
        (status, counts(&recorded)),
        (200, vec![]),
        "a repeat pays nothing"
    );
    let open =
        ApiEvent::post(&format!("/api/packs/drop/purchases/{id}/open")).bearer(&token("a", None));
    let (status, recorded, _) = counted(call(open_pack_routes(), &state, open.request())).await;
    assert_eq!((status, counts(&recorded)), (200, vec![(PacksOpened, 1)]));
    let (status, recorded, _) = counted(call(open_pack_routes(), &state, open.request())).await;
    assert_eq!(
        (status, counts(&recorded)),
        (200, vec![]),
        "a repeat opens nothing"
    );

    // The last unit of `late` held by a hold that ran out: the next start releases it first.
    let (status, _, _) = counted(call(
        start_purchase_routes(),
        &dead_holds,
        start("late", "d").request(),
    ))
    .await;
    assert_eq!(status, 201);
    let (status, recorded, _) = counted(call(
        start_purchase_routes(),
        &state,
        start("late", "e").request(),
    ))
    .await;
    assert_eq!(
        (status, counts(&recorded)),
        (201, vec![(PurchasesStarted, 1), (HoldsReleased, 1)])
    );
    // The sweep releases the rest.
    for user in ["f", "g"] {
        let (status, _, _) = counted(call(
            start_purchase_routes(),
            &dead_holds,
            start("gone", user).request(),
        ))
        .await;
        assert_eq!(status, 201);
    }
    let sweep = SweepState {
        store: state.store.clone(),
        budget: Duration::from_secs(10),
        refresh_again_after: None,
    };
    let (swept, recorded) = metrics::record(release_holds(&sweep, ())).await;
    assert_eq!(swept.unwrap().released, 2);
    assert_eq!(counts(&recorded), vec![(HoldsReleased, 2)]);
}

/// The status a handler answered, what its invocation recorded and the answer's body.
async fn counted(work: impl Future<Output = Response<Body>>) -> (u16, Recorded, serde_json::Value) {
    let (response, recorded) = metrics::record(work).await;
    let (status, body) = parts(&response);
    (status, recorded, body)
}

/// The counts recorded, in the catalogue's order.
fn counts(recorded: &Recorded) -> Vec<(Metric, u64)> {
    Metric::ALL
        .into_iter()
        .filter_map(|metric| Some((metric, recorded.value(metric)? as u64)))
        .collect()
}
