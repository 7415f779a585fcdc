//! The recorded capacity run: a drop through the real binaries on moto (behind the
//! one-request-at-a-time proxy, which records every exchange), over several packs: every unit
//! started for, then as many presses after the sell-out. Each design's binaries (a directory with
//! `start-purchase` and `seed-packs`) seed their own table from the same seed file and take the
//! same drop; [`units`](crate::units) bills what they sent per partition key, and the ceilings
//! follow from the busiest key.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use api::handlers::get_pack::KEEP_PACKS_FOR;
use serde_json::{Value, json};
use store::schema::{DRAW_SK, SUPPLY_SK};
use testkit::events::ApiEvent;
use testkit::fault_proxy::FaultProxy;
use testkit::http_stub::{HttpStub, Reply};
use testkit::moto::{MotoServer, Rollback};
use testkit::purchases::{Function, start_event};
use testkit::tokens::{AUDIENCE, ISSUER, TestKey, jwks_json};

mod phase;

use crate::stats::day_token;
use crate::units::Ledger;
use phase::Phase;

/// Per-key limits of DynamoDB: write and read units per second on one partition key.
const KEY_WCU: f64 = 1000.0;
const KEY_RCU: f64 = 3000.0;
/// The issue's rates: one pack's drop, and many drops at once.
const ONE_PACK_RATE: f64 = 5000.0;
const PLATFORM_RATE: f64 = 20000.0;
const PLATFORM_PACKS: f64 = 50.0;
/// On-demand prices in us-east-1, dollars per million request units.
const WRITE_PRICE: f64 = 0.625;
const READ_PRICE: f64 = 0.125;

const INSTANCES: usize = 8;
/// The most get-pack instances that can read one pack at once: AWS Lambda's default quota of
/// concurrent executions per account and Region. An instance reads a pack at most once per
/// `KEEP_PACKS_FOR`, so these bound get-pack's reads a second whatever the request rate
/// (BENCHMARKS.md, "Drops at scale").
const LAMBDA_CONCURRENCY: f64 = 1000.0;

/// get-pack requests per start: a crowd refreshing a pack's page reads more than it buys.
const GETS_PER_START: usize = 10;
/// The functions' hold, the longest they take (`PURCHASE_HOLD_SECONDS`).
const HOLD_SECONDS: u64 = 3600;

fn pack_id(n: usize) -> String {
    format!("cap-{n}")
}

/// The address of the `n`th fan (198.18.0.0/15, the benchmarking range): a crowd presses from
/// as many addresses, so no address's rate limit binds.
fn address(n: usize) -> String {
    format!("198.{}.{}.{}", 18 + (n >> 16) % 2, (n >> 8) % 256, n % 256)
}

/// The seed file both designs read: `packs` copies of the shipped seed's first pack, on sale since
/// an hour, `units` each, no per-fan limit (each fan presses once), no league.
fn seed_file(packs: usize, units: u64) -> String {
    let shipped: Vec<Value> = serde_json::from_slice(crate::functions::SEED).expect("the seed");
    let started = domain::timestamp::Timestamp::now()
        .plus_seconds(-3600)
        .expect("in range")
        .to_string();
    let packs: Vec<Value> = (0..packs)
        .map(|n| {
            let mut pack = shipped[0].clone();
            pack["id"] = json!(pack_id(n));
            pack["totalSupply"] = json!(units);
            pack["remaining"] = json!(units);
            pack["maxPerUser"] = Value::Null;
            // No league: seed-packs now requires a league of its catalogue, which the design
            // before issue 17 cannot seed; a start never reads it.
            pack["leagueId"] = Value::Null;
            pack["saleStartsAt"] = json!(started);
            pack["saleEndsAt"] = Value::Null;
            pack
        })
        .collect();
    Value::Array(packs).to_string()
}

/// Every event through the instances, each instance one invocation at a time; the answers
/// tallied by status and code.
async fn press(functions: &[Arc<Function>], events: Vec<Value>) -> BTreeMap<String, usize> {
    let events = Arc::new(std::sync::Mutex::new(events));
    let mut tasks = tokio::task::JoinSet::new();
    for function in functions {
        let (function, events) = (function.clone(), events.clone());
        tasks.spawn(async move {
            let mut tally: BTreeMap<String, usize> = BTreeMap::new();
            loop {
                let Some(event) = events.lock().unwrap().pop() else {
                    return tally;
                };
                let (status, body) =
                    testkit::runtime_api::http_parts(&function.invoke(event).await);
                let code = body["error"]["code"].as_str().unwrap_or("ok");
                *tally.entry(format!("{status} {code}")).or_default() += 1;
            }
        });
    }
    let mut tally = BTreeMap::new();
    for part in tasks.join_all().await {
        for (answer, n) in part {
            *tally.entry(answer).or_default() += n;
        }
    }
    tally
}

/// Runs seed-packs of `bin_dir` over the seed file.
fn seed(bin_dir: &Path, file: &Path, table: &str, endpoint: &str) {
    let status = std::process::Command::new(bin_dir.join("seed-packs"))
        .args(["--file", file.to_str().expect("UTF-8"), "--create-table"])
        .env("TABLE_NAME", table)
        .env("AWS_ENDPOINT_URL_DYNAMODB", endpoint)
        .env("AWS_REGION", "us-east-1")
        .env("AWS_ACCESS_KEY_ID", "test")
        .env("AWS_SECRET_ACCESS_KEY", "test")
        .stdout(std::process::Stdio::null())
        .status()
        .expect("seed-packs runs");
    assert!(status.success(), "seed-packs failed on {}", file.display());
}

/// One design's drop: `packs` packs of `units` units; returns its phases and its books.
async fn drop_of(bin_dir: &Path, packs: usize, units: u64) -> (Vec<Phase>, String) {
    // Transactions rolled back by the items they name: moto's whole-table copy would make each
    // one slower as the drop fills the table (testkit/moto/key_rollback.py).
    let moto = MotoServer::start_with(Rollback::NamedItems).await;
    let proxy = FaultProxy::start(&moto.endpoint).await;
    proxy.one_at_a_time();
    let table = "capacity";
    let dir = std::env::temp_dir().join(format!("fan-api-capacity-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let file = dir.join("packs.json");
    std::fs::write(&file, seed_file(packs, units)).expect("the seed file");
    seed(bin_dir, &file, table, &moto.endpoint);
    let idp = HttpStub::start(Reply::Json(jwks_json())).await;
    let env: Vec<(String, String)> = [
        ("TABLE_NAME", table.to_owned()),
        ("AWS_ENDPOINT_URL_DYNAMODB", proxy.endpoint()),
        ("AUTH_ISSUER", ISSUER.to_owned()),
        ("AUTH_AUDIENCE", AUDIENCE.to_owned()),
        ("AUTH_JWKS_URL", idp.url("/.well-known/jwks.json")),
        // Each fan presses once: the default cap of unpaid holds never binds.
        ("RUST_LOG", "warn".to_owned()),
        // Holds that outlast the run: a run slower than them (1,000 units a pack in a debug
        // build took 66 minutes) sees its first holds run out, released by later presses and
        // sold again, and the sold-out phase is no longer one.
        ("PURCHASE_HOLD_SECONDS", HOLD_SECONDS.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    let binary = bin_dir.join("start-purchase");
    let binary = binary.to_str().expect("UTF-8");
    let mut functions = Vec::new();
    for _ in 0..INSTANCES {
        functions.push(Arc::new(Function::spawn(binary, &env).await));
    }
    // get-pack beside the starts when the design has it, through a proxy of its own: it only
    // reads, so it need not wait in the starts' queue, and its reads are billed apart.
    let gets_proxy = FaultProxy::start(&moto.endpoint).await;
    let get_pack = bin_dir.join("get-pack");
    let mut getters = Vec::new();
    if get_pack.exists() {
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(name, value)| match name.as_str() {
                "AWS_ENDPOINT_URL_DYNAMODB" => (name.clone(), gets_proxy.endpoint()),
                _ => (name.clone(), value.clone()),
            })
            .collect();
        for _ in 0..INSTANCES {
            let binary = get_pack.to_str().expect("UTF-8");
            getters.push(Arc::new(Function::spawn(binary, &env).await));
        }
    }
    // The shadows start from the table as seeded (a Scan through each proxy, not billed).
    for proxy in [&proxy, &gets_proxy] {
        proxy.record();
        testkit::moto::client_for(&proxy.endpoint())
            .await
            .scan()
            .table_name(table)
            .send()
            .await
            .expect("the table scans");
    }
    let (mut ledger, mut gets_ledger) = (Ledger::default(), Ledger::default());
    let total = packs * units as usize;
    let events = |from: usize, count: usize| -> Vec<Value> {
        (from..from + count)
            .rev()
            .map(|i| {
                let token = day_token(TestKey::Rsa, &format!("fan-{i}"));
                start_event(&pack_id(i % packs), Some(&token), Some("press"), None)
                    .source_ip(&address(i))
                    .to_json()
            })
            .collect()
    };
    let get_events = |count: usize| -> Vec<Value> {
        (0..count)
            .map(|i| {
                ApiEvent::get(&format!("/api/packs/{}", pack_id(i % packs)))
                    .source_ip(&address(i))
                    .to_json()
            })
            .collect()
    };
    // The first half of the units is the steady state of a drop (shares with units left), with
    // the crowd reading the packs beside it; the second half meets emptied shares, which a real
    // drop of thousands of units per share meets only at its very end; then the presses after
    // the sell-out.
    let half = total / 2;
    let started = std::time::Instant::now();
    let gets = if getters.is_empty() {
        0
    } else {
        half * GETS_PER_START
    };
    let (answers, get_answers) = tokio::join!(
        press(&functions, events(0, half)),
        press(&getters, get_events(gets))
    );
    let mut phases = vec![Phase::billed(
        "selling, first half",
        (half, answers),
        &proxy,
        &mut ledger,
        None,
        None,
    )];
    if gets > 0 {
        let mut gets = Phase::billed(
            "get-pack, beside the first half",
            (gets, get_answers),
            &gets_proxy,
            &mut gets_ledger,
            Some(DRAW_SK),
            Some(KEEP_PACKS_FOR),
        );
        gets.per_start = GETS_PER_START as f64;
        phases.push(gets);
    }
    let answers = press(&functions, events(half, total - half)).await;
    phases.push(Phase::billed(
        "selling, second half",
        (total - half, answers),
        &proxy,
        &mut ledger,
        None,
        None,
    ));
    // Billed per press as recorded: an instance reads the shares again only when its memory of
    // the sell-out ends, and here 8 instances make far fewer presses per memory than a crowd's
    // would, so this overstates those reads per press.
    let answers = press(&functions, events(total, total)).await;
    phases.push(Phase::billed(
        "sold out",
        (total, answers),
        &proxy,
        &mut ledger,
        Some(SUPPLY_SK),
        None,
    ));
    drop(getters);
    drop(functions);
    // The books, read from moto directly (not billed): never more purchases than units. Every
    // page of the Scan, with a client that waits for moto (a drop of thousands is megabytes).
    let items: Vec<_> = testkit::moto::patient_client(&moto.endpoint)
        .await
        .scan()
        .table_name(table)
        .into_paginator()
        .items()
        .send()
        .collect::<Result<_, _>>()
        .await
        .expect("the table scans");
    // Per pack, the purchases holding or having bought a unit, and those whose hold ran out
    // and was released (its unit back on sale: it may have sold again).
    let mut per_pack: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for item in &items {
        let text = |name: &str| item.get(name).and_then(|v| v.as_s().ok());
        if let (Some(sk), Some(pack)) = (text("SK"), text("packId"))
            && sk.starts_with("PURCHASE#")
        {
            let (live, expired) = per_pack.entry(pack.clone()).or_default();
            match text("status").map(String::as_str) {
                Some("expired") => *expired += 1,
                _ => *live += 1,
            }
        }
    }
    let reserved: usize = phases
        .iter()
        .map(|phase| phase.answers.get("201 ok").copied().unwrap_or(0))
        .sum();
    // Exact: every pack's units all held or sold, and not one more. A start answered 503 (the
    // function's deadline passed while moto's queue was long) may have taken its unit: its fan
    // retries with the same key and is answered that purchase.
    let unavailable: usize = phases
        .iter()
        .map(|phase| {
            phase
                .answers
                .get("503 service_unavailable")
                .copied()
                .unwrap_or(0)
        })
        .sum();
    let exact = per_pack.len() == packs && per_pack.values().all(|&(live, _)| live == units);
    let took = started.elapsed().as_secs();
    let books = format!(
        "{} ({reserved} answered 201 and {unavailable} answered 503 for {total} units; per pack, purchases holding or having bought a unit and purchases whose hold ran out: {per_pack:?}; the run took {took} s{})",
        if exact { "exact" } else { "NOT EXACT" },
        if took >= HOLD_SECONDS {
            ", past the holds' length: the first holds ran out, were released and their units sold again, so the sold-out phase was not one"
        } else {
            ""
        }
    );
    std::fs::remove_dir_all(&dir).ok();
    (phases, books)
}

/// The capacity run of each design (`(name, directory of its binaries)`), in order.
pub async fn run(designs: &[(String, std::path::PathBuf)], packs: usize, units: u64) -> Value {
    println!(
        "{packs} packs of {units} units; {INSTANCES} start-purchase processes; every unit started for (beside the first half, {GETS_PER_START} get-packs a start through {INSTANCES} get-pack processes), then as many presses after the sell-out.\n"
    );
    println!(
        "Sold out: billed per press as recorded (the reads column counts the presses' reads of the shares). get-pack: a pack's keys are billed per read that an instance makes at most once per {} s (the pack and draw items), so at most {LAMBDA_CONCURRENCY} instances (Lambda's default concurrency quota) make that many a second per pack; the shared keys per request. Its ceiling: the instances reading.\n",
        KEEP_PACKS_FOR.as_secs_f64()
    );
    println!(
        "| design | phase | requests | answers | reads of the watched items (shares; get-pack: draw) | round trips per request | read units per request | write units per request | busiest kind of pack key, write units per key per start (or read) of its pack | busiest kind of pack key, read units | busiest key shared by packs, write units per request | one pack at 5,000 starts/s, busiest key | 50 packs at 20,000 starts/s, busiest key | ceiling per pack (starts/s) | ceiling, all packs (starts/s) | $ per million requests |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let mut figures = Vec::new();
    let mut books = Vec::new();
    for (design, bin_dir) in designs {
        let (phases, exact) = drop_of(bin_dir, packs, units).await;
        for phase in &phases {
            figures.push(phase.report(design, packs));
        }
        books.push(format!("{design}: {exact}"));
    }
    println!("\nBooks: {}.", books.join("; "));
    Value::Array(figures)
}
