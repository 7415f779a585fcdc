//! `POST /api/me/cash/top-ups` and `GET /api/me/cash/top-ups/{topUpId}`. Wiring only: the
//! handlers are `api::handlers::top_ups`.

use std::sync::Arc;

use api::handlers::top_ups::TopUpState;
use api::http::routes::cash_top_ups_routes;
use lambda::runtime::serve;
use lambda::states::FromEnv;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    lambda::runtime::cold_start();
    let state = Arc::new(TopUpState::from_env().await);
    let store = state.store.clone();
    serve(cash_top_ups_routes().function_app(state), &store).await
}
