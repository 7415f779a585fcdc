//! Cold and warm runs of each binary through the Lambda Runtime API emulator of `testkit`, and
//! cold starts with connection set-up delays (`cold`).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use testkit::fault_proxy::FaultProxy;
use testkit::runtime_api::RuntimeApi;

use crate::compare::Baseline;
use crate::functions::{ALL, Bench, Kind, TIMEOUT};
use crate::stats::{cpu_seconds, file_mb, median, ms, peak_rss_mb, percentile};

/// Warm invocations before the measured ones (first use of every code path, JIT-free as it is).
/// `bench/profile/instructions.sh` subtracts them (its `+ 19`): change both together.
const WARM_UP: usize = 20;

#[derive(Default)]
pub struct Figures {
    pub cold_init_ms: f64,
    pub cold_first_response_ms: f64,
    /// Median of the first invocation alone: event handed over (the first `invocation/next`) to
    /// response.
    pub first_invocation_ms: f64,
    pub warm_p50_ms: f64,
    pub warm_p99_ms: f64,
    pub cpu_per_invocation_us: f64,
    pub peak_rss_mb: f64,
    pub binary_mb: f64,
    /// DynamoDB requests per warm invocation, by operation.
    pub calls: BTreeMap<String, f64>,
    /// Median over the cold starts of the time moto took within the first response.
    pub cold_dynamodb_ms: f64,
    /// Median time moto took per warm invocation.
    pub warm_dynamodb_p50_ms: f64,
    /// Median over the cold starts of the time moto took to answer the first request of the
    /// process, when that is init's unsigned `GET /` (a function that opens its DynamoDB
    /// connection at init); 0 for the floors.
    pub cold_prefetch_ms: f64,
    pub invocations: usize,
    /// Invocations that failed (moto stalling past the function's timeouts).
    pub failures: Vec<String>,
}

impl Figures {
    pub fn calls_text(&self) -> String {
        if self.calls.is_empty() {
            return "0".into();
        }
        self.calls
            .iter()
            .map(|(op, n)| format!("{op} {n:.2}"))
            .collect::<Vec<_>>()
            .join(" + ")
    }

    pub fn json(&self) -> Value {
        json!({
            "cold_init_ms": self.cold_init_ms,
            "cold_first_response_ms": self.cold_first_response_ms,
            "first_invocation_ms": self.first_invocation_ms,
            "warm_p50_ms": self.warm_p50_ms,
            "warm_p99_ms": self.warm_p99_ms,
            "cpu_per_invocation_us": self.cpu_per_invocation_us,
            "peak_rss_mb": self.peak_rss_mb,
            "binary_mb": self.binary_mb,
            "dynamodb_calls_per_invocation": self.calls,
            "cold_dynamodb_ms": self.cold_dynamodb_ms,
            "warm_dynamodb_p50_ms": self.warm_dynamodb_p50_ms,
            "cold_prefetch_ms": self.cold_prefetch_ms,
            "invocations": self.invocations,
            "failed_invocations": self.failures.len(),
        })
    }
}

/// Milliseconds moto spent on the requests the proxy forwarded since `since`.
fn dynamodb_ms(proxy: &FaultProxy, since: usize) -> Vec<f64> {
    proxy.upstream_times()[since..]
        .iter()
        .map(|t| ms(*t))
        .collect()
}

/// Requests per operation the proxy saw between two counts, per invocation (the function's
/// unsigned `GET /` that opens its connection at init is not an operation and not counted).
fn calls_per_invocation(
    before: &BTreeMap<String, usize>,
    after: &BTreeMap<String, usize>,
    invocations: usize,
) -> BTreeMap<String, f64> {
    after
        .iter()
        .filter(|(op, _)| !op.contains(' '))
        .filter_map(|(op, n)| {
            let n = n - before.get(op).copied().unwrap_or(0);
            (n > 0).then(|| (op.clone(), n as f64 / invocations as f64))
        })
        .collect()
}

/// One cold start: the process started, its first request answered. The times from exec to the
/// first `invocation/next` (init), from then to the response (the first invocation), the whole,
/// moto's share of it, and moto's time for the first request (init's `GET /` when the function
/// opens its connection at init).
async fn cold_start(
    bench: &mut Bench,
    binary: &str,
    kind: Kind,
    env: &[(&str, &str)],
) -> (f64, f64, f64, f64, f64) {
    let event = bench.event(kind).await;
    let runtime = RuntimeApi::start().await;
    let forwarded = bench.proxy.upstream_times().len();
    let started = Instant::now();
    // The event is queued before the process starts: it is handed over at the first poll.
    let outcome = {
        let mut child = runtime.spawn_quiet(binary, env);
        let outcome = runtime.invoke(event, TIMEOUT).await;
        let answered = Instant::now();
        let polled = runtime.first_poll().expect("the function polled");
        child.kill().await.expect("kill the function");
        (outcome, polled, answered)
    };
    let (outcome, polled, answered) = outcome;
    bench.record(kind, outcome);
    bench.clean().await;
    let times = dynamodb_ms(&bench.proxy, forwarded);
    let prefetch = if kind.is_floor() {
        0.0
    } else {
        times.first().copied().unwrap_or(0.0)
    };
    (
        ms(polled - started),
        ms(answered - polled),
        ms(answered - started),
        times.iter().sum(),
        prefetch,
    )
}

/// Warm invocations of one process: latencies (ms, sorted), CPU per invocation (µs), peak RSS,
/// calls per invocation, moto's time per invocation (ms).
async fn warm_run(
    bench: &mut Bench,
    binary: &str,
    kind: Kind,
    env: &[(&str, &str)],
    invocations: usize,
) -> (Vec<f64>, f64, f64, BTreeMap<String, f64>, Vec<f64>) {
    let runtime = RuntimeApi::start().await;
    let mut child = runtime.spawn_quiet(binary, env);
    let pid = child.id().expect("a running function");
    for _ in 0..WARM_UP {
        let event = bench.event(kind).await;
        let outcome = runtime.invoke(event, TIMEOUT).await;
        bench.record(kind, outcome);
        bench.clean().await;
    }
    let mut latencies = Vec::with_capacity(invocations);
    let calls_before = bench.proxy.operation_counts();
    let forwarded = bench.proxy.upstream_times().len();
    // The function's CPU over the whole loop, so that what it does after answering (the next
    // `invocation/next`) counts too. Making a request's state beforehand and deleting what it
    // wrote after (through the store) costs the function nothing: it waits for its next event.
    let cpu_before = cpu_seconds(pid);
    for _ in 0..invocations {
        let event = bench.event(kind).await;
        let started = Instant::now();
        let outcome = runtime.invoke(event, TIMEOUT).await;
        latencies.push(ms(started.elapsed()));
        bench.record(kind, outcome);
        bench.clean().await;
    }
    let cpu = cpu_seconds(pid) - cpu_before;
    let calls = calls_per_invocation(&calls_before, &bench.proxy.operation_counts(), invocations);
    let moto = dynamodb_ms(&bench.proxy, forwarded);
    let rss = peak_rss_mb(pid);
    child.kill().await.expect("kill the function");
    latencies.sort_by(f64::total_cmp);
    (latencies, cpu / invocations as f64 * 1e6, rss, calls, moto)
}

/// The figures of `kind`'s binary in `bin_dir`, its failures checked ([`check_failures`]).
async fn measure(
    bench: &mut Bench,
    bin_dir: &Path,
    kind: Kind,
    cold_runs: usize,
    warm: usize,
) -> Figures {
    let binary = &bin_dir.join(kind.name());
    let env = bench.env(kind);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let path = binary.to_str().expect("a UTF-8 path");
    bench.plan(cold_runs + WARM_UP + warm);
    let (mut inits, mut firsts, mut responses, mut motos, mut prefetches) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..cold_runs {
        let (init, first, response, moto, prefetch) = cold_start(bench, path, kind, &env).await;
        inits.push(init);
        firsts.push(first);
        responses.push(response);
        motos.push(moto);
        prefetches.push(prefetch);
    }
    let (latencies, cpu, rss, calls, mut moto) = warm_run(bench, path, kind, &env, warm).await;
    let figures = Figures {
        cold_init_ms: median(&mut inits),
        cold_first_response_ms: median(&mut responses),
        first_invocation_ms: median(&mut firsts),
        warm_p50_ms: percentile(&latencies, 0.5),
        warm_p99_ms: percentile(&latencies, 0.99),
        cpu_per_invocation_us: cpu,
        peak_rss_mb: rss,
        binary_mb: file_mb(binary),
        calls,
        cold_dynamodb_ms: median(&mut motos),
        warm_dynamodb_p50_ms: median(&mut moto),
        cold_prefetch_ms: median(&mut prefetches),
        invocations: warm,
        failures: bench.take_failures(),
    };
    check_failures(kind, &figures, cold_runs + WARM_UP + warm);
    figures
}

/// Reports the invocations of `kind` that failed (at most 1% of `invocations`: past that,
/// [`Bench::record`] stops the run as it happens; a function that fails is not measured).
fn check_failures(kind: Kind, figures: &Figures, invocations: usize) {
    if figures.failures.is_empty() {
        return;
    }
    eprintln!(
        "{}: {} of {invocations} invocations failed; the first: {}",
        kind.name(),
        figures.failures.len(),
        figures.failures[0]
    );
    println!(
        "({}: {} of {invocations} invocations did not succeed, each after moto stalled past the function's DynamoDB timeouts; counted in the figures.)\n",
        kind.name(),
        figures.failures.len()
    );
}

impl Plan<'_> {
    /// The binaries to run: all of [`ALL`] (or those of `only`) that are in `bin_dir`.
    fn kinds(&self) -> Vec<Kind> {
        let (bin_dir, only) = (self.bin_dir, self.only);
        ALL.into_iter()
            .filter(|kind| only.is_none_or(|only| only.iter().any(|o| o == kind.name())))
            .filter(|kind| {
                let present = bin_dir.join(kind.name()).exists();
                if !present {
                    println!(
                        "{} is not in {} (not built): skipped.\n",
                        kind.name(),
                        bin_dir.display()
                    );
                }
                present
            })
            .collect()
    }
}

/// What a `lambda` or `cold` run measures: the binaries of `bin_dir` (those named in `only`, if
/// given) beside `baseline`'s, each with `cold_runs` cold starts and `warm` warm invocations.
#[derive(Clone, Copy)]
pub struct Plan<'a> {
    pub bin_dir: &'a Path,
    pub baseline: Option<&'a Baseline>,
    pub cold_runs: usize,
    pub warm: usize,
    pub only: Option<&'a [String]>,
}

/// A row of the `lambda` part's first table.
fn lambda_row(name: &str, kind: Kind, figures: &Figures) {
    println!(
        "| {name} | {:.2} | {:.2} | {:.3} | {:.3} | {:.0} | {:.1} | {:.2} | {} | {} |",
        figures.cold_init_ms,
        figures.cold_first_response_ms,
        figures.warm_p50_ms,
        figures.warm_p99_ms,
        figures.cpu_per_invocation_us,
        figures.peak_rss_mb,
        figures.binary_mb,
        figures.calls_text(),
        kind.allowed_calls(),
    );
}

/// The figures of `kind` in `baseline`'s build, when it has the binary, its row printed by
/// `row`; measured just before today's, on the same bench, and kept in `before`.
async fn measure_before(
    bench: &mut Bench,
    baseline: Option<&Baseline>,
    kind: Kind,
    (cold_runs, warm): (usize, usize),
    before: &mut Vec<(Kind, Figures)>,
    row: impl FnOnce(&Bench, &str, &Figures),
) {
    let Some(baseline) = baseline.filter(|b| b.has(kind)) else {
        return;
    };
    let figures = measure(bench, &baseline.dir, kind, cold_runs, warm).await;
    row(bench, &baseline.row_name(kind), &figures);
    before.push((kind, figures));
}

/// The side-by-side table of `before` and today's figures (`measured`), when there is a
/// baseline; its figures go under `before` in `all`.
fn compare(
    baseline: Option<&Baseline>,
    before: Vec<(Kind, Figures)>,
    measured: &[(Kind, Figures)],
    all: &mut serde_json::Map<String, Value>,
) {
    let Some(baseline) = baseline else {
        return;
    };
    let after = |kind: Kind| measured.iter().find(|(k, _)| *k == kind).map(|(_, f)| f);
    let pairs: Vec<_> = before
        .into_iter()
        .filter_map(|(kind, figures)| Some((kind, figures, after(kind)?)))
        .collect();
    let figures = crate::compare::report(baseline, &pairs);
    all.insert(
        "before".into(),
        json!({ "label": baseline.label, "figures": figures }),
    );
}

/// `lambda-bench lambda`: every binary cold and warm, the cold overhead, the targets; beside
/// `baseline`'s binaries when given.
pub async fn run(plan: &Plan<'_>) -> Value {
    let kinds = plan.kinds();
    let (bin_dir, baseline) = (plan.bin_dir, plan.baseline);
    let (cold_runs, warm) = (plan.cold_runs, plan.warm);
    let mut bench = Bench::start().await;
    let mut measured: Vec<(Kind, Figures)> = Vec::new();
    let mut before: Vec<(Kind, Figures)> = Vec::new();
    println!(
        "| binary | cold init (ms) | cold first response (ms) | warm p50 (ms) | warm p99 (ms) | CPU / warm invocation (µs) | peak RSS (MB) | stripped binary (MB) | DynamoDB requests / invocation | allowed |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for kind in kinds {
        let row = |_: &Bench, name: &str, figures: &Figures| lambda_row(name, kind, figures);
        let runs = (cold_runs, warm);
        measure_before(&mut bench, baseline, kind, runs, &mut before, row).await;
        let figures = measure(&mut bench, bin_dir, kind, cold_runs, warm).await;
        lambda_row(kind.name(), kind, &figures);
        measured.push((kind, figures));
    }

    println!(
        "\n| binary | cold overhead: first response - warm p50 (ms) | of which init (ms) | of which the first invocation's extra over warm p50 (ms) | moto's answer to init's `GET /`, median (ms) | cold overhead less that answer (ms) | moto's time in the first response, median (ms) | moto's time per warm invocation, p50 (ms) |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for (kind, f) in &measured {
        let overhead = f.cold_first_response_ms - f.warm_p50_ms;
        println!(
            "| {} | {overhead:.2} | {:.2} | {:.2} | {} | {:.2} | {:.2} | {:.2} |",
            kind.name(),
            f.cold_init_ms,
            f.first_invocation_ms - f.warm_p50_ms,
            if kind.is_floor() {
                "-".to_owned()
            } else {
                format!("{:.2}", f.cold_prefetch_ms)
            },
            overhead - f.cold_prefetch_ms,
            f.cold_dynamodb_ms,
            f.warm_dynamodb_p50_ms,
        );
    }
    print_targets(&measured);
    println!(
        "\nJWKS fetches over the run: {} (each process fetches once, at init).",
        bench.idp.hits()
    );

    let mut all = serde_json::Map::new();
    for (kind, f) in &measured {
        all.insert(kind.name().into(), f.json());
    }
    compare(baseline, before, &measured, &mut all);
    all.insert("runs".into(), json!({ "cold": cold_runs, "warm": warm }));
    Value::Object(all)
}

/// The targets of issue 13, as ratios to the floors of this run.
fn print_targets(measured: &[(Kind, Figures)]) {
    let find = |kind: Kind| measured.iter().find(|(k, _)| *k == kind).map(|(_, f)| f);
    let (Some(hello), Some(floor)) = (find(Kind::Hello), find(Kind::HelloDynamodb)) else {
        return;
    };
    let verdict = |holds: bool| if holds { "holds" } else { "**misses**" };
    println!(
        "\n| function | CPU / hello-dynamodb's (target) | cold overhead (ms) / 1.5x hello's cold first response | the same less moto's answer to init's `GET /` | peak RSS (MB) / 20 | binary (MB) / 8 |"
    );
    println!("|---|---|---|---|---|---|");
    for (kind, f) in measured {
        let Some(target) = kind.cpu_target() else {
            continue;
        };
        let ratio = f.cpu_per_invocation_us / floor.cpu_per_invocation_us;
        let overhead = f.cold_first_response_ms - f.warm_p50_ms;
        let allowance = 1.5 * hello.cold_first_response_ms;
        let less = overhead - f.cold_prefetch_ms;
        println!(
            "| {} | {ratio:.2}x ({target}x): {} | {overhead:.2} / {allowance:.2}: {} | {less:.2}: {} | {:.1}: {} | {:.2}: {} |",
            kind.name(),
            verdict(ratio <= target),
            verdict(overhead <= allowance),
            verdict(less <= allowance),
            f.peak_rss_mb,
            verdict(f.peak_rss_mb <= 20.0),
            f.binary_mb,
            verdict(f.binary_mb <= 8.0),
        );
    }
}

/// Connection set-up delays of the `cold` run, from `BENCH_DYNAMODB_SETUP_MS` (default 20) and
/// `BENCH_IDP_SETUP_MS` (default 60).
pub fn setup_delays() -> (Duration, Duration) {
    let read = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
            .map_or(Duration::from_millis(default), Duration::from_millis)
    };
    (
        read("BENCH_DYNAMODB_SETUP_MS", 20),
        read("BENCH_IDP_SETUP_MS", 60),
    )
}

/// The connection set-ups of the `cold` run and hello-dynamodb's cold first response under
/// them (once measured): what each function's cold start is held against.
struct ColdReference {
    dynamodb_setup: Duration,
    idp_setup: Duration,
    floor: Option<f64>,
}

impl ColdReference {
    /// Prints the row of `f` (`kind`'s figures, `fetches` JWKS fetches) as `name`; its figures.
    fn row(&self, name: &str, kind: Kind, f: &Figures, fetches: usize) -> Value {
        let extra = f.first_invocation_ms - f.warm_p50_ms;
        let half_dynamodb = ms(self.dynamodb_setup) / 2.0;
        let (reference, difference, setups) = match self.floor {
            Some(floor) if !kind.is_floor() => {
                let reference = floor
                    + if kind.checks_tokens() {
                        ms(self.idp_setup)
                    } else {
                        0.0
                    };
                let difference = f.cold_first_response_ms - reference;
                // Overlapping set-ups save about the DynamoDB set-up against doing them one
                // after the other; a function without tokens has one set-up, paid once (in init
                // instead of the first request) when it is within half of it of the floor.
                let verdict = if kind.checks_tokens() {
                    if difference <= -half_dynamodb {
                        "overlap: holds"
                    } else {
                        "overlap: **misses**"
                    }
                } else if difference <= half_dynamodb {
                    "paid once: holds"
                } else {
                    "paid once: **misses**"
                };
                (
                    format!("{reference:.2}"),
                    format!("{difference:+.2}"),
                    verdict,
                )
            }
            _ => ("-".into(), "-".into(), "-"),
        };
        println!(
            "| {name} | {:.2} | {:.2} | {:.2} | {:.3} | {extra:.2}: {} | {reference} | {difference} | {setups} | {fetches} |",
            f.cold_init_ms,
            f.first_invocation_ms,
            f.cold_first_response_ms,
            f.warm_p50_ms,
            if kind.is_floor() {
                "-"
            } else if extra <= 10.0 {
                "holds"
            } else {
                "**misses**"
            },
        );
        let mut figures = f.json();
        figures["jwks_fetches"] = json!(fetches);
        figures
    }
}

/// `lambda-bench cold`: cold starts as users meet them. The DynamoDB proxy and the JWKS stub
/// delay the first answer on each new connection by a connection set-up time; each binary's
/// cold starts are measured beside a short warm run of its own under the same set-up. Each row
/// is printed as soon as it is measured; beside `baseline`'s binaries when given.
pub async fn run_cold(plan: &Plan<'_>) -> Value {
    let kinds = plan.kinds();
    let (bin_dir, baseline) = (plan.bin_dir, plan.baseline);
    let (cold_runs, warm) = (plan.cold_runs, plan.warm);
    let (dynamodb_setup, idp_setup) = setup_delays();
    let mut bench = Bench::start().await;
    bench.proxy.delay_new_connections(dynamodb_setup);
    bench.idp.delay_new_connections(idp_setup);
    println!(
        "Each new connection's first answer delayed: DynamoDB {} ms, identity provider {} ms.\n",
        dynamodb_setup.as_millis(),
        idp_setup.as_millis()
    );
    println!(
        "| binary | cold init (ms) | first invocation (ms) | init + first invocation (ms) | warm p50 (ms) | first invocation - warm p50 (ms), goal <= 10 | hello-dynamodb's init + first invocation, plus the identity provider's delay for a function that checks tokens (ms) | difference (ms) | the set-ups | JWKS fetches |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let mut reference = ColdReference {
        dynamodb_setup,
        idp_setup,
        floor: None,
    };
    let mut all = serde_json::Map::new();
    let (mut measured, mut before) = (Vec::new(), Vec::new());
    for kind in kinds {
        let hits = bench.idp.hits();
        let row = |bench: &Bench, name: &str, figures: &Figures| {
            reference.row(name, kind, figures, bench.idp.hits() - hits);
        };
        let runs = (cold_runs, warm);
        measure_before(&mut bench, baseline, kind, runs, &mut before, row).await;
        let hits = bench.idp.hits();
        let figures = measure(&mut bench, bin_dir, kind, cold_runs, warm).await;
        if kind == Kind::HelloDynamodb {
            reference.floor = Some(figures.cold_first_response_ms);
        }
        let json = reference.row(kind.name(), kind, &figures, bench.idp.hits() - hits);
        all.insert(kind.name().into(), json);
        measured.push((kind, figures));
    }
    compare(baseline, before, &measured, &mut all);
    all.insert(
        "setup_ms".into(),
        json!({ "dynamodb": ms(dynamodb_setup), "idp": ms(idp_setup) }),
    );
    all.insert("runs".into(), json!({ "cold": cold_runs, "warm": warm }));
    Value::Object(all)
}
