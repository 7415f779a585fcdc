//! One axum handler per endpoint, over its function's state (an `Arc`, built once per cold
//! start). Each takes its input through extractors ([`crate::http::extract`]), in the order its
//! checks run, and returns `Result<Response, ApiError>`: every failure is the JSON error body,
//! logged with the request id. Each handler's `#[utoipa::path]` gives its method and path, which
//! [`crate::http::routes`] routes; each module maps the domain's errors to
//! [`crate::http::error::ApiError`].

pub mod catalog;
pub mod complete_purchase;
pub mod get_pack;
pub mod get_purchase;
pub mod list_packs;
pub mod open_pack;
pub mod purchase_json;
pub mod queue;
mod queue_json;
pub mod queue_keeper;
pub mod queue_proof;
pub mod release_holds;
pub mod start_purchase;
pub mod stripe_webhook;
pub mod top_ups;
pub mod web3_link;
// The fan's own view (issue 18).
pub mod me;
pub mod my_cash;
pub mod my_purchases;
// The fan app (issue 28).
pub mod dashboard;
pub mod leaderboards;
pub mod locker_room;
pub mod my_wallets;
pub mod profile;
pub mod quests;
