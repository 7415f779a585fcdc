//! `GET /api/packs/{packId}`. Wiring only: the handler is `shared::handlers::get_pack`.

use std::sync::Arc;

use shared::handlers::get_pack::{GetPackState, KEEP_PACKS_FOR, RecentPacks};
use shared::http::routes::get_pack_routes;
use shared::runtime::{serve, store_from_env, warm};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::cold_start();
    let (store, dynamodb) = store_from_env();
    warm(&dynamodb, None).await;
    let state = Arc::new(GetPackState {
        store,
        recent: RecentPacks::keeping(KEEP_PACKS_FOR),
    });
    let store = state.store.clone();
    serve(get_pack_routes().function_app(state), &store).await
}
