//! `GET /api/packs/{packId}`. Wiring only: the handler is `api::handlers::get_pack`.

use std::sync::Arc;

use api::handlers::get_pack::{GetPackState, KEEP_PACKS_FOR, RecentPacks};
use api::http::routes::get_pack_routes;
use lambda::runtime::{serve, store_from_env, warm};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    lambda::runtime::cold_start();
    let (store, dynamodb) = store_from_env();
    warm(&dynamodb, None).await;
    let state = Arc::new(GetPackState {
        store,
        recent: RecentPacks::keeping(KEEP_PACKS_FOR),
    });
    let store = state.store.clone();
    serve(get_pack_routes().function_app(state), &store).await
}
