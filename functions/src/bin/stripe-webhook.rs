//! `POST /api/webhooks/stripe`. Wiring only: the handler is
//! `shared::handlers::stripe_webhook`.

use std::sync::Arc;

use shared::handlers::stripe_webhook::WebhookState;
use shared::http::routes::stripe_webhook_routes;
use shared::runtime::serve;
use shared::states::FromEnv;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::cold_start();
    let state = Arc::new(WebhookState::from_env().await);
    let store = state.store.clone();
    serve(stripe_webhook_routes().function_app(state), &store).await
}
