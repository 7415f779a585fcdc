//! The scheduled sweep of expired purchase holds (EventBridge Scheduler, every minute). Wiring
//! only: the handler is `api::handlers::release_holds`.

// The sweep's future (listing, share-by-share queries, releases, refreshes) nests deeper than
// the default limit lets the compiler lay out.
#![recursion_limit = "256"]

use std::time::Duration;

use api::handlers::release_holds::{SweepState, release_holds};
use lambda::runtime::{require, serve_events, store_from_env, warm};

/// When the sweep stops starting batches: 15 s under the function's 60 s timeout
/// (`template.yaml`), which leaves a batch under way time to finish and answer.
const BUDGET: Duration = Duration::from_secs(45);

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_runtime::Error> {
    lambda::runtime::cold_start();
    let (store, dynamodb) = store_from_env();
    // A second refresh of the packs' summaries half a schedule period after the first: what fans
    // see of `remaining` is then at most about 30 s behind (BENCHMARKS.md, capacity).
    let refresh_again_after = require(api::config::summary_refresh_again(&api::config::Env));
    warm(&dynamodb, None).await;
    serve_events::<_, serde_json::Value, _, _, _>(
        SweepState {
            store,
            budget: BUDGET,
            refresh_again_after,
        },
        // The sweep keeps its own budget; the deadline is not needed.
        |state, event, _deadline| release_holds(state, event),
    )
    .await
}
