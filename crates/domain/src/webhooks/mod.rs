//! Webhooks (issue 46; docs/events.md, "Delivery"): the Standard Webhooks signatures
//! ([`signature`]), the endpoints events are delivered to ([`endpoint`]), a delivery and its
//! attempts ([`delivery`]), the retry schedule and what each answer decides ([`retry`]), and
//! which addresses a delivery may never reach ([`address`]).

pub mod address;
pub mod delivery;
pub mod endpoint;
pub mod retry;
mod signature;

pub use signature::*;
