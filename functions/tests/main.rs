//! The crate's integration tests, one binary (matklad's "Delete Cargo Integration Tests"):
//! each former test binary is a module; what they share is built and started once.

mod cash_top_ups;
mod catalog;
mod complete_purchase;
mod dashboard;
mod get_pack;
mod get_purchase;
mod glue;
mod leaderboards;
mod list_packs;
mod locker_rooms;
mod me_cash;
mod me_profile;
mod me_purchases;
mod me_wallets;
mod open_pack;
mod quest_claims;
mod quests;
mod queue;
mod queue_human_check;
mod queue_keeper;
mod queued_drop;
mod release_holds;
mod start_purchase;
mod start_purchase_human_check;
mod start_purchase_metrics;
mod stripe_webhook;
mod web3_link;
