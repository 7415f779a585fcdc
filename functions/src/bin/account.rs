//! `GET /api/me/export`. Wiring only: the handler is `api::handlers::export`.

use std::sync::Arc;

use api::http::routes::account_routes;
use api::state::MeState;
use lambda::runtime::serve;
use lambda::states::FromEnv;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    lambda::runtime::cold_start();
    let state = Arc::new(MeState::from_env().await);
    let store = state.store.clone();
    serve(account_routes().function_app(state), &store).await
}
