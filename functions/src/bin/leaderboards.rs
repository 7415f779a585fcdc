//! `GET /api/leaderboards/{board}` and `GET /api/leaderboards/{board}/me`. Wiring only: the
//! handlers are `shared::handlers::leaderboards`.

use std::sync::Arc;

use shared::handlers::leaderboards::LeaderboardsState;
use shared::http::routes::leaderboards_routes;
use shared::runtime::serve;
use shared::states::FromEnv;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::cold_start();
    let state = Arc::new(LeaderboardsState::from_env().await);
    let store = state.store.clone();
    serve(leaderboards_routes().function_app(state), &store).await
}
