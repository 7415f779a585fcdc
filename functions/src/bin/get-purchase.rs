//! `GET /api/packs/{packId}/purchases/{purchaseId}`. Wiring only: the handler is
//! `api::handlers::get_purchase`.

use std::sync::Arc;

use api::http::routes::get_purchase_routes;
use lambda::runtime::{purchase_state, serve};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    lambda::runtime::cold_start();
    let state = Arc::new(purchase_state().await);
    let store = state.store.clone();
    serve(get_purchase_routes().function_app(state), &store).await
}
