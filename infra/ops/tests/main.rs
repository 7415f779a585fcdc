//! The operator's tools' tests, one binary (as every crate's): each tool's binary driven against
//! moto_server.

mod cash_credit;
mod seed_packs;
