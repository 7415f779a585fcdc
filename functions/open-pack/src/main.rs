//! `POST /api/packs/{packId}/purchases/{purchaseId}/open`. Wiring only: the handler is
//! `shared::handlers::open_pack`.

use shared::handlers::open_pack::open_pack;
use shared::runtime::{purchase_state, serve};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    shared::telemetry::init_json();
    serve(purchase_state().await, open_pack).await
}
