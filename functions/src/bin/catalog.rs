//! `GET /api/leagues`, `GET /api/leagues/{leagueId}`, `GET /api/teams` and
//! `GET /api/teams/{teamId}`. Wiring only: the handlers are `shared::handlers::catalog`.

use std::sync::Arc;

use shared::config::{Env, cursor_secret};
use shared::handlers::catalog::CatalogState;
use shared::http::routes::catalog_routes;
use shared::packs::listing::CursorSigner;
use shared::runtime::{require, serve, store_from_env, warm};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::cold_start();
    let (store, dynamodb) = store_from_env();
    let cursors = CursorSigner::new(&require(cursor_secret(&Env)));
    warm(&dynamodb, None).await;
    let state = Arc::new(CatalogState { store, cursors });
    let store = state.store.clone();
    serve(catalog_routes().function_app(state), &store).await
}
