//! The drop's waiting room (issue 29): a line fans join before the sale, ordered after it closes
//! by a draw anyone can recompute (docs/fairness.md), then admitted in order.
//!
//! - [`terms`]: a pack's queue terms and what seeding fixes with them.
//! - [`entry`]: a fan's entry, its status, its index shard and its receipt.
//! - [`state`]: the line's state as the keeper moves it and the public sees it.
//! - [`fairness`]: the order key and the positions.
//! - [`merkle`]: the entrants' Merkle root and a fan's proof.
//! - [`commit`]: the close's commitment and the drawn order, in pages.
//! - [`admission`]: how many fans the keeper admits, and what a refused start is told.
//! - [`events`]: the events a join, a draw and an admission write.

pub mod admission;
pub mod commit;
pub mod entry;
pub mod events;
pub mod excluded;
pub mod fairness;
pub mod merkle;
pub mod state;
pub mod terms;
