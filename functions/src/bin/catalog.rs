//! `GET /api/leagues`, `GET /api/leagues/{leagueId}`, `GET /api/teams` and
//! `GET /api/teams/{teamId}`. Wiring only: the handlers are `api::handlers::catalog`.

use std::sync::Arc;

use api::config::{Env, cursor_secret};
use api::handlers::catalog::CatalogState;
use api::http::routes::catalog_routes;
use domain::packs::listing::CursorSigner;
use lambda::runtime::{require, serve, store_from_env, warm};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    lambda::runtime::cold_start();
    let (store, dynamodb) = store_from_env();
    let cursors = CursorSigner::new(&require(cursor_secret(&Env)));
    warm(&dynamodb, None).await;
    let state = Arc::new(CatalogState { store, cursors });
    let store = state.store.clone();
    serve(catalog_routes().function_app(state), &store).await
}
