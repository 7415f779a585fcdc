//! `GET /api/me` and `PATCH /api/me`. Wiring only: the handlers are `api::handlers::profile`.

use std::sync::Arc;

use api::http::routes::me_profile_routes;
use api::state::ProfileState;
use lambda::runtime::serve;
use lambda::states::FromEnv;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    lambda::runtime::cold_start();
    let state = Arc::new(ProfileState::from_env().await);
    let store = state.store.clone();
    serve(me_profile_routes().function_app(state), &store).await
}
