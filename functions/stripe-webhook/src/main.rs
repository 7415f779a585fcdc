//! `POST /api/webhooks/stripe`. Wiring only: the handler is
//! `shared::handlers::stripe_webhook`.

use shared::handlers::stripe_webhook::{WebhookState, stripe_webhook};
use shared::runtime::serve;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    shared::telemetry::init_json();
    serve(WebhookState::from_env().await, stripe_webhook).await
}
