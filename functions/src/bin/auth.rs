//! `GET /api/auth/session`, `POST /api/auth/logout`, `POST /api/auth/revocations` and
//! `POST /api/auth/provider-events`. Wiring only: the handlers are `api::handlers::auth`.

use std::sync::Arc;

use api::handlers::auth::AuthState;
use api::http::routes::auth_routes;
use lambda::runtime::serve;
use lambda::states::FromEnv;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    lambda::runtime::cold_start();
    let state = Arc::new(AuthState::from_env().await);
    let store = state.store.clone();
    serve(auth_routes().function_app(state), &store).await
}
