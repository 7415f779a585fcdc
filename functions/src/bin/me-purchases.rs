//! `GET /api/me/purchases` and `GET /api/me/items`. Wiring only: the handlers are
//! `api::handlers::my_purchases`.

use std::sync::Arc;

use api::http::routes::me_purchases_routes;
use api::state::MeState;
use lambda::runtime::serve;
use lambda::states::FromEnv;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    lambda::runtime::cold_start();
    let state = Arc::new(MeState::from_env().await);
    let store = state.store.clone();
    serve(me_purchases_routes().function_app(state), &store).await
}
