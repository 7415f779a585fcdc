//! `GET /api/me/cash` and `GET /api/me/cash/transactions`. Wiring only: the handlers are
//! `api::handlers::my_cash`.

use std::sync::Arc;

use api::http::routes::me_cash_routes;
use api::state::MeState;
use lambda::runtime::serve;
use lambda::states::FromEnv;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    lambda::runtime::cold_start();
    let state = Arc::new(MeState::from_env().await);
    let store = state.store.clone();
    serve(me_cash_routes().function_app(state), &store).await
}
