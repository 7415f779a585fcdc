//! `DELETE /api/me`. Wiring only: the handler is `api::handlers::delete_account`.

// The erasure's future (release, re-keying, transactions) nests deeper than the default limit
// lets the compiler lay out.
#![recursion_limit = "256"]

use std::sync::Arc;

use api::handlers::delete_account::DeletionState;
use api::http::routes::account_deletion_routes;
use lambda::runtime::serve;
use lambda::states::FromEnv;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    lambda::runtime::cold_start();
    let state = Arc::new(DeletionState::from_env().await);
    let store = state.store.clone();
    serve(account_deletion_routes().function_app(state), &store).await
}
