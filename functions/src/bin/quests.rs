//! `GET /api/quests`, `GET /api/quests/{questId}` and `GET /api/me/rewards`. Wiring only: the
//! handlers are `api::handlers::quests`.

use std::sync::Arc;

use api::http::routes::quests_routes;
use api::state::MeState;
use lambda::runtime::serve;
use lambda::states::FromEnv;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    lambda::runtime::cold_start();
    let state = Arc::new(MeState::from_env().await);
    let store = state.store.clone();
    serve(quests_routes().function_app(state), &store).await
}
