//! `GET /api/locker-rooms/{displayName}`. Wiring only: the handler is
//! `api::handlers::locker_room`.

use std::sync::Arc;

use api::handlers::locker_room::LockerRoomsState;
use api::http::routes::locker_rooms_routes;
use lambda::runtime::serve;
use lambda::states::FromEnv;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    lambda::runtime::cold_start();
    let state = Arc::new(LockerRoomsState::from_env().await);
    let store = state.store.clone();
    serve(locker_rooms_routes().function_app(state), &store).await
}
