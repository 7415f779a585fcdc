//! The HTTP API on axum: extractors, the one error type, the handlers, pagination and query
//! helpers, the routes and the OpenAPI document, and the settings they read.

pub mod auth;
pub mod config;
pub mod handlers;
pub mod http;
pub mod openapi;
pub mod state;
pub mod views;
