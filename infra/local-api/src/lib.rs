//! The whole API on your machine, as a library: the server of every route over a store
//! ([`server`]), its start banner ([`banner`]), the local identity provider ([`idp`]) and Stripe's Checkout ([`checkout`]), and the demo's waiting room
//! times ([`demo_queue`]); the app's configuration from a file ([`app_config_file`]); CORS as API Gateway answers it ([`cors`]) and the API reference page
//! ([`reference`]).
//! `local-api` (the binary) serves it over the in-memory store or a local DynamoDB; the drop
//! benchmark's `drop-api` over an in-memory store whose buyers it credits.

pub mod app;
pub mod app_config_file;
pub mod banner;
pub mod checkout;
pub mod cors;
pub mod demo_queue;
pub mod idp;
pub mod operator;
pub mod reference;
pub mod server;
pub mod siteverify;
pub mod webhooks;
