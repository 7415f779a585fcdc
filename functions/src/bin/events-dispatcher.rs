//! The events dispatcher (the table's stream, filtered to new event items): each event to the
//! deliveries queue, once per subscribed endpoint. Wiring only: the handler is
//! `api::handlers::webhooks::dispatch`, its Lambda glue `lambda::webhooks`.

// The invocation's future (the store's queries, the queue's batches) nests deeper than the
// default limit lets the compiler lay out.
#![recursion_limit = "256"]

use lambda::runtime::serve_events;
use lambda::webhooks::{dispatch_state, on_stream};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_runtime::Error> {
    lambda::runtime::cold_start();
    let state = dispatch_state().await;
    serve_events(state, |state, event, _deadline| on_stream(state, event)).await
}
