//! `GET /api/me/cash` and `GET /api/me/cash/transactions`. Wiring only: the handlers are
//! `shared::handlers::my_cash`.

use std::sync::Arc;

use shared::handlers::me::MeState;
use shared::http::routes::me_cash_routes;
use shared::runtime::serve;
use shared::states::FromEnv;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::cold_start();
    let state = Arc::new(MeState::from_env().await);
    let store = state.store.clone();
    serve(me_cash_routes().function_app(state), &store).await
}
