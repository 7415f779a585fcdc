//! The waiting room's draw (docs/fairness.md, "The queue"): once the line is closed and the
//! beacon round's randomness exists, every entry's order key is
//! `HMAC-SHA256(key = SHA-256(seed || randomness), message = entryId)` and positions 1..N go by
//! ascending key. The seed was committed (its SHA-256 published) before the line opened, and the
//! entrant set (its Merkle root) before the randomness existed, so neither the service nor a fan
//! can choose a key; `scripts/verify-queue` recomputes the same order.

use aws_lc_rs::{digest, hmac};

/// The HMAC key of a draw: SHA-256(seed || randomness).
fn draw_key(seed: &[u8; 32], randomness: &[u8; 32]) -> hmac::Key {
    let mut context = digest::Context::new(&digest::SHA256);
    context.update(seed);
    context.update(randomness);
    hmac::Key::new(hmac::HMAC_SHA256, context.finish().as_ref())
}

fn key_of(key: &hmac::Key, entry_id: &str) -> [u8; 32] {
    hmac::sign(key, entry_id.as_bytes())
        .as_ref()
        .try_into()
        .expect("HMAC-SHA256 is 32 bytes")
}

/// The order key of one entry: `HMAC-SHA256(key = SHA-256(seed || randomness), entry_id)`.
pub fn order_key(seed: &[u8; 32], randomness: &[u8; 32], entry_id: &str) -> [u8; 32] {
    key_of(&draw_key(seed, randomness), entry_id)
}

/// The entries in position order: position 1 is index 0. Keys are compared as big-endian
/// bytes; two equal keys (a SHA-256 collision, never seen) fall back to the entry ids' order, so
/// that the order is a function of the set whatever order `entry_ids` comes in.
pub fn draw_order<'a>(
    seed: &[u8; 32],
    randomness: &[u8; 32],
    entry_ids: &'a [String],
) -> Vec<&'a str> {
    let key = draw_key(seed, randomness);
    // Each key once (200,000 entrants: 200,000 HMACs), not once per comparison.
    let mut keyed: Vec<([u8; 32], &str)> = entry_ids
        .iter()
        .map(|id| (key_of(&key, id), id.as_str()))
        .collect();
    keyed.sort_unstable();
    keyed.into_iter().map(|(_, id)| id).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seed() -> [u8; 32] {
        std::array::from_fn(|i| i as u8)
    }

    fn randomness() -> [u8; 32] {
        std::array::from_fn(|i| 32 + i as u8)
    }

    /// Known answers from Python's standard library, not from this code:
    /// `k = hashlib.sha256(bytes(range(32)) + bytes(range(32, 64))).digest()`,
    /// `hmac.new(k, entry_id.encode(), hashlib.sha256).hexdigest()`.
    #[test]
    fn order_keys_match_python() {
        for (entry_id, expected) in [
            (
                "a",
                "794bfa9e0437063763b2c653a2c32d9d9c409ff807e18cf9cc86d9ec5ddfcbe9",
            ),
            (
                "entry-1",
                "e79bca27593726e11ee63d549ae1286fd7125b3a3b228bfaf42689df5a0cefa7",
            ),
            (
                "01JDX0000000000000000000AA",
                "d1b41834e6db2dafac646ea0c8c1a3586a468e16b9f29c7a5537bfd055f07a21",
            ),
        ] {
            assert_eq!(
                hex::encode(order_key(&seed(), &randomness(), entry_id)),
                expected
            );
        }
    }

    /// Python: `sorted(ids, key=lambda e: hmac.new(k, e.encode(), hashlib.sha256).digest())`
    /// for `ids = ["e00", ..., "e09"]`.
    #[test]
    fn the_order_matches_python_whatever_the_input_order() {
        let expected = [
            "e01", "e08", "e05", "e09", "e04", "e06", "e03", "e00", "e07", "e02",
        ];
        let mut ids: Vec<String> = (0..10).map(|i| format!("e{i:02}")).collect();
        assert_eq!(draw_order(&seed(), &randomness(), &ids), expected);
        ids.reverse();
        assert_eq!(draw_order(&seed(), &randomness(), &ids), expected);
    }

    /// The same in Python with quicknet's real round 1000 as the randomness (docs/fairness.md).
    #[test]
    fn the_order_under_a_real_round_matches_python() {
        let mut randomness = [0; 32];
        hex::decode_to_slice(
            "fe290beca10872ef2fb164d2aa4442de4566183ec51c56ff3cd603d930e54fdd",
            &mut randomness,
        )
        .unwrap();
        let ids: Vec<String> = (0..10).map(|i| format!("e{i:02}")).collect();
        assert_eq!(
            draw_order(&seed(), &randomness, &ids),
            [
                "e06", "e02", "e09", "e04", "e05", "e00", "e08", "e07", "e01", "e03"
            ]
        );
    }

    #[test]
    fn another_randomness_gives_another_order() {
        let ids: Vec<String> = (0..10).map(|i| format!("e{i:02}")).collect();
        let mut other = randomness();
        other[0] ^= 1;
        assert_ne!(
            draw_order(&seed(), &randomness(), &ids),
            draw_order(&seed(), &other, &ids)
        );
        assert!(draw_order(&seed(), &other, &[]).is_empty());
    }
}
