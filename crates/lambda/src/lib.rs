//! The Lambda glue: AWS clients, each function's state from the environment (read once per
//! cold start), the runtime loops, telemetry.

pub mod aws;
pub mod runtime;
pub mod states;
pub mod telemetry;
pub mod webhooks;
