//! `lambda-bench`: the benchmark harness of `scripts/bench` (BENCHMARKS.md has the method).
//!
//! ```text
//! lambda-bench lambda [--before LABEL=DIR] BIN_DIR [COLD_RUNS] [WARM_INVOCATIONS] [ONLY]
//! lambda-bench cold   [--before LABEL=DIR] BIN_DIR [COLD_RUNS] [WARM_INVOCATIONS] [ONLY]
//! lambda-bench drop   BIN_DIR DROP_API
//! lambda-bench readstorm [FANS] [POLL_SECONDS]
//! lambda-bench webhooks BIN_DIR [ROUNDS] [INVOCATIONS]
//! lambda-bench BIN_DIR [COLD_RUNS] [WARM_INVOCATIONS] [ONLY]     (as `lambda`)
//! ```
//!
//! - `lambda`: every function binary of BIN_DIR beside two floors (`hello`, and
//!   `hello-dynamodb`: hello plus one raw DynamoDB exchange), run through the Lambda Runtime API
//!   emulator of `testkit` against moto_server, each driven with requests that succeed: cold
//!   init, cold first response and first invocation (medians), warm latency p50/p99, CPU per warm
//!   invocation, peak RSS, binary size, DynamoDB requests per invocation by operation; the
//!   targets of issue 13 as ratios to the floors of the same run.
//! - `cold`: cold starts with a connection set-up delay on each new connection to DynamoDB
//!   (`BENCH_DYNAMODB_SETUP_MS`, default 20) and to the identity provider
//!   (`BENCH_IDP_SETUP_MS`, default 60).
//! - `readstorm`: the model of one pack page polled by a drop's crowd (200,000 fans every 2 s by
//!   default), the edge on and off ([`readstorm`]).
//! - `drop`: the drop on the local API (`DROP_API`, in-memory store) and through 8
//!   `start-purchase` processes against moto; what a start writes and the ceiling it puts on a
//!   pack's drop.
//! - `webhooks`: events-dispatcher's records and webhook-sender's messages a second per instance
//!   and per invocation, against moto and stubs of SQS and of receivers ([`webhooks`]).
//!
//! `--before LABEL=DIR`: the same functions built from another commit (`scripts/bench` with
//! `BENCH_BASELINE`), each measured just before its namesake in BIN_DIR, under the same moto and
//! load, and shown beside it with the ratios (the floors run once, from BIN_DIR).
//!
//! `ONLY` is a comma-separated list of binaries (to profile one, for example). Tables go to
//! standard output, the figures as JSON to standard error's last line.

mod capacity;
mod capacity_run;
mod compare;
mod drop;
mod functions;
mod lambda;
mod readstorm;
mod stats;
mod units;
mod webhooks;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::compare::Baseline;

fn usage() -> ! {
    eprintln!(
        "usage: lambda-bench (lambda|cold) [--before LABEL=DIR] BIN_DIR [COLD_RUNS] [WARM_INVOCATIONS] [ONLY]\n       lambda-bench drop BIN_DIR DROP_API\n       lambda-bench capacity NAME=BIN_DIR...\n       lambda-bench readstorm [FANS] [POLL_SECONDS]\n       lambda-bench webhooks BIN_DIR [ROUNDS] [INVOCATIONS]"
    );
    std::process::exit(2)
}

fn number(args: &[String], i: usize, default: usize) -> usize {
    args.get(i)
        .map_or(default, |a| a.parse().unwrap_or_else(|_| usage()))
}

fn only(args: &[String], i: usize) -> Option<Vec<String>> {
    args.get(i)
        .map(|a| a.split(',').map(str::to_owned).collect())
}

async fn drops(bin_dir: &Path, drop_api: &Path) -> Value {
    let env = |name: &str, default: usize| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let (buyers, units, connections) = (
        env("DROP_BUYERS", 5000),
        env("DROP_UNITS", 1000),
        env("DROP_CONNECTIONS", 64),
    );
    println!("### On the local API (in-memory store)\n");
    let local = drop::local(drop_api, buyers, units as u64, connections).await;

    let (buyers, units, instances) = (
        env("LAMBDA_DROP_BUYERS", 1000),
        env("LAMBDA_DROP_UNITS", 200),
        env("LAMBDA_DROP_INSTANCES", 8),
    );
    println!("\n### Through {instances} start-purchase processes against moto\n");
    let lambda = drop::lambda(
        &bin_dir.join("start-purchase"),
        buyers,
        units as u64,
        instances,
    )
    .await;

    println!("\n### What a start writes, and one pack's ceiling on DynamoDB\n");
    let fresh = lambda.moto.new_table().await;
    let (user, purchase) = &lambda.winner;
    let capacity =
        capacity::analyse(&lambda.store, &fresh, drop::LAMBDA_PACK, user, purchase).await;
    json!({ "local": local, "lambda": lambda.figures, "capacity": capacity })
}

#[tokio::main]
async fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let command = match args.first().map(String::as_str) {
        Some("readstorm") => {
            let number = |i: usize, default: f64| {
                args.get(i)
                    .map_or(default, |a| a.parse().unwrap_or_else(|_| usage()))
            };
            readstorm::run(&readstorm::Crowd {
                fans: number(1, 200_000.0),
                poll_seconds: number(2, 2.0),
            });
            return;
        }
        Some("capacity") => {
            // Each design's binaries: NAME=DIR (start-purchase and seed-packs in DIR).
            let designs: Vec<(String, PathBuf)> = args[1..]
                .iter()
                .map(|arg| {
                    let (name, dir) = arg.split_once('=').unwrap_or_else(|| usage());
                    (name.to_owned(), PathBuf::from(dir))
                })
                .collect();
            let env = |name: &str, default: usize| {
                std::env::var(name)
                    .ok()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(default)
            };
            let figures = capacity_run::run(
                &designs,
                env("CAPACITY_PACKS", 3),
                env("CAPACITY_UNITS", 100) as u64,
            )
            .await;
            eprintln!("{figures}");
            return;
        }
        Some("webhooks") => {
            let bin_dir = PathBuf::from(args.get(1).cloned().unwrap_or_else(|| usage()));
            let figures = webhooks::run(&bin_dir, number(&args, 2, 5), number(&args, 3, 20)).await;
            eprintln!("{figures}");
            return;
        }
        Some("lambda" | "cold" | "drop") => args.remove(0),
        Some(_) => "lambda".to_owned(),
        None => usage(),
    };
    let before = (args.first().map(String::as_str) == Some("--before")).then(|| {
        let design = args.get(1).cloned().unwrap_or_else(|| usage());
        args.drain(..2);
        let (label, dir) = design.split_once('=').unwrap_or_else(|| usage());
        Baseline {
            label: label.to_owned(),
            dir: PathBuf::from(dir),
        }
    });
    let bin_dir = PathBuf::from(args.first().cloned().unwrap_or_else(|| usage()));
    let only = only(&args, 3);
    let plan = |warm: usize| lambda::Plan {
        bin_dir: &bin_dir,
        baseline: before.as_ref(),
        cold_runs: number(&args, 1, 21),
        warm: number(&args, 2, warm),
        only: only.as_deref(),
    };
    let figures = match command.as_str() {
        "lambda" => lambda::run(&plan(3000)).await,
        "cold" => lambda::run_cold(&plan(200)).await,
        _ => {
            let drop_api = PathBuf::from(args.get(1).cloned().unwrap_or_else(|| usage()));
            drops(&bin_dir, &drop_api).await
        }
    };
    eprintln!("{figures}");
}
