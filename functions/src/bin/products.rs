//! `GET /api/products` and `GET /api/products/{productId}`. Wiring only: the handlers are
//! `api::handlers::products`.

use std::sync::Arc;

use api::config::{Env, cursor_secret};
use api::handlers::products::ProductsState;
use api::http::routes::products_routes;
use domain::packs::listing::CursorSigner;
use lambda::runtime::{require, serve, store_from_env, warm};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    lambda::runtime::cold_start();
    let (store, dynamodb) = store_from_env();
    let cursors = CursorSigner::new(&require(cursor_secret(&Env)));
    warm(&dynamodb, None).await;
    let state = Arc::new(ProductsState { store, cursors });
    let store = state.store.clone();
    serve(products_routes().function_app(state), &store).await
}
