//! `GET /api/quests`, `GET /api/quests/{questId}` and `GET /api/me/rewards`. Wiring only: the
//! handlers are `shared::handlers::quests`.

use std::sync::Arc;

use shared::handlers::me::MeState;
use shared::http::routes::quests_routes;
use shared::runtime::serve;
use shared::states::FromEnv;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::cold_start();
    let state = Arc::new(MeState::from_env().await);
    let store = state.store.clone();
    serve(quests_routes().function_app(state), &store).await
}
