//! `POST /api/web3-link`. Wiring only: the handler is `api::handlers::web3_link`.

use std::sync::Arc;

use api::config::{Env, max_body_bytes};
use api::handlers::web3_link::LinkState;
use api::http::routes::web3_link_routes;
use lambda::runtime::{require, serve, store_from_env, verifier_from_env, warm};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    lambda::runtime::cold_start();
    let max_body_bytes = require(max_body_bytes(&Env));
    let (store, dynamodb) = store_from_env();
    let verifier = verifier_from_env(&store);
    warm(&dynamodb, Some(&verifier)).await;
    let state = Arc::new(LinkState {
        store,
        verifier,
        max_body_bytes,
    });
    let store = state.store.clone();
    serve(web3_link_routes().function_app(state), &store).await
}
