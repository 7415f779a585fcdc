//! The core of fan-api. The Lambda functions under `functions/` only wire configuration and clients
//! to the handlers defined here.
//!
//! - [`handlers`]: one plain async function per endpoint, over a state struct.
//! - [`auth`]: session-token (JWT) verification against the identity provider's JWKS.
//! - [`request`], [`response`], [`error`]: HTTP parsing, JSON responses, the one error type.
//! - [`packs`], [`links`], [`truthy`]: the domain.
//! - [`store`]: storage traits and their DynamoDB implementation; [`store::schema`] is the table.
//! - [`config`], [`aws`], [`telemetry`]: what a cold start reads and builds once.

pub mod auth;
pub mod aws;
pub mod config;
pub mod error;
pub mod handlers;
pub mod http_client;
pub mod links;
pub mod packs;
pub mod request;
pub mod response;
pub mod runtime;
pub mod store;
pub mod telemetry;
pub mod timestamp;
pub mod truthy;
