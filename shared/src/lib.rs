//! The core of fan-api. The Lambda functions under `functions/` only wire configuration and clients
//! to the handlers defined here.
//!
//! - Domain, one module per aggregate, rules as plain functions with typed errors:
//!   [`packs`] (model, listing, seeding rules, the fair draw), [`purchases`] (holds, limits,
//!   payment), [`cash`] (balances and their ledger), [`links`]; [`truthy`],
//!   [`timestamp`]; [`ids`], the typed ids every layer passes; [`json_schema`], their schemas;
//!   [`topups`] (Cash bought through
//!   Stripe Checkout: top-ups, Stripe's signed events and its API); the fan app around the packs
//!   (docs/fan-app.md): [`catalog`] (leagues and teams), [`profile`] (display names, the
//!   `PATCH /api/me` body), [`wallets`] (linked identities, ids from canonical JSON),
//!   [`locker_room`] (the public showcase and its stats); [`urls`] and [`text`] (what a fan writes
//!   that others read); [`queue`] (the waiting room's order and the entrants' Merkle tree).
//! - [`http`]: the HTTP layer on axum: the route declaration and each function's router, the
//!   extractors, JSON responses, the one error type, the request's span and deadline.
//! - [`metrics`]: the CloudWatch metrics the functions emit, counted per invocation and written
//!   as one Embedded Metric Format line.
//! - [`handlers`]: one axum handler per endpoint, over its function's state.
//! - [`auth`]: session-token (JWT) verification against the identity provider's JWKS.
//! - [`store`]: storage traits per aggregate, on DynamoDB and in memory; [`store::schema`] is the
//!   table.
//! - [`config`], [`secret`], [`aws`], [`http_client`], [`telemetry`], [`runtime`], [`states`]:
//!   what a cold start reads and builds once, and the Lambda loops around a router or an event
//!   handler.
//! - [`beacon`]: drand quicknet beacons, fetched from its relays and verified; [`hex`]: bytes as
//!   hex in JSON.

pub mod auth;
pub mod aws;
pub mod beacon;
pub mod cash;
pub mod catalog;
pub mod config;
pub mod decimal;
pub mod handlers;
pub mod hex;
pub mod http;
pub mod http_client;
pub mod humancheck;
pub mod ids;
pub mod json_schema;
pub mod leaderboards;
pub mod links;
pub mod locker_room;
pub mod metrics;
pub mod openapi;
pub mod packs;
pub mod profile;
pub mod purchases;
pub mod quests;
pub mod queue;
pub mod ratelimit;
pub mod runtime;
pub mod secret;
pub mod slots;
pub mod states;
pub mod store;
pub mod telemetry;
pub mod text;
pub mod timestamp;
pub mod topups;
pub mod truthy;
pub mod urls;
pub mod wallets;
