//! `POST /api/me/cash/top-ups` and `GET /api/me/cash/top-ups/{topUpId}`. Wiring only: the
//! handlers are `shared::handlers::top_ups`.

use std::sync::Arc;

use shared::handlers::top_ups::TopUpState;
use shared::http::routes::cash_top_ups_routes;
use shared::runtime::serve;
use shared::states::FromEnv;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::cold_start();
    let state = Arc::new(TopUpState::from_env().await);
    let store = state.store.clone();
    serve(cash_top_ups_routes().function_app(state), &store).await
}
