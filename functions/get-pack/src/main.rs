//! `GET /api/packs/{packId}`. Wiring only: the handler is `shared::handlers::get_pack`.

use std::time::Duration;

use shared::handlers::get_pack::{GetPackState, RecentPacks, get_pack};
use shared::runtime::{serve, store_from_env, warm};

/// How long an instance answers a pack from memory: as long as a cache in front may keep the
/// answer (`Cache-Control: max-age=5`), so a fan's figure lags by at most twice that more.
const KEEP_PACKS_FOR: Duration = Duration::from_secs(5);

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
