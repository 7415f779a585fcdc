//! The crate's integration tests, one binary (matklad's "Delete Cargo Integration Tests"):
//! each former test binary is a module; what they share is built and started once.

mod bounded_bodies;
mod browser;
mod common;
mod cors;
mod demo_queue;
mod fan_view_flow;
mod hostile;
mod openapi_contract;
mod parts;
mod quest_flow;
mod rate_limits;
mod top_up_checkout;
