//! The scheduled erasure of deleted accounts (EventBridge Scheduler, every minute): carries on
//! every deletion not finished, from its stored step. Wiring only: the handler is
//! `api::handlers::delete_account::resume_deletions`.

// The erasure's future (release, re-keying, transactions) nests deeper than the default limit
// lets the compiler lay out.
#![recursion_limit = "256"]

use std::time::Duration;

use api::handlers::delete_account::{ErasureState, resume_deletions};
use lambda::runtime::{require, serve_events, store_from_env, warm};

/// When a run stops starting pieces: 15 s under the function's 60 s timeout (`template.yaml`).
const BUDGET: Duration = Duration::from_secs(45);

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_runtime::Error> {
    lambda::runtime::cold_start();
    let (store, dynamodb) = store_from_env();
    let pseudonyms = require(api::config::pseudonym_key(&api::config::Env));
    warm(&dynamodb, None).await;
    serve_events::<_, serde_json::Value, _, _, _>(
        ErasureState {
            store,
            pseudonyms,
            budget: BUDGET,
        },
        |state, _event, _deadline| resume_deletions(state),
    )
    .await
}
