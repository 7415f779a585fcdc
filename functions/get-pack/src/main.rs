//! `GET /api/packs/{packId}`. Wiring only: the handler is `shared::handlers::get_pack`.

use shared::handlers::get_pack::{GetPackState, KEEP_PACKS_FOR, RecentPacks, get_pack};
use shared::runtime::{serve, store_from_env, warm};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    shared::telemetry::init_json();
    let (store, dynamodb) = store_from_env();
    warm(&dynamodb, None).await;
    serve(
        GetPackState {
            store,
            recent: RecentPacks::keeping(KEEP_PACKS_FOR),
        },
        get_pack,
    )
    .await
}
