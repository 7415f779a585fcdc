//! `PUT /api/packs/{packId}/purchases/{purchaseId}`. Wiring only: the handler is
//! `shared::handlers::complete_purchase`.

use shared::handlers::complete_purchase::complete_purchase;
use shared::runtime::{purchase_state, serve};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    shared::telemetry::init_json();
    serve(purchase_state().await, complete_purchase).await
}
