//! A pack's waiting room: `GET` and `POST /api/packs/{packId}/queue`, `GET .../queue/me`,
//! `.../queue/entrants`, `.../queue/me/proof` and `.../queue/report`. Wiring only: the handlers
//! are `api::handlers::queue`.

use std::sync::Arc;

use api::handlers::queue::QueueFnState;
use api::http::routes::queue_routes;
use lambda::runtime::serve;
use lambda::states::FromEnv;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    lambda::runtime::cold_start();
    let state = Arc::new(QueueFnState::from_env().await);
    let store = state.store.clone();
    serve(queue_routes().function_app(state), &store).await
}
