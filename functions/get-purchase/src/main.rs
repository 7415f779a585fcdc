//! `GET /api/packs/{packId}/purchases/{purchaseId}`. Wiring only: the handler is
//! `shared::handlers::get_purchase`.

use shared::handlers::get_purchase::get_purchase;
use shared::runtime::{purchase_state, serve};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    shared::telemetry::init_json();
    serve(purchase_state().await, get_purchase).await
}
