//! `POST /api/quests/{questId}/claim`. Wiring only: the handler is
//! `shared::handlers::quests::claim_quest`.

use std::sync::Arc;

use shared::handlers::me::MeState;
use shared::http::routes::quest_claims_routes;
use shared::runtime::serve;
use shared::states::FromEnv;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::cold_start();
    let state = Arc::new(MeState::from_env().await);
    let store = state.store.clone();
    serve(quest_claims_routes().function_app(state), &store).await
}
