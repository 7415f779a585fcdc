//! The Merkle tree over a closed line's entrants, whose root (`entrantsRoot`) is published at
//! close, before the beacon round's randomness exists: the set cannot change afterwards, and a fan
//! holds a short proof that their entry is in it.
//!
//! The rules are RFC 6962's (Certificate Transparency, section 2.1), over the entry ids sorted by
//! their UTF-8 bytes:
//! - leaf = SHA-256(0x00 || entryId), node = SHA-256(0x01 || left || right): the prefixes keep a
//!   leaf from ever passing for a node (no second-preimage by presenting an inner node as a leaf);
//! - an odd node at the end of a level is promoted to the next level unchanged, not paired with a
//!   copy of itself: duplication makes `[a, b, c]` and `[a, b, c, c]` share a root (Bitcoin's
//!   CVE-2012-2459), promotion does not. Built level by level this is exactly RFC 6962's
//!   recursive split at the largest power of two below N (the tests check Python's recursive
//!   version's roots);
//! - the root of no entrant is SHA-256 of nothing.

use aws_lc_rs::digest;
use serde::{Deserialize, Serialize};

/// Which side of the running hash a proof step's hash goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    /// node = SHA-256(0x01 || hash || running)
    Left,
    /// node = SHA-256(0x01 || running || hash)
    Right,
}

/// One step of a Merkle proof, from the leaf up: the sibling's hash and its side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ProofStep {
    pub side: Side,
    /// 64 lowercase hex digits.
    #[serde(with = "crate::hex::bytes32")]
    #[schema(value_type = String, pattern = "^[0-9a-f]{64}$")]
    pub hash: [u8; 32],
}

fn leaf(entry_id: &str) -> [u8; 32] {
    let mut context = digest::Context::new(&digest::SHA256);
    context.update(&[0x00]);
    context.update(entry_id.as_bytes());
    finish(context)
}

fn node(left: &[u8; 32], right: &[u8; 32]) -> [u8; 32] {
    let mut context = digest::Context::new(&digest::SHA256);
    context.update(&[0x01]);
    context.update(left);
    context.update(right);
    finish(context)
}

fn finish(context: digest::Context) -> [u8; 32] {
    context
        .finish()
        .as_ref()
        .try_into()
        .expect("SHA-256 is 32 bytes")
}

/// The level above `level`: pairs hashed, an odd last node promoted.
fn parent_level(level: &[[u8; 32]]) -> Vec<[u8; 32]> {
    level
        .chunks(2)
        .map(|pair| match pair {
            [left, right] => node(left, right),
            [odd] => *odd,
            _ => unreachable!("chunks of two"),
        })
        .collect()
}

fn leaves(sorted_ids: &[String]) -> Vec<[u8; 32]> {
    sorted_ids.iter().map(|id| leaf(id)).collect()
}

/// The root over `sorted_ids`, which the caller has sorted (bytewise, as `String`'s `Ord`) and
/// deduplicated: the published entrants list is in that order, and the root commits to it.
pub fn root(sorted_ids: &[String]) -> [u8; 32] {
    root_over(leaves(sorted_ids))
}

/// The root of the tree whose nodes at some level are `level` (the leaves, or the roots of
/// aligned subtrees: see [`paged_proof`]).
pub fn root_over(mut level: Vec<[u8; 32]>) -> [u8; 32] {
    if level.is_empty() {
        return finish(digest::Context::new(&digest::SHA256));
    }
    while level.len() > 1 {
        level = parent_level(&level);
    }
    level[0]
}

/// The proof that `sorted_ids[index]` is under [`root`]`(sorted_ids)`: the sibling at each level
/// from the leaf up (a level where the node is promoted adds no step); at most ⌈log2 N⌉ steps.
///
/// # Panics
/// If `index` is not below `sorted_ids.len()`.
pub fn proof(sorted_ids: &[String], index: usize) -> Vec<ProofStep> {
    assert!(index < sorted_ids.len(), "no entrant at index {index}");
    proof_over(leaves(sorted_ids), index)
}

/// The proof that `sorted_ids[index]` is under the root of a tree whose leaves come in pages of
/// `sorted_ids.len()`, a power of two for every page but the last, so that each page is a whole
/// subtree: the steps inside the page (`sorted_ids` is the page's ids, `index` within it), then
/// those from page `page` up the tree over `page_roots` (every page's [`root`]). Each level pairs
/// nodes from the left, so an aligned page's subtree is the tree's own; the last, partial page's
/// root is promoted up to the pages' level unchanged, with no step, as in the whole tree.
///
/// # Panics
/// If `index` or `page` is out of range.
pub fn paged_proof(
    sorted_ids: &[String],
    index: usize,
    page_roots: &[[u8; 32]],
    page: usize,
) -> Vec<ProofStep> {
    assert!(page < page_roots.len(), "no page {page}");
    let mut steps = proof(sorted_ids, index);
    steps.extend(proof_over(page_roots.to_vec(), page));
    steps
}

/// The proof from node `index` of `level` up to the root.
fn proof_over(mut level: Vec<[u8; 32]>, mut index: usize) -> Vec<ProofStep> {
    let mut steps = Vec::new();
    while level.len() > 1 {
        let step = if index % 2 == 1 {
            Some(ProofStep {
                side: Side::Left,
                hash: level[index - 1],
            })
        } else {
            level.get(index + 1).map(|hash| ProofStep {
                side: Side::Right,
                hash: *hash,
            })
        };
        steps.extend(step);
        level = parent_level(&level);
        index /= 2;
    }
    steps
}

/// Whether `proof` leads from `entry_id`'s leaf to `root`.
pub fn verify(root: &[u8; 32], entry_id: &str, proof: &[ProofStep]) -> bool {
    let top = proof
        .iter()
        .fold(leaf(entry_id), |running, step| match step.side {
            Side::Left => node(&step.hash, &running),
            Side::Right => node(&running, &step.hash),
        });
    top == *root
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(count: usize) -> Vec<String> {
        (0..count).map(|i| format!("e{i:02}")).collect()
    }

    fn hex32(text: &str) -> [u8; 32] {
        let mut bytes = [0; 32];
        hex::decode_to_slice(text, &mut bytes).unwrap();
        bytes
    }

    /// Roots of `["e00", ...]` by Python's standard library, with RFC 6962's recursive definition
    /// (split at the largest power of two below n), not this file's level-by-level promotion:
    /// `leaf = sha256(b"\0" + id)`, `node = sha256(b"\1" + l + r)`, `mth([]) = sha256(b"")`.
    #[test]
    fn roots_match_rfc_6962_in_python() {
        for (count, expected) in [
            (
                0,
                "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            ),
            (
                1,
                "4d08bdd5814b3b41540c34b368a800c590d446926af326b70ebe64d7b35eac82",
            ),
            (
                2,
                "a095e334240a3c362816855563799ee4c756cb5faa9566559e3a761336f12ca9",
            ),
            (
                3,
                "30b181460aadddc321ec9d83d2c42a1dcb70e0ad817c1e66a14ac70782fda311",
            ),
            (
                4,
                "9e098b7924074bfafde439c40b3619cdd0601f1b43e0b0ed7dacae0845996b5b",
            ),
            (
                5,
                "9c726be8c4f1b4f0bb92646f40c7dcd589f331f106f4a6c51d775e1aef43c66b",
            ),
            (
                6,
                "3b3636214ca9f1cd18edb45c057d534167de5375054c40e23f0e97477697c794",
            ),
            (
                7,
                "97a67cf825ba3536c1b1106caf1d163ed5067c3f0fd9563adaac99e0c66ab335",
            ),
            (
                8,
                "5665c6c727c51c00bee1116d618634c6a431fd95c6e4ef30ea90f420c9fd5339",
            ),
            (
                9,
                "362891c70988f8ba318722c7f894cf37a94af6dc30df16c481699324e36b28ce",
            ),
            (
                10,
                "433f732ad6441a44dec404a5f71bc8a8ee6d80d97628eeec6f5feb7ed22ee83d",
            ),
        ] {
            assert_eq!(hex::encode(root(&ids(count))), expected, "{count} entrants");
        }
    }

    /// RFC 6962's audit paths (PATH(m, D[0:5])) by the same Python.
    #[test]
    fn proofs_match_rfc_6962_audit_paths() {
        let five = ids(5);
        assert_eq!(
            proof(&five, 2),
            [
                ProofStep {
                    side: Side::Right,
                    hash: hex32("176b6cc8c8ac5f41c502037af1805ace286d3373ad93165428060bac04f26bf8")
                },
                ProofStep {
                    side: Side::Left,
                    hash: hex32("a095e334240a3c362816855563799ee4c756cb5faa9566559e3a761336f12ca9")
                },
                ProofStep {
                    side: Side::Right,
                    hash: hex32("2bfb1b908f3326da670412fc5a26384de0e2aa97b526b4b450c9f8de06f23904")
                },
            ]
        );
        // The fifth leaf is promoted twice: one step, the root of the first four.
        assert_eq!(
            proof(&five, 4),
            [ProofStep {
                side: Side::Left,
                hash: hex32("9e098b7924074bfafde439c40b3619cdd0601f1b43e0b0ed7dacae0845996b5b")
            }]
        );
    }

    #[test]
    fn every_proof_verifies_and_only_for_its_own_entry() {
        for count in 1..=17 {
            let ids = ids(count);
            let top = root(&ids);
            for (index, id) in ids.iter().enumerate() {
                let steps = proof(&ids, index);
                assert!(steps.len() <= count.next_power_of_two().trailing_zeros() as usize);
                assert!(verify(&top, id, &steps), "{count} entrants, index {index}");
                assert!(!verify(&top, "not-an-entrant", &steps));
                if let Some(first) = steps.first() {
                    let mut tampered = steps.clone();
                    tampered[0].hash[0] ^= 1;
                    assert!(!verify(&top, id, &tampered));
                    let mut flipped = steps.clone();
                    flipped[0].side = match first.side {
                        Side::Left => Side::Right,
                        Side::Right => Side::Left,
                    };
                    assert!(!verify(&top, id, &flipped));
                }
            }
        }
    }

    /// Pages of a power of two are the tree's own subtrees: the root over their roots is the
    /// root, and a paged proof is the proof, for a last page full, partial or of one id.
    #[test]
    fn pages_of_a_power_of_two_prove_as_the_whole_tree() {
        for (count, page_size) in [(17, 4), (16, 4), (15, 4), (13, 4), (9, 8), (5, 1), (64, 16)] {
            let all = ids(count);
            let pages: Vec<&[String]> = all.chunks(page_size).collect();
            let roots: Vec<[u8; 32]> = pages.iter().map(|page| root(page)).collect();
            assert_eq!(
                root_over(roots.clone()),
                root(&all),
                "{count} by {page_size}"
            );
            for (at, id) in all.iter().enumerate() {
                let (page, index) = (at / page_size, at % page_size);
                let steps = paged_proof(pages[page], index, &roots, page);
                assert_eq!(steps, proof(&all, at), "{count} by {page_size}, {at}");
                assert!(verify(&root(&all), id, &steps));
            }
        }
    }

    #[test]
    fn a_duplicated_last_entrant_changes_the_root() {
        let three = ids(3);
        let mut four = three.clone();
        four.push(three[2].clone());
        assert_ne!(root(&three), root(&four));
    }

    #[test]
    fn a_proof_step_is_json_with_a_hex_hash() {
        let step = ProofStep {
            side: Side::Left,
            hash: [0xab; 32],
        };
        let json = serde_json::to_string(&step).unwrap();
        assert_eq!(
            json,
            format!(r#"{{"side":"left","hash":"{}"}}"#, "ab".repeat(32))
        );
        assert_eq!(serde_json::from_str::<ProofStep>(&json).unwrap(), step);
    }
}
