//! `GET /api/me/events`, `GET /api/events` and `GET /api/events/{eventId}`. Wiring only: the
//! handlers are `api::handlers::events`.

use std::sync::Arc;

use api::handlers::events::EventsState;
use api::http::routes::events_routes;
use lambda::runtime::serve;
use lambda::states::FromEnv;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    lambda::runtime::cold_start();
    let state = Arc::new(EventsState::from_env().await);
    let store = state.store.clone();
    serve(events_routes().function_app(state), &store).await
}
