//! `GET /api/health`, `GET /api/time` and `GET /api/config`. Wiring only: the handlers are
//! `api::handlers::misc`; the configuration they answer is the copy `serve` keeps.

use std::sync::Arc;

use api::handlers::misc::MiscState;
use api::http::routes::misc_routes;
use lambda::runtime::{serve, store_from_env, warm};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    lambda::runtime::cold_start();
    let (store, dynamodb) = store_from_env();
    warm(&dynamodb, None).await;
    serve(
        misc_routes().function_app(Arc::new(MiscState::default())),
        &store,
    )
    .await
}
