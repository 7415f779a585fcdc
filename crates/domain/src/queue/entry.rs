//! A fan's entry in a waiting room: its id (the fan's public name in the line), its status as
//! the fan sees it, where its index entry goes, and its receipt: an Ed25519 signature over
//! `packId\nentryId\njoinedAt` that anyone can check against the published key, so that the
//! service can be held to an entry it answered.

use aws_lc_rs::signature::{ED25519, Ed25519KeyPair, KeyPair, UnparsedPublicKey};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};
use strum::{EnumString, IntoStaticStr};
use utoipa::ToSchema;

use crate::ids::{EntryId, PackId, UserId};
use crate::queue::admission::Allowance;
use crate::timestamp::Timestamp;

/// The shards of a line's entry index: a join writes one index entry on one of them, so 20,000
/// joins a second are about 313 writes a second per index partition (DynamoDB takes 1,000).
pub const ENTRY_SHARDS: u32 = 64;

/// Where a fan's entry is, as the fan sees it.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, IntoStaticStr, EnumString,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum EntryStatus {
    /// Joined; the draw has not happened.
    Waiting,
    /// Drawn, with a position, not yet admitted.
    Queued,
    /// Admitted: may start purchases until `passExpiresAt`.
    Admitted,
    /// The window passed unused.
    Lapsed,
    /// Bought as much as allowed.
    Done,
    /// The pack sold out before the fan was admitted.
    SoldOut,
}

impl EntryStatus {
    /// As the API and the store write it.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// A fan's entry as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueEntry {
    pub pack_id: PackId,
    pub entry_id: EntryId,
    pub user_id: UserId,
    pub joined_at: Timestamp,
    /// [`ReceiptSigner::sign`] of the entry.
    pub receipt: String,
    pub status: EntryStatus,
    /// 1 = first; set by the draw.
    pub position: Option<u64>,
    /// Set when admitted.
    pub pass_expires_at: Option<Timestamp>,
    /// Units the fan started while admitted.
    pub bought: u32,
}

impl QueueEntry {
    /// A new entry of `user_id` in `pack_id`'s line, joined at `joined_at`, with a random id.
    pub fn new(
        pack_id: PackId,
        user_id: UserId,
        joined_at: Timestamp,
        signer: &ReceiptSigner,
    ) -> Self {
        let entry_id = new_entry_id();
        Self {
            receipt: signer.sign(&pack_id, &entry_id, joined_at),
            pack_id,
            entry_id,
            user_id,
            joined_at,
            status: EntryStatus::Waiting,
            position: None,
            pass_expires_at: None,
            bought: 0,
        }
    }
}

/// 128 random bits as 32 lowercase hex digits.
pub fn new_entry_id() -> EntryId {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the system random source works");
    EntryId::parse(crate::packs::draw::lower_hex(&bytes)).expect("32 hex digits are an id")
}

/// The index shard of an entry: the first byte of SHA-256(entryId) mod [`ENTRY_SHARDS`], so that
/// entries spread evenly whatever their ids look like.
pub fn entry_shard(entry_id: &EntryId) -> u32 {
    let digest =
        aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, entry_id.as_str().as_bytes());
    u32::from(digest.as_ref()[0]) % ENTRY_SHARDS
}

/// What a receipt signs.
pub fn receipt_message(pack_id: &PackId, entry_id: &EntryId, joined_at: Timestamp) -> String {
    format!("{pack_id}\n{entry_id}\n{joined_at}")
}

/// The service's receipt key (Ed25519), from its 32-byte seed.
pub struct ReceiptSigner {
    pair: Ed25519KeyPair,
}

/// A receipt key that is not 32 bytes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a receipt key must be an Ed25519 seed of 32 bytes")]
pub struct BadReceiptKey;

impl ReceiptSigner {
    pub fn from_seed(seed: &[u8]) -> Result<Self, BadReceiptKey> {
        if seed.len() != 32 {
            return Err(BadReceiptKey);
        }
        Ed25519KeyPair::from_seed_unchecked(seed)
            .map(|pair| Self { pair })
            .map_err(|_| BadReceiptKey)
    }

    /// A signer with a fresh random key: the local API's, whose receipts verify while it runs.
    pub fn random() -> Self {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).expect("the system random source works");
        Self::from_seed(&seed).expect("32 bytes are a seed")
    }

    /// The receipt of an entry: base64url (no padding) of the signature of
    /// [`receipt_message`].
    pub fn sign(&self, pack_id: &PackId, entry_id: &EntryId, joined_at: Timestamp) -> String {
        let message = receipt_message(pack_id, entry_id, joined_at);
        URL_SAFE_NO_PAD.encode(self.pair.sign(message.as_bytes()).as_ref())
    }

    /// The public key receipts are checked with: base64url (no padding) of its 32 bytes.
    pub fn public_key(&self) -> String {
        URL_SAFE_NO_PAD.encode(self.pair.public_key().as_ref())
    }
}

impl std::fmt::Debug for ReceiptSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ReceiptSigner({})", self.public_key())
    }
}

/// Whether `receipt` is the service's signature (public key `public_key`, base64url) of the entry.
pub fn verify_receipt(
    public_key: &str,
    pack_id: &PackId,
    entry_id: &EntryId,
    joined_at: Timestamp,
    receipt: &str,
) -> bool {
    let (Ok(key), Ok(signature)) = (
        URL_SAFE_NO_PAD.decode(public_key),
        URL_SAFE_NO_PAD.decode(receipt),
    ) else {
        return false;
    };
    let message = receipt_message(pack_id, entry_id, joined_at);
    UnparsedPublicKey::new(&ED25519, key)
        .verify(message.as_bytes(), &signature)
        .is_ok()
}

/// What a queued fan's estimate is computed from, as things stand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outlook {
    /// The last position admitted so far.
    pub admitted_through: u64,
    /// Units neither sold nor held.
    pub units_left: u64,
    /// What each admitted fan may buy.
    pub allowance: Allowance,
    /// An admitted fan's window.
    pub pass_seconds: u32,
    /// When the keeper last let fans in (`None`: nobody yet).
    pub last_wave_at: Option<Timestamp>,
}

/// The latest a queued fan at `position` may expect to be admitted, seen at `now`, as things
/// stand: fans are let in by waves of as many fans as the units left serve (`units_left /
/// allowance`, the last one partly covered); the next wave comes at the latest when the windows
/// of the last one end (`lastWaveAt + passSeconds`; now if they have), and each later one a window
/// after that. Fans who buy, lapse or are released early bring a wave sooner, never later; units
/// that sell meanwhile make the waves smaller, which the next answer shows. `None` when no unit is
/// left (the fan waits for units to come back, which nothing predicts).
pub fn estimated_admission_at(
    position: u64,
    outlook: Outlook,
    now: Timestamp,
) -> Option<Timestamp> {
    if outlook.units_left == 0 {
        return None;
    }
    let per_wave = outlook.allowance.fans_for(outlook.units_left).max(1);
    let wave = position
        .saturating_sub(outlook.admitted_through)
        .max(1)
        .div_ceil(per_wave);
    let window = i64::from(outlook.pass_seconds);
    let next = outlook
        .last_wave_at
        .and_then(|at| at.plus_seconds(window))
        .filter(|&end| end > now)
        .unwrap_or(now);
    let later = i64::try_from(wave - 1).ok()?.checked_mul(window)?;
    next.plus_seconds(later)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(text: &str) -> Timestamp {
        Timestamp::parse(text).unwrap()
    }

    #[test]
    fn entry_ids_are_random_and_spread_over_the_shards() {
        let ids: Vec<EntryId> = (0..4096).map(|_| new_entry_id()).collect();
        assert!(ids.iter().all(|id| id.as_str().len() == 32));
        let distinct: std::collections::HashSet<_> = ids.iter().collect();
        assert_eq!(distinct.len(), ids.len());
        let mut per_shard = [0u32; ENTRY_SHARDS as usize];
        for id in &ids {
            per_shard[entry_shard(id) as usize] += 1;
        }
        // 64 per shard on average: every shard gets some, none a crowd.
        assert!(
            per_shard.iter().all(|&n| (20..=120).contains(&n)),
            "{per_shard:?}"
        );
    }

    #[test]
    fn a_receipt_verifies_with_the_published_key_and_nothing_else() {
        let signer = ReceiptSigner::from_seed(&[9u8; 32]).unwrap();
        let pack = PackId::parse("drop").unwrap();
        let entry = EntryId::parse("0123456789abcdef0123456789abcdef").unwrap();
        let at = ts("2026-12-01T17:00:01.5Z");
        let receipt = signer.sign(&pack, &entry, at);
        let key = signer.public_key();
        assert!(verify_receipt(&key, &pack, &entry, at, &receipt));
        let other = EntryId::parse("ffffffffffffffffffffffffffffffff").unwrap();
        assert!(!verify_receipt(&key, &pack, &other, at, &receipt));
        assert!(!verify_receipt(
            &key,
            &pack,
            &entry,
            ts("2026-12-01T17:00:02Z"),
            &receipt
        ));
        let stranger = ReceiptSigner::from_seed(&[8u8; 32]).unwrap().public_key();
        assert!(!verify_receipt(&stranger, &pack, &entry, at, &receipt));
        assert!(ReceiptSigner::from_seed(&[1u8; 31]).is_err());
        assert!(!format!("{signer:?}").contains("090909"), "no seed in logs");
    }

    /// Issue 42, G8: the estimate counts waves of `units_left / allowance` fans, the next when
    /// the last wave's windows end, on a line of several windows.
    #[test]
    fn the_estimate_counts_waves_of_fans_the_units_serve() {
        let now = ts("2026-12-01T18:00:00Z");
        let outlook = |left, last_wave| Outlook {
            admitted_through: 10,
            units_left: left,
            allowance: Allowance::of(Some(2)),
            pass_seconds: 600,
            last_wave_at: last_wave,
        };
        // 10 units, 2 a fan: waves of 5 fans; the last wave came 4 minutes ago.
        let live = outlook(10, Some(ts("2026-12-01T17:56:00Z")));
        let at = |position| estimated_admission_at(position, live, now);
        assert_eq!(at(11), Some(ts("2026-12-01T18:06:00Z")), "the next wave");
        assert_eq!(at(15), Some(ts("2026-12-01T18:06:00Z")));
        assert_eq!(at(16), Some(ts("2026-12-01T18:16:00Z")), "the wave after");
        assert_eq!(at(21), Some(ts("2026-12-01T18:26:00Z")), "the third window");
        assert_eq!(at(26), Some(ts("2026-12-01T18:36:00Z")), "the fourth");
        // The last wave's windows have ended: the next wave is now.
        let ended = outlook(10, Some(ts("2026-12-01T17:40:00Z")));
        assert_eq!(estimated_admission_at(11, ended, now), Some(now));
        assert_eq!(
            estimated_admission_at(16, ended, now),
            Some(ts("2026-12-01T18:10:00Z"))
        );
        // Nobody admitted yet: the first wave is now.
        assert_eq!(
            estimated_admission_at(11, outlook(10, None), now),
            Some(now)
        );
        // One unit left: one fan a wave.
        let one = outlook(1, Some(ts("2026-12-01T17:56:00Z")));
        assert_eq!(
            estimated_admission_at(13, one, now),
            Some(ts("2026-12-01T18:26:00Z"))
        );
        assert_eq!(
            estimated_admission_at(26, outlook(0, None), now),
            None,
            "no unit left"
        );
    }
}
