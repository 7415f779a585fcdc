//! The webhook sender (the deliveries queue): one attempt per message, recorded, retried on
//! Standard Webhooks' schedule. Wiring only: the handler is `api::handlers::webhooks::send`,
//! its Lambda glue `lambda::webhooks`.

// The invocation's future (the store's queries, the queue's batches) nests deeper than the
// default limit lets the compiler lay out.
#![recursion_limit = "256"]

use lambda::runtime::serve_events;
use lambda::webhooks::{on_messages, send_state};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_runtime::Error> {
    lambda::runtime::cold_start();
    let state = send_state().await;
    serve_events(state, |state, event, _deadline| on_messages(state, event)).await
}
