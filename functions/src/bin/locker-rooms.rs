//! `GET /api/locker-rooms/{displayName}`. Wiring only: the handler is
//! `shared::handlers::locker_room`.

use std::sync::Arc;

use shared::handlers::locker_room::LockerRoomsState;
use shared::http::routes::locker_rooms_routes;
use shared::runtime::serve;
use shared::states::FromEnv;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::cold_start();
    let state = Arc::new(LockerRoomsState::from_env().await);
    let store = state.store.clone();
    serve(locker_rooms_routes().function_app(state), &store).await
}
