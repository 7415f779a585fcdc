//! `POST /api/webhooks/stripe`. Wiring only: the handler is
//! `api::handlers::stripe_webhook`.

use std::sync::Arc;

use api::handlers::stripe_webhook::WebhookState;
use api::http::routes::stripe_webhook_routes;
use lambda::runtime::serve;
use lambda::states::FromEnv;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    lambda::runtime::cold_start();
    let state = Arc::new(WebhookState::from_env().await);
    let store = state.store.clone();
    serve(stripe_webhook_routes().function_app(state), &store).await
}
