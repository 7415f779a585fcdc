//! The public randomness of the waiting room's draw: a round of drand's quicknet
//! ([`quicknet`]), fetched from drand's HTTP relays (`client::BeaconClient`) and checked before use
//! ([`verify`]): its BLS signature against quicknet's public key (drand-verify's
//! [`G2PubkeyRfc`]), and its randomness against the SHA-256 of that signature. Nobody, the
//! service included, knows a round's randomness before the League of Entropy's threshold of
//! nodes signs it, and a relay cannot alter it without failing the check.
//!
//! `scripts/local`, which cannot reach drand, uses a [`local`] beacon: chain `"local"`,
//! randomness derived from the round alone, accepted only by a client built with
//! `client::BeaconSource::Local` (`DRAND_LOCAL_BEACON`, which no deployed function sets).

pub mod quicknet;

use std::sync::OnceLock;

use aws_lc_rs::digest;
use drand_verify::{G2PubkeyRfc, Pubkey};
use serde::{Deserialize, Serialize};

/// The `chain` of a local beacon: not drand's, and said so.
pub const LOCAL_CHAIN: &str = "local";

/// One round of a beacon, as the queue publishes it (`beacon` of `GET /api/packs/{packId}/queue`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Beacon {
    /// quicknet's chain hash, or `"local"` for the local beacon of scripts/local.
    pub chain: String,
    pub round: u64,
    /// SHA-256 of `signature`, 64 lowercase hex digits.
    #[serde(with = "crate::hex::bytes32")]
    #[schema(value_type = String, pattern = "^[0-9a-f]{64}$")]
    pub randomness: [u8; 32],
    /// The network's BLS signature of the round (48 bytes on G1 for quicknet), lowercase hex.
    #[serde(with = "crate::hex::bytes")]
    #[schema(value_type = String, pattern = "^([0-9a-f]{2})*$")]
    pub signature: Vec<u8>,
}

/// Why no usable beacon was had.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum BeaconError {
    /// The round does not exist yet: its time has not come, or every relay answered 404/425.
    #[error("the beacon round does not exist yet")]
    NotYet,
    /// No relay gave a beacon that verifies (down, garbage, lying): try again later.
    #[error("no relay gave a valid beacon")]
    Unavailable,
    /// This beacon is not a valid one of the accepted chain (bad signature, randomness not the
    /// signature's SHA-256, another chain, or a local beacon where only drand's is accepted).
    #[error("the beacon does not verify")]
    Invalid,
}

/// Checks a quicknet beacon: the chain is quicknet, the randomness is the SHA-256 of the
/// signature, and the signature is the network's BLS signature of the round. A local beacon is
/// always refused here; only `client::BeaconClient::verify` of a local client accepts one.
pub fn verify(beacon: &Beacon) -> Result<(), BeaconError> {
    if beacon.chain != quicknet::CHAIN_HASH || beacon.randomness != sha256(&beacon.signature) {
        return Err(BeaconError::Invalid);
    }
    // Unchained: the message is the round alone, so no previous signature.
    match quicknet_key().verify(beacon.round, &[], &beacon.signature) {
        Ok(true) => Ok(()),
        // false: a valid point that is not the signature; Err: not a point of G1 at all.
        Ok(false) | Err(_) => Err(BeaconError::Invalid),
    }
}

/// The beacon of `round` on the local chain: its signature is a plain label naming the round (no
/// signature at all, and visibly not drand's), its randomness that label's SHA-256, so that
/// `scripts/verify-queue`'s randomness check holds and says `chain: local`.
pub fn local(round: u64) -> Beacon {
    let signature = format!("local beacon, not drand: round {round}").into_bytes();
    Beacon {
        chain: LOCAL_CHAIN.to_owned(),
        round,
        randomness: sha256(&signature),
        signature,
    }
}

pub fn verify_local(beacon: &Beacon) -> Result<(), BeaconError> {
    if *beacon == local(beacon.round) {
        Ok(())
    } else {
        Err(BeaconError::Invalid)
    }
}

/// quicknet's public key as a curve point, decoded (and checked to be in G2) once per process.
fn quicknet_key() -> &'static G2PubkeyRfc {
    static KEY: OnceLock<G2PubkeyRfc> = OnceLock::new();
    KEY.get_or_init(|| {
        G2PubkeyRfc::from_fixed(quicknet::PUBLIC_KEY).expect("quicknet's public key is in G2")
    })
}

fn sha256(bytes: &[u8]) -> [u8; 32] {
    digest::digest(&digest::SHA256, bytes)
        .as_ref()
        .try_into()
        .expect("SHA-256 is 32 bytes")
}
