//! The operators' webhook endpoints and deliveries (`/api/webhooks/...`, IAM). Wiring only: the
//! handlers are `api::handlers::webhooks::{endpoints, operations}`, the state
//! `lambda::webhooks::endpoints_state` (the store and the deliveries queue on SQS).

use std::sync::Arc;

use api::http::routes::webhook_endpoints_routes;
use lambda::runtime::serve;
use lambda::webhooks::endpoints_state;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    lambda::runtime::cold_start();
    let state = Arc::new(endpoints_state().await);
    let store = state.store.clone();
    serve(webhook_endpoints_routes().function_app(state), &store).await
}
