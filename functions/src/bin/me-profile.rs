//! `GET /api/me` and `PATCH /api/me`. Wiring only: the handlers are `shared::handlers::profile`.

use std::sync::Arc;

use shared::handlers::profile::ProfileState;
use shared::http::routes::me_profile_routes;
use shared::runtime::serve;
use shared::states::FromEnv;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::cold_start();
    let state = Arc::new(ProfileState::from_env().await);
    let store = state.store.clone();
    serve(me_profile_routes().function_app(state), &store).await
}
