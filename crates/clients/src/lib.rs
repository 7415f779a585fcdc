//! Clients of the services outside fan-api (Stripe's API, Turnstile's siteverify, drand's
//! relays) over one HTTPS connector. They depend on the domain only.

pub mod beacon;
pub mod http_client;
pub mod siteverify;
pub mod stripe;
pub mod webhooks;
