//! A fan's wallets: the identities they linked (`POST /api/web3-link`), one per distinct
//! payload, at most [`MAX_WALLETS_PER_FAN`].
//!
//! - [`canonical`]: the canonical JSON of a payload (RFC 8785), from which its id is derived.

pub mod canonical;

use aws_lc_rs::digest;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::ids::{UserId, WalletId};
use crate::timestamp::Timestamp;
use crate::wallets::canonical::{CanonicalError, canonical_json};

/// The most wallets a fan holds: linking one more distinct identity is refused.
pub const MAX_WALLETS_PER_FAN: u32 = 20;

/// The id of the wallet a payload links: base64url (no padding) of the first 16 bytes of the
/// SHA-256 of `wallet-v1`, a line feed and its canonical JSON (the version names the
/// derivation, as `purchase-v1` does a purchase's); 22 characters of the id grammar. 128 bits keep collisions
/// out of reach for any number of payloads a table can hold, and one payload relinked, however
/// spelled, finds its wallet.
pub fn wallet_id(payload_json: &str) -> Result<WalletId, CanonicalError> {
    let canonical = canonical_json(payload_json)?;
    let digest = digest::digest(
        &digest::SHA256,
        format!("wallet-v1\n{canonical}").as_bytes(),
    );
    let id = URL_SAFE_NO_PAD.encode(&digest.as_ref()[..16]);
    Ok(WalletId::parse(id).expect("22 base64url characters are an id"))
}

/// A linked wallet (`GET /api/me/wallets`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wallet {
    pub id: WalletId,
    /// The payload's JSON text as last linked.
    pub payload: String,
    /// When the fan first linked it.
    pub linked_at: Timestamp,
    /// When the fan last linked it.
    pub last_linked_at: Timestamp,
}

impl Wallet {
    /// The wallet after a link of `payload` at `at`: a new one, or `existing` refreshed (its
    /// first link kept).
    pub fn linked(
        existing: Option<&Wallet>,
        id: WalletId,
        payload: String,
        at: Timestamp,
    ) -> Wallet {
        Wallet {
            id,
            payload,
            linked_at: existing.map_or(at, |wallet| wallet.linked_at),
            last_linked_at: at,
        }
    }
}

/// What a link writes among the fan's wallets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WalletWrite {
    /// The payload is one of the fan's wallets: its `lastLinkedAt` moves, the count stays.
    Refresh,
    /// A new wallet, counted.
    Add,
}

/// Linking a distinct identity past [`MAX_WALLETS_PER_FAN`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a fan holds at most {MAX_WALLETS_PER_FAN} wallets")]
pub struct WalletLimitReached;

/// What linking does for a fan who holds `held` wallets, the linked one among them or not.
pub fn admit_link(already_held: bool, held: u32) -> Result<WalletWrite, WalletLimitReached> {
    if already_held {
        Ok(WalletWrite::Refresh)
    } else if held < MAX_WALLETS_PER_FAN {
        Ok(WalletWrite::Add)
    } else {
        Err(WalletLimitReached)
    }
}

/// The events of `user_id`'s removal of `wallet_id`, written with the wallet's delete (removing
/// a wallet not held deletes nothing and writes none).
pub fn removal_events(user_id: &UserId, wallet_id: &WalletId) -> Vec<crate::events::NewEvent> {
    vec![crate::events::NewEvent::fan(
        user_id,
        crate::events::WalletRemoved {
            wallet_id: wallet_id.clone(),
        },
    )]
}

/// The list order: newest first by first link, then by id (so that the order is total).
pub fn sort_newest_first(wallets: &mut [Wallet]) {
    wallets.sort_by(|a, b| b.linked_at.cmp(&a.linked_at).then_with(|| a.id.cmp(&b.id)));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Timestamp {
        Timestamp::parse(text).unwrap()
    }

    #[test]
    fn a_payload_has_one_id_however_it_is_spelled() {
        let id = wallet_id(r#"{"address":"0xAbC","chain":1}"#).unwrap();
        assert_eq!(id.as_str().len(), 22);
        assert!(crate::ids::is_valid_id(id.as_str()));
        assert_eq!(
            wallet_id(" { \"chain\" : 1.0 , \"address\" : \"0x\\u0041bC\" } ").unwrap(),
            id
        );
        assert_ne!(wallet_id(r#"{"address":"0xabc","chain":1}"#).unwrap(), id);
        assert_ne!(wallet_id(r#"{"address":"0xAbC","chain":"1"}"#).unwrap(), id);
        // Pinned: the id of a stored wallet must not change with a refactor.
        assert_eq!(
            wallet_id("true").unwrap().as_str(),
            "aWJ8qqZTVW8e2E9j0vhAXA"
        );
        assert_eq!(wallet_id("{"), Err(CanonicalError::Syntax));
    }

    #[test]
    fn the_twenty_first_distinct_wallet_is_refused_and_a_relink_never_is() {
        assert_eq!(admit_link(false, 0), Ok(WalletWrite::Add));
        assert_eq!(admit_link(false, 19), Ok(WalletWrite::Add));
        assert_eq!(admit_link(false, 20), Err(WalletLimitReached));
        assert_eq!(admit_link(true, 20), Ok(WalletWrite::Refresh));
    }

    #[test]
    fn a_relink_keeps_the_first_link_and_the_list_is_newest_first() {
        let id = |text: &str| WalletId::parse(text).unwrap();
        let first = Wallet::linked(None, id("w1"), "1".into(), at("2026-11-01T00:00:00Z"));
        assert_eq!(first.linked_at, first.last_linked_at);
        let again = Wallet::linked(
            Some(&first),
            id("w1"),
            "1.0".into(),
            at("2026-11-02T00:00:00Z"),
        );
        assert_eq!(again.linked_at, at("2026-11-01T00:00:00Z"));
        assert_eq!(again.last_linked_at, at("2026-11-02T00:00:00Z"));
        assert_eq!(again.payload, "1.0");
        let newer = Wallet::linked(None, id("w0"), "2".into(), at("2026-11-01T12:00:00Z"));
        let tie = Wallet::linked(None, id("w2"), "3".into(), at("2026-11-01T12:00:00Z"));
        let mut wallets = vec![again, tie, newer];
        sort_newest_first(&mut wallets);
        let order: Vec<&str> = wallets.iter().map(|w| w.id.as_str()).collect();
        assert_eq!(order, ["w0", "w2", "w1"]);
    }
}
