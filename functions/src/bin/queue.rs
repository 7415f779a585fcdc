//! A pack's waiting room: `GET` and `POST /api/packs/{packId}/queue`, `GET .../queue/me`,
//! `.../queue/entrants`, `.../queue/me/proof` and `.../queue/report`. Wiring only: the handlers
//! are `shared::handlers::queue`.

use std::sync::Arc;

use shared::handlers::queue::QueueFnState;
use shared::http::routes::queue_routes;
use shared::runtime::serve;
use shared::states::FromEnv;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::cold_start();
    let state = Arc::new(QueueFnState::from_env().await);
    let store = state.store.clone();
    serve(queue_routes().function_app(state), &store).await
}
