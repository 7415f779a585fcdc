//! `POST /api/web3-link`. Wiring only: the handler is `shared::handlers::web3_link`.

use std::sync::Arc;

use shared::config::{Env, max_body_bytes};
use shared::handlers::web3_link::LinkState;
use shared::http::routes::web3_link_routes;
use shared::runtime::{require, serve, store_from_env, verifier_from_env, warm};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::cold_start();
    let max_body_bytes = require(max_body_bytes(&Env));
    let verifier = verifier_from_env();
    let (store, dynamodb) = store_from_env();
    warm(&dynamodb, Some(&verifier)).await;
    let state = Arc::new(LinkState {
        store,
        verifier,
        max_body_bytes,
    });
    let store = state.store.clone();
    serve(web3_link_routes().function_app(state), &store).await
}
