//! `GET /api/dashboard`. Wiring only: the handler is `shared::handlers::dashboard`.

use std::sync::Arc;

use shared::handlers::dashboard::DashboardState;
use shared::http::routes::dashboard_routes;
use shared::runtime::serve;
use shared::states::FromEnv;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::cold_start();
    let state = Arc::new(DashboardState::from_env().await);
    let store = state.store.clone();
    serve(dashboard_routes().function_app(state), &store).await
}
