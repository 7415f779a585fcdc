//! `GET /api/dashboard`. Wiring only: the handler is `api::handlers::dashboard`.

use std::sync::Arc;

use api::handlers::dashboard::DashboardState;
use api::http::routes::dashboard_routes;
use lambda::runtime::serve;
use lambda::states::FromEnv;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    lambda::runtime::cold_start();
    let state = Arc::new(DashboardState::from_env().await);
    let store = state.store.clone();
    serve(dashboard_routes().function_app(state), &store).await
}
