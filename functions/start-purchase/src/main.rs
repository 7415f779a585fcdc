//! `POST /api/packs/{packId}/purchases`. Wiring only: the handler is
//! `shared::handlers::start_purchase`.

use shared::handlers::start_purchase::start_purchase;
use shared::runtime::{purchase_state, serve};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    shared::telemetry::init_json();
    serve(purchase_state().await, start_purchase).await
}
