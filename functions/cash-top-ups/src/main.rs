//! `POST /api/me/cash/top-ups` and `GET /api/me/cash/top-ups/{topUpId}`. Wiring only: the
//! handlers are `shared::handlers::top_ups`.

use shared::handlers::top_ups::{TopUpState, top_ups};
use shared::runtime::serve;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    shared::telemetry::init_json();
    serve(TopUpState::from_env().await, top_ups).await
}
