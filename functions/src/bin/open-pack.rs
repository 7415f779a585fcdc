//! `POST /api/packs/{packId}/purchases/{purchaseId}/open`. Wiring only: the handler is
//! `api::handlers::open_pack`.

use std::sync::Arc;

use api::http::routes::open_pack_routes;
use lambda::runtime::{purchase_state, serve};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    lambda::runtime::cold_start();
    let state = Arc::new(purchase_state().await);
    let store = state.store.clone();
    serve(open_pack_routes().function_app(state), &store).await
}
