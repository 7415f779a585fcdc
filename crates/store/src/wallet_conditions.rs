//! The conditions the wallet rules put on each write, declared once: DynamoDB gets each inside
//! the link's (or the removal's) transaction, the in-memory store checks the same declaration
//! against the item it is about to change. Each names the rule of [`domain::wallets`] it enforces.

use super::condition::{Compare, Condition};
use super::schema::{PK, WALLETS_COUNT};
use domain::wallets::{MAX_WALLETS_PER_FAN, WalletWrite};

/// The conditions of a link that makes `write`: the wallet's, and for an add the count's.
pub fn link(write: WalletWrite) -> (Condition, Option<Condition>) {
    match write {
        WalletWrite::Refresh => (wallet_held(), None),
        WalletWrite::Add => (wallet_new(), Some(below_cap())),
    }
}

/// The wallet is one the fan holds: a link refreshes it ([`domain::wallets::WalletWrite::Refresh`]),
/// a removal deletes it (else `wallet_not_found`).
pub fn wallet_held() -> Condition {
    Condition::exists(PK)
}

/// The wallet is new to the fan: a link adds it ([`domain::wallets::WalletWrite::Add`]).
pub fn wallet_new() -> Condition {
    Condition::new_item()
}

/// The fan's count of wallets has room for one more ([`domain::wallets::admit_link`]'s cap): no
/// count yet, or under [`MAX_WALLETS_PER_FAN`].
pub fn below_cap() -> Condition {
    Condition::absent(WALLETS_COUNT).or(Condition::is(
        WALLETS_COUNT,
        Compare::Lt,
        MAX_WALLETS_PER_FAN,
    ))
}
