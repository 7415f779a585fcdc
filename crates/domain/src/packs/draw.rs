//! The provably fair draw, `hmac-sha256-v1` (docs/fairness.md has the contract, its argument and
//! the test vectors; `scripts/verify-draw` is the buyers' independent implementation).
//!
//! A pack has a secret 32-byte [`ServerSeed`] whose SHA-256 ([`ServerSeed::commitment`]) is
//! published before the sale. Every number a purchase needs is [`uniform`]: HMAC-SHA256 keyed by
//! the seed over the purchase's inputs ([`DrawInput`]), a label and the slot, with rejection
//! sampling so that every value below the bound is equally likely. [`draw_rarity`] turns one
//! such number into a rarity by walking the pack's odds in listed order; [`draw`] does every slot
//! and picks an item within the drawn rarity's pool.

use std::fmt;

use aws_lc_rs::{digest, hmac, rand};

use super::{Odds, PackItem, TOTAL_BPS};

/// The name of this algorithm, as purchases record it (`fairness.algorithm`).
pub const ALGORITHM: &str = "hmac-sha256-v1";

/// The length of a server seed in bytes.
pub const SEED_LEN: usize = 32;

/// A pack's secret seed. Its [`Debug`](fmt::Debug) output never shows the bytes.
#[derive(Clone, PartialEq, Eq)]
pub struct ServerSeed([u8; SEED_LEN]);

impl fmt::Debug for ServerSeed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ServerSeed(..)")
    }
}

impl ServerSeed {
    /// A fresh seed from the operating system's CSPRNG.
    ///
    /// # Panics
    /// If the operating system's random generator fails, which leaves nothing safe to do.
    pub fn generate() -> Self {
        let mut bytes = [0; SEED_LEN];
        rand::fill(&mut bytes).expect("the operating system's random generator failed");
        Self(bytes)
    }

    pub fn from_bytes(bytes: [u8; SEED_LEN]) -> Self {
        Self(bytes)
    }

    /// The seed of exactly [`SEED_LEN`] bytes; `None` for any other length.
    pub fn from_slice(bytes: &[u8]) -> Option<Self> {
        bytes.try_into().ok().map(Self)
    }

    /// The seed written as exactly 64 hex digits (either case); `None` for anything else.
    pub fn from_hex(text: &str) -> Option<Self> {
        parse_hex32(text).map(Self)
    }

    pub fn as_bytes(&self) -> &[u8; SEED_LEN] {
        &self.0
    }

    /// The seed as 64 lowercase hex digits: what is revealed (`fairness.serverSeed`).
    pub fn to_hex(&self) -> String {
        lower_hex(&self.0)
    }

    /// Lowercase hex of the SHA-256 of the seed's bytes: what is published before the sale
    /// (`fairness.serverSeedHash`).
    pub fn commitment(&self) -> String {
        lower_hex(digest::digest(&digest::SHA256, &self.0).as_ref())
    }
}

/// 32 bytes written as exactly 64 hex digits (either case); `None` for anything else.
pub fn parse_hex32(text: &str) -> Option<[u8; SEED_LEN]> {
    parse_hex(text)?.try_into().ok()
}

/// Bytes written as hex digits (either case, two per byte); `None` for anything else.
pub fn parse_hex(text: &str) -> Option<Vec<u8>> {
    hex::decode(text).ok()
}

/// `bytes` as lowercase hex.
pub fn lower_hex(bytes: &[u8]) -> String {
    hex::encode(bytes)
}

/// What a purchase contributes to its draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DrawInput<'a> {
    pub pack_id: &'a str,
    /// The buyer's account id (the session token's `sub`).
    pub user_id: &'a str,
    /// The buyer's sequence number of purchases of this pack: 1, 2, 3...
    pub nonce: u64,
    /// Chosen by the buyer when the purchase starts.
    pub client_seed: &'a str,
}

/// Why a pack cannot be drawn.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DrawError {
    #[error("the pack lists no odds")]
    NoOdds,
    #[error("the odds add up to {total} basis points, not 10000")]
    OddsTotal { total: u64 },
    #[error("slot {slot} drew rarity {rarity:?}, which has no items")]
    EmptyPool { slot: u32, rarity: String },
}

/// The HMAC key of a seed and one message buffer, reused for every number of a purchase.
struct Stream<'a> {
    key: hmac::Key,
    input: &'a DrawInput<'a>,
    message: Vec<u8>,
}

impl<'a> Stream<'a> {
    fn new(seed: &ServerSeed, input: &'a DrawInput<'a>) -> Self {
        let capacity = 64 + input.pack_id.len() + input.user_id.len() + input.client_seed.len();
        Self {
            key: hmac::Key::new(hmac::HMAC_SHA256, &seed.0),
            input,
            message: Vec::with_capacity(capacity),
        }
    }

    fn uniform(&mut self, label: &str, slot: u32, bound: u64) -> u64 {
        assert!(bound >= 1, "uniform needs a bound of at least 1");
        let (mut nonce, mut slot_number, mut decimal) = (
            itoa::Buffer::new(),
            itoa::Buffer::new(),
            itoa::Buffer::new(),
        );
        let message = &mut self.message;
        message.clear();
        for part in [
            label,
            self.input.pack_id,
            self.input.user_id,
            nonce.format(self.input.nonce),
            self.input.client_seed,
            slot_number.format(slot),
        ] {
            message.extend_from_slice(part.as_bytes());
            message.push(b'\n');
        }
        let prefix = message.len();
        // The largest multiple of `bound` that is at most 2^64 (2^64 itself when `bound` is a
        // power of two): below it, every remainder is equally likely.
        let limit = u128::from(bound) * ((1u128 << 64) / u128::from(bound));
        let mut attempt: u64 = 0;
        loop {
            message.truncate(prefix);
            message.extend_from_slice(decimal.format(attempt).as_bytes());
            let tag = hmac::sign(&self.key, message);
            let mut first = [0; 8];
            first.copy_from_slice(&tag.as_ref()[..8]);
            let x = u64::from_be_bytes(first);
            if u128::from(x) < limit {
                return x % bound;
            }
            attempt += 1;
        }
    }
}

/// A number below `bound`, every value equally likely, determined by the seed, `label`, the
/// purchase's inputs and `slot` (docs/fairness.md).
///
/// # Panics
/// If `bound` is 0.
pub fn uniform(
    seed: &ServerSeed,
    label: &str,
    input: &DrawInput<'_>,
    slot: u32,
    bound: u64,
) -> u64 {
    Stream::new(seed, input).uniform(label, slot, bound)
}

fn check_odds(odds: &[Odds]) -> Result<(), DrawError> {
    if odds.is_empty() {
        return Err(DrawError::NoOdds);
    }
    let total: u64 = odds.iter().map(|o| u64::from(o.chance_bps)).sum();
    if total != u64::from(TOTAL_BPS) {
        return Err(DrawError::OddsTotal { total });
    }
    Ok(())
}

/// The index of the first odds whose running sum of `chanceBps`, in listed order, exceeds `r`.
/// `r` is below the total, which [`check_odds`] made 10000.
fn walk_odds(odds: &[Odds], r: u64) -> usize {
    let mut running: u64 = 0;
    for (index, o) in odds.iter().enumerate() {
        running += u64::from(o.chance_bps);
        if running > r {
            return index;
        }
    }
    unreachable!("r is below the odds' total")
}

fn rarity_of(stream: &mut Stream<'_>, odds: &[Odds], slot: u32) -> usize {
    walk_odds(odds, stream.uniform("rarity", slot, u64::from(TOTAL_BPS)))
}

/// Index into `odds` of the rarity drawn for `slot`.
pub fn draw_rarity(
    seed: &ServerSeed,
    odds: &[Odds],
    input: &DrawInput<'_>,
    slot: u32,
) -> Result<usize, DrawError> {
    check_odds(odds)?;
    Ok(rarity_of(&mut Stream::new(seed, input), odds, slot))
}

/// Indices into `items`, one per slot 0..items_per_pack.
pub fn draw(
    seed: &ServerSeed,
    odds: &[Odds],
    items: &[PackItem],
    items_per_pack: u32,
    input: &DrawInput<'_>,
) -> Result<Vec<usize>, DrawError> {
    check_odds(odds)?;
    let mut stream = Stream::new(seed, input);
    let mut drawn = Vec::with_capacity(items_per_pack as usize);
    for slot in 0..items_per_pack {
        let rarity = &odds[rarity_of(&mut stream, odds, slot)].rarity;
        let in_pool = |item: &&PackItem| item.rarity == *rarity;
        let pool_len = items.iter().filter(in_pool).count() as u64;
        if pool_len == 0 {
            return Err(DrawError::EmptyPool {
                slot,
                rarity: rarity.clone(),
            });
        }
        let i = stream.uniform("item", slot, pool_len) as usize;
        let (index, _) = items
            .iter()
            .enumerate()
            .filter(|(_, item)| in_pool(item))
            .nth(i)
            .expect("i is below the pool's length");
        drawn.push(index);
    }
    Ok(drawn)
}

#[cfg(test)]
mod tests;
