//! The HTTP layer, on axum: the route declaration and each function's router ([`routes`]), the
//! extractors ([`extract`]) and the parsing under them ([`request`]), JSON responses, the one
//! error type, and the layers every router runs in ([`layers`]: the request's span, the
//! deadline), what a browser on another origin may send and read ([`cors`]), and what the edge in front
//! forwards ([`edge`]).

pub mod app_config;
pub mod cors;
pub mod edge;
pub mod error;
pub mod extract;
pub mod human_check;
pub mod layers;
pub mod limit;
pub mod operator;
pub mod paging;
pub mod query;
pub mod refusals;
pub mod request;
pub mod response;
pub mod routes;
