//! `GET /api/packs` (and API Gateway's `$default` route, for JSON 404s). Wiring only: the handler
//! is `api::handlers::list_packs`.

use std::sync::Arc;

use api::config::{Env, cursor_secret};
use api::handlers::list_packs::ListPacksState;
use api::http::routes::list_packs_routes;
use domain::packs::listing::CursorSigner;
use lambda::runtime::{require, serve, store_from_env, warm};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    lambda::runtime::cold_start();
    let (store, dynamodb) = store_from_env();
    let cursors = CursorSigner::new(&require(cursor_secret(&Env)));
    warm(&dynamodb, None).await;
    let state = Arc::new(ListPacksState { store, cursors });
    let store = state.store.clone();
    serve(list_packs_routes().function_app(state), &store).await
}
