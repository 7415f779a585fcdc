//! `GET /api/leaderboards/{board}` and `GET /api/leaderboards/{board}/me`. Wiring only: the
//! handlers are `api::handlers::leaderboards`.

use std::sync::Arc;

use api::handlers::leaderboards::LeaderboardsState;
use api::http::routes::leaderboards_routes;
use lambda::runtime::serve;
use lambda::states::FromEnv;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    lambda::runtime::cold_start();
    let state = Arc::new(LeaderboardsState::from_env().await);
    let store = state.store.clone();
    serve(leaderboards_routes().function_app(state), &store).await
}
