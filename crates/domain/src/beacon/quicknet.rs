//! drand's quicknet, the League of Entropy's unchained network with a round every 3 seconds
//! (scheme `bls-unchained-g1-rfc9380`: public key on G2, signatures on G1, RFC 9380's
//! hash-to-curve). Its constants are those of its chain info
//! (`https://api.drand.sh/52db9ba70e0cc0f6eaf7803dd07447a1f5477735fd3f661792ba94600c84e971/info`),
//! recorded in `testkit::drand::CHAIN_INFO`; a test recomputes the chain hash from that info,
//! which binds the public key below to the chain hash the relays are asked for.

/// The chain hash, lowercase hex: the first path segment of every relay request.
pub const CHAIN_HASH: &str = "52db9ba70e0cc0f6eaf7803dd07447a1f5477735fd3f661792ba94600c84e971";

/// Unix seconds of round 1.
pub const GENESIS: i64 = 1692803367;

/// Seconds between rounds.
pub const PERIOD: i64 = 3;

/// The group's public key on G2, compressed (`public_key` of the chain info).
pub const PUBLIC_KEY: [u8; 96] = [
    0x83, 0xcf, 0x0f, 0x28, 0x96, 0xad, 0xee, 0x7e, 0xb8, 0xb5, 0xf0, 0x1f, 0xca, 0xd3, 0x91, 0x22,
    0x12, 0xc4, 0x37, 0xe0, 0x07, 0x3e, 0x91, 0x1f, 0xb9, 0x00, 0x22, 0xd3, 0xe7, 0x60, 0x18, 0x3c,
    0x8c, 0x4b, 0x45, 0x0b, 0x6a, 0x0a, 0x6c, 0x3a, 0xc6, 0xa5, 0x77, 0x6a, 0x2d, 0x10, 0x64, 0x51,
    0x0d, 0x1f, 0xec, 0x75, 0x8c, 0x92, 0x1c, 0xc2, 0x2b, 0x0e, 0x17, 0xe6, 0x3a, 0xaf, 0x4b, 0xcb,
    0x5e, 0xd6, 0x63, 0x04, 0xde, 0x9c, 0xf8, 0x09, 0xbd, 0x27, 0x4c, 0xa7, 0x3b, 0xab, 0x4a, 0xf5,
    0xa6, 0xe9, 0xc7, 0x6a, 0x4b, 0xc0, 0x9e, 0x76, 0xea, 0xe8, 0x99, 0x1e, 0xf5, 0xec, 0xe4, 0x5a,
];

/// The latest round whose time has come at `unix_secs` (drand's "current round"); 0 before
/// genesis, when no round exists.
pub fn round_at(unix_secs: i64) -> u64 {
    if unix_secs < GENESIS {
        return 0;
    }
    u64::try_from((unix_secs - GENESIS) / PERIOD).expect("not negative after genesis") + 1
}

/// The Unix second at which `round` is produced: GENESIS + (round - 1) * PERIOD (round 0, which
/// does not exist, is given genesis' time).
pub fn time_of(round: u64) -> i64 {
    let after_genesis = i64::try_from(round.saturating_sub(1)).unwrap_or(i64::MAX / PERIOD);
    GENESIS.saturating_add(after_genesis.saturating_mul(PERIOD))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_and_times_agree() {
        assert_eq!(round_at(GENESIS - 1), 0);
        assert_eq!(round_at(GENESIS), 1);
        assert_eq!(round_at(GENESIS + 2), 1);
        assert_eq!(round_at(GENESIS + 3), 2);
        assert_eq!(time_of(1), GENESIS);
        // Round 1000 came at 2023-08-23T15:59:24Z (genesis 15:09:27 + 999 * 3 s).
        assert_eq!(time_of(1000), 1_692_806_364);
        for t in [
            GENESIS,
            GENESIS + 1,
            GENESIS + 2,
            1_764_000_000,
            1_764_000_001,
        ] {
            let round = round_at(t);
            assert!(time_of(round) <= t && t < time_of(round + 1), "{t}");
        }
        assert_eq!(round_at(time_of(9_367_912)), 9_367_912);
    }

    #[test]
    fn the_public_key_is_the_chain_infos() {
        assert_eq!(
            hex::encode(PUBLIC_KEY),
            "83cf0f2896adee7eb8b5f01fcad3912212c437e0073e911fb90022d3e760183c8c4b450b6a0a6c3ac6a5776a2d1064510d1fec758c921cc22b0e17e63aaf4bcb5ed66304de9cf809bd274ca73bab4af5a6e9c76a4bc09e76eae8991ef5ece45a"
        );
    }
}
