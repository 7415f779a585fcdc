//! `lambda-bench BIN_DIR [COLD_RUNS] [WARM_INVOCATIONS] [ONLY]`: each function binary of BIN_DIR
//! (`list-packs`, `web3-link`) beside two floors (`hello`, and `hello-dynamodb`: hello plus one
//! raw DynamoDB exchange) and an experiment (`list-packs-raw`: list-packs' warm path on a
//! purpose-built DynamoDB client), run through the Lambda Runtime API
//! emulator of `testkit` against moto_server with the seed packs: cold init and cold first
//! response (medians), warm latency p50/p99, CPU per warm invocation, peak RSS, binary size, and
//! DynamoDB requests per invocation. Prints Markdown tables (the figures, the cold overhead, the
//! targets of issue 4 as ratios to the floors) and writes the figures as JSON to standard
//! error's last line.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use aws_sdk_dynamodb::types::{AttributeValue, ReturnConsumedCapacity};
use serde_json::{Value, json};
use shared::packs::seed::parse_seed;
use testkit::events::ApiEvent;
use testkit::fault_proxy::FaultProxy;
use testkit::http_stub::{HttpStub, Reply};
use testkit::moto::MotoServer;
use testkit::runtime_api::{Outcome, RuntimeApi};
use testkit::tokens::{AUDIENCE, ISSUER, jwks_json, token};

const TIMEOUT: Duration = Duration::from_secs(30);
const SEED: &[u8] = include_bytes!("../../../infra/seed/packs.json");

struct Function {
    name: &'static str,
    event: Value,
    env: Vec<(String, String)>,
}

#[derive(Default)]
struct Figures {
    cold_init_ms: f64,
    cold_first_response_ms: f64,
    warm_p50_ms: f64,
    warm_p99_ms: f64,
    cpu_per_invocation_us: f64,
    peak_rss_mb: f64,
    binary_mb: f64,
    dynamodb_requests_per_invocation: f64,
    /// Median over the cold starts of the time DynamoDB (moto) took within the first response.
    cold_dynamodb_ms: f64,
    /// Median time DynamoDB (moto) took per warm invocation.
    warm_dynamodb_p50_ms: f64,
    /// The body of a warm response.
    body: Value,
}

/// Milliseconds DynamoDB (moto) spent on the requests the proxy forwarded since `since`.
fn dynamodb_ms(proxy: &FaultProxy, since: usize) -> Vec<f64> {
    proxy.upstream_times()[since..]
        .iter()
        .map(|t| t.as_secs_f64() * 1e3)
        .collect()
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

/// CPU time of a process so far (user and system, all its live threads), in seconds, from the
/// scheduler's nanosecond counters (`/proc/PID/task/*/schedstat`): utime and stime in
/// `/proc/PID/stat` count 10 ms ticks, too coarse for a floor of a few tens of microseconds per
/// invocation.
fn cpu_seconds(pid: u32) -> f64 {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).expect("process tasks");
    let nanos: u64 = tasks
        .map(|task| {
            let path = task.expect("task entry").path().join("schedstat");
            let stat = std::fs::read_to_string(path).expect("task schedstat");
            stat.split_whitespace()
                .next()
                .and_then(|ns| ns.parse::<u64>().ok())
                .expect("time on CPU in schedstat")
        })
        .sum();
    nanos as f64 / 1e9
}

/// Peak resident set size (VmHWM), in MB.
fn peak_rss_mb(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("process status");
    let line = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .expect("VmHWM");
    line.split_whitespace()
        .nth(1)
        .unwrap()
        .parse::<f64>()
        .unwrap()
        / 1024.0
}

/// The body of a 200 response; any other outcome stops the benchmark.
fn assert_ok(outcome: Option<Outcome>, name: &str) -> Value {
    match outcome {
        Some(Outcome::Response(mut document)) if document["statusCode"] == 200 => {
            document["body"].take()
        }
        other => panic!("{name} did not answer 200: {other:?}"),
    }
}

async fn measure(
    binary: &Path,
    function: &Function,
    cold_runs: usize,
    warm: usize,
    proxy: &FaultProxy,
) -> Figures {
    let env: Vec<(&str, &str)> = function
        .env
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let binary = binary.to_str().unwrap();
    let (mut inits, mut firsts, mut cold_dynamodb) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..cold_runs {
        let runtime = RuntimeApi::start().await;
        let forwarded = proxy.upstream_times().len();
        let started = Instant::now();
        let mut child = runtime.spawn_quiet(binary, &env);
        let outcome = runtime.invoke(function.event.clone(), TIMEOUT).await;
        let first = started.elapsed();
        assert_ok(outcome, function.name);
        let init = runtime.first_poll().expect("polled") - started;
        inits.push(init.as_secs_f64() * 1e3);
        firsts.push(first.as_secs_f64() * 1e3);
        cold_dynamodb.push(dynamodb_ms(proxy, forwarded).iter().fold(0.0, |a, b| a + b));
        child.kill().await.unwrap();
    }

    let runtime = RuntimeApi::start().await;
    let mut child = runtime.spawn_quiet(binary, &env);
    let pid = child.id().unwrap();
    let mut body = Value::Null;
    for _ in 0..20 {
        body = assert_ok(
            runtime.invoke(function.event.clone(), TIMEOUT).await,
            function.name,
        );
    }
    let (cpu_before, requests_before) = (cpu_seconds(pid), proxy.requests());
    let forwarded = proxy.upstream_times().len();
    let mut latencies = Vec::with_capacity(warm);
    for _ in 0..warm {
        let started = Instant::now();
        let outcome = runtime.invoke(function.event.clone(), TIMEOUT).await;
        latencies.push(started.elapsed().as_secs_f64() * 1e3);
        assert_ok(outcome, function.name);
    }
    let cpu = cpu_seconds(pid) - cpu_before;
    let requests = proxy.requests() - requests_before;
    let mut warm_dynamodb = dynamodb_ms(proxy, forwarded);
    latencies.sort_by(f64::total_cmp);
    let figures = Figures {
        cold_init_ms: median(&mut inits),
        cold_first_response_ms: median(&mut firsts),
        warm_p50_ms: percentile(&latencies, 0.5),
        warm_p99_ms: percentile(&latencies, 0.99),
        cpu_per_invocation_us: cpu / warm as f64 * 1e6,
        peak_rss_mb: peak_rss_mb(pid),
        binary_mb: std::fs::metadata(binary).unwrap().len() as f64 / 1e6,
        dynamodb_requests_per_invocation: requests as f64 / warm as f64,
        cold_dynamodb_ms: median(&mut cold_dynamodb),
        warm_dynamodb_p50_ms: if warm_dynamodb.is_empty() {
            0.0
        } else {
            median(&mut warm_dynamodb)
        },
        body,
    };
    child.kill().await.unwrap();
    figures
}

/// The figures of the binary called `name`, if it ran.
fn figures<'a>(measured: &'a [(&str, Figures)], name: &str) -> Option<&'a Figures> {
    measured.iter().find(|(n, _)| *n == name).map(|(_, f)| f)
}

/// The targets of issue 4, each as measured, its limit and whether it holds in this run; CPU
/// also as a ratio to the second floor (hello plus one raw DynamoDB exchange).
fn print_targets(measured: &[(&str, Figures)]) {
    let find = |name: &str| figures(measured, name);
    let (Some(hello), Some(hello_dynamodb)) = (find("hello"), find("hello-dynamodb")) else {
        return;
    };
    let verdict = |holds: bool| if holds { "holds" } else { "fails" };
    println!(
        "\n| function | cold overhead (ms) / 1.5x floor's first response | CPU / floor's (target) | CPU / hello-dynamodb's | peak RSS (MB) / 20 | binary (MB) / 8 |"
    );
    println!("|---|---|---|---|---|---|");
    for (name, cpu_target) in [
        ("list-packs", 3.0),
        ("list-packs-raw", 3.0),
        ("web3-link", 6.0),
    ] {
        let Some(f) = find(name) else { continue };
        let overhead = f.cold_first_response_ms - f.warm_p50_ms;
        let allowance = 1.5 * hello.cold_first_response_ms;
        let cpu_ratio = f.cpu_per_invocation_us / hello.cpu_per_invocation_us;
        println!(
            "| {name} | {overhead:.2} / {allowance:.2}: {} | {cpu_ratio:.1}x ({cpu_target}x): {} | {:.1}x | {:.1}: {} | {:.2}: {} |",
            verdict(overhead <= allowance),
            verdict(cpu_ratio <= cpu_target),
            f.cpu_per_invocation_us / hello_dynamodb.cpu_per_invocation_us,
            f.peak_rss_mb,
            verdict(f.peak_rss_mb <= 20.0),
            f.binary_mb,
            verdict(f.binary_mb <= 8.0),
        );
    }
}

/// The experiment is only a fair comparison if it does the same work: list-packs-raw must
/// answer the very page list-packs answers.
fn check_same_page(measured: &[(&str, Figures)]) {
    let page = |name: &str| {
        figures(measured, name)
            .map(|f| serde_json::from_str::<Value>(f.body.as_str().expect("a text body")))
    };
    if let (Some(sdk), Some(raw)) = (page("list-packs"), page("list-packs-raw")) {
        let (sdk, raw) = (
            sdk.expect("list-packs' page"),
            raw.expect("list-packs-raw's page"),
        );
        assert_eq!(
            sdk, raw,
            "list-packs-raw answered another page than list-packs"
        );
        let packs = sdk["packs"].as_array().map_or(0, Vec::len);
        println!("\nlist-packs-raw answered the same page as list-packs ({packs} packs).");
    }
}

/// Read capacity of one list request for 50 packs, as DynamoDB reports it for the same Query.
async fn read_capacity_for_50_packs(moto: &MotoServer) -> Value {
    let store = moto.new_table().await;
    let template = parse_seed(SEED).unwrap().remove(0);
    for i in 0..50 {
        let mut pack = template.clone();
        pack.id = format!("pack-{i:02}");
        testkit::packs::save(&store, &pack).await;
    }
    let output = store
        .client()
        .query()
        .table_name(store.table())
        .index_name(shared::store::schema::GSI1)
        .key_condition_expression("GSI1PK = :listed")
        .expression_attribute_values(
            ":listed",
            AttributeValue::S(shared::store::schema::LISTED_PACKS.into()),
        )
        .limit(51)
        .return_consumed_capacity(ReturnConsumedCapacity::Total)
        .send()
        .await
        .unwrap();
    let items = output.items();
    // DynamoDB item size: attribute names plus values (strings in UTF-8, numbers about 1 byte
    // per 2 digits); the JSON text of an item bounds it from above.
    let bytes: usize = items
        .iter()
        .map(|item| {
            item.iter()
                .map(|(k, v)| k.len() + format!("{v:?}").len())
                .sum::<usize>()
        })
        .sum();
    json!({
        "items": items.len(),
        "approx_bytes": bytes,
        "rcu_eventually_consistent_from_size": (bytes as f64 / 4096.0).ceil() * 0.5,
        "rcu_reported_by_moto": output.consumed_capacity().and_then(|c| c.capacity_units()),
    })
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let bin_dir = PathBuf::from(args.get(1).map_or("target/release", String::as_str));
    let cold_runs: usize = args.get(2).map_or(21, |a| a.parse().unwrap());
    let warm: usize = args.get(3).map_or(3000, |a| a.parse().unwrap());
    // A comma-separated list of binaries to run (all by default), e.g. to profile one.
    let only: Option<Vec<String>> = args
        .get(4)
        .map(|a| a.split(',').map(str::to_owned).collect());

    let moto = MotoServer::start().await;
    let store = moto.new_table().await;
    for pack in parse_seed(SEED).unwrap() {
        testkit::packs::save(&store, &pack).await;
    }
    let proxy = FaultProxy::start(&moto.endpoint).await;
    let idp = HttpStub::start(Reply::Json(jwks_json())).await;
    let base_env = |extra: &[(&str, &str)]| -> Vec<(String, String)> {
        [
            ("TABLE_NAME", store.table()),
            ("AWS_ENDPOINT_URL_DYNAMODB", &proxy.endpoint()),
            ("RUST_LOG", "info"),
        ]
        .iter()
        .chain(extra)
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
    };
    let jwks_url = idp.url("/.well-known/jwks.json");
    let user_token = token("bench-user", Some("bench@example.com"));
    let functions = [
        Function { name: "hello", event: ApiEvent::get("/").to_json(), env: vec![] },
        Function {
            name: "hello-dynamodb",
            event: ApiEvent::get("/").to_json(),
            env: base_env(&[]),
        },
        Function {
            name: "list-packs",
            event: ApiEvent::get("/api/packs").to_json(),
            env: base_env(&[("CURSOR_SECRET", testkit::CURSOR_SECRET)]),
        },
        Function {
            name: "list-packs-raw",
            event: ApiEvent::get("/api/packs").to_json(),
            env: base_env(&[]),
        },
        Function {
            name: "web3-link",
            event: ApiEvent::post("/api/web3-link")
                .bearer(&user_token)
                .json(r#"{"payload":{"address":"0x52908400098527886E0F7030069857D2E4169EE7","chainId":1}}"#)
                .to_json(),
            env: base_env(&[("AUTH_ISSUER", ISSUER), ("AUTH_AUDIENCE", AUDIENCE), ("AUTH_JWKS_URL", &jwks_url)]),
        },
    ];

    println!(
        "| binary | cold init (ms) | cold first response (ms) | warm p50 (ms) | warm p99 (ms) | CPU / warm invocation (µs) | peak RSS (MB) | stripped binary (MB) | DynamoDB requests / invocation |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    let mut all = serde_json::Map::new();
    let mut overheads = Vec::new();
    let mut measured = Vec::new();
    for function in functions.iter().filter(|f| {
        only.as_ref()
            .is_none_or(|only| only.iter().any(|o| o == f.name))
    }) {
        let f = measure(
            &bin_dir.join(function.name),
            function,
            cold_runs,
            warm,
            &proxy,
        )
        .await;
        println!(
            "| {} | {:.2} | {:.2} | {:.3} | {:.3} | {:.0} | {:.1} | {:.2} | {:.2} |",
            function.name,
            f.cold_init_ms,
            f.cold_first_response_ms,
            f.warm_p50_ms,
            f.warm_p99_ms,
            f.cpu_per_invocation_us,
            f.peak_rss_mb,
            f.binary_mb,
            f.dynamodb_requests_per_invocation
        );
        overheads.push(format!(
            "| {} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} |",
            function.name,
            f.cold_first_response_ms - f.warm_p50_ms,
            f.cold_first_response_ms - f.cold_init_ms - f.warm_p50_ms,
            f.cold_dynamodb_ms,
            f.warm_dynamodb_p50_ms,
            f.cold_first_response_ms
                - f.warm_p50_ms
                - (f.cold_dynamodb_ms - f.warm_dynamodb_p50_ms),
        ));
        all.insert(
            function.name.into(),
            json!({
                "cold_dynamodb_ms": f.cold_dynamodb_ms, "warm_dynamodb_p50_ms": f.warm_dynamodb_p50_ms,
                "cold_init_ms": f.cold_init_ms, "cold_first_response_ms": f.cold_first_response_ms,
                "warm_p50_ms": f.warm_p50_ms, "warm_p99_ms": f.warm_p99_ms,
                "cpu_per_invocation_us": f.cpu_per_invocation_us, "peak_rss_mb": f.peak_rss_mb,
                "binary_mb": f.binary_mb, "dynamodb_requests_per_invocation": f.dynamodb_requests_per_invocation,
            }),
        );
        measured.push((function.name, f));
    }
    println!(
        "\n| binary | cold overhead: first response - warm p50 (ms) | first invocation's extra over warm p50 (ms) | DynamoDB time in the first response, median (ms) | DynamoDB time warm p50 (ms) | cold overhead without DynamoDB's difference (ms) |"
    );
    println!("|---|---|---|---|---|---|");
    for line in &overheads {
        println!("{line}");
    }
    print_targets(&measured);
    check_same_page(&measured);
    println!(
        "\nJWKS fetches by web3-link over {cold_runs} cold starts and one warm run: {}",
        idp.hits()
    );
    let rcu = read_capacity_for_50_packs(&moto).await;
    println!("Read capacity of one list request for 50 packs: {rcu}");
    all.insert("read_capacity_50_packs".into(), rcu);
    all.insert("runs".into(), json!({ "cold": cold_runs, "warm": warm }));
    eprintln!("{}", Value::Object(all));
}
