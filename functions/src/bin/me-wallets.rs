//! `GET /api/me/wallets` and `DELETE /api/me/wallets/{walletId}`. Wiring only: the handlers are
//! `api::handlers::my_wallets`.

use std::sync::Arc;

use api::handlers::my_wallets::WalletsState;
use api::http::routes::me_wallets_routes;
use lambda::runtime::{serve, store_from_env, verifier_from_env, warm};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    lambda::runtime::cold_start();
    let (store, dynamodb) = store_from_env();
    let verifier = verifier_from_env(&store);
    warm(&dynamodb, Some(&verifier)).await;
    let state = Arc::new(WalletsState { store, verifier });
    let store = state.store.clone();
    serve(me_wallets_routes().function_app(state), &store).await
}
