//! fan-api's domain: one module per aggregate, rules as plain functions with typed errors,
//! the typed ids every layer passes, and the schemas of its values. No I/O: no AWS, no HTTP.

pub mod account;
pub mod app_config;
pub mod beacon;
pub mod cash;
pub mod catalog;
pub mod decimal;
pub mod events;
pub mod hex;
pub mod humancheck;
pub mod ids;
pub mod json_schema;
pub mod leaderboards;
pub mod links;
pub mod locker_room;
pub mod packs;
pub mod products;
pub mod profile;
pub mod purchases;
pub mod quests;
pub mod queue;
pub mod ratelimit;
pub mod secret;
pub mod sessions;
pub mod slots;
pub mod text;
pub mod timestamp;
pub mod topups;
pub mod truthy;
pub mod urls;
pub mod wallets;
pub mod webhooks;
