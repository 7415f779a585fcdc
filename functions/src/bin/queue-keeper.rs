//! The waiting rooms' keeper (EventBridge Scheduler, every minute): closes, draws and admits.
//! Wiring only: the handler is `api::handlers::queue_keeper`.

// A pass's future (the close, the draw's batches, admission's transactions) nests deeper than
// the default limit lets the compiler lay out.
#![recursion_limit = "256"]

use std::time::Duration;

use api::handlers::queue_keeper::{KeeperState, keep_queues};
use clients::beacon::BeaconClient;
use lambda::runtime::{require, serve_events, store_from_env, warm};

/// When a run stops starting passes: 10 s before its invocation's deadline (50 s into the
/// function's 60 s timeout, `template.yaml`), which leaves a pass under way time to finish (a
/// draw of 200,000 entrants takes a few seconds of writes: BENCHMARKS.md).
const RESERVE: Duration = Duration::from_secs(10);

/// The pause between passes: admission follows purchases within seconds, not a minute.
const EVERY: Duration = Duration::from_secs(5);

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_runtime::Error> {
    lambda::runtime::cold_start();
    let (store, dynamodb) = store_from_env();
    // DRAND_URLS (template.yaml's DrandUrls): drand's relays, each answer verified.
    let source = require(api::config::beacon_source(&api::config::Env));
    warm(&dynamodb, None).await;
    serve_events::<_, serde_json::Value, _, _, _>(
        KeeperState {
            store,
            beacon: BeaconClient::new(source),
            reserve: RESERVE,
            every: EVERY,
        },
        keep_queues,
    )
    .await
}
