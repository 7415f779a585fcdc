//! One plain async function per endpoint, over a state struct built once per cold start. They
//! take an API Gateway (HTTP API) request and always return a response: failures become the JSON
//! error body, logged with the request id ([`crate::http::respond`]). Each module parses its
//! endpoint's input and maps the domain's errors to [`crate::http::error::ApiError`].

pub mod complete_purchase;
pub mod get_pack;
pub mod get_purchase;
pub mod list_packs;
pub mod open_pack;
pub mod purchase_json;
pub mod release_holds;
pub mod start_purchase;
pub mod stripe_webhook;
pub mod top_ups;
pub mod web3_link;
// The fan's own view (issue 18).
pub mod me;
pub mod my_cash;
pub mod my_purchases;
