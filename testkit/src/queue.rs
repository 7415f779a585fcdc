//! Waiting rooms for tests: a queued pack whose line closed long ago with one of the real
//! quicknet rounds [`crate::drand`] serves (the only rounds a test can draw with drand's
//! signatures: a line open now draws with a round minutes in the future), fans joined directly
//! in the store, and the `queue-keeper` binary's environment.

use domain::beacon::quicknet;
use domain::ids::{PackId, UserId};
use domain::packs::Pack;
use domain::queue::entry::{QueueEntry, ReceiptSigner};
use domain::queue::terms::{BEACON_MARGIN_SECONDS, QueueTerms};
use domain::timestamp::Timestamp;
use store::queue::JoinQueue;

/// A queued pack of `supply` units, `max` a fan, windows of 600 s, whose line opened an hour
/// before it closed, `BEACON_MARGIN_SECONDS` before `round`'s time (so that the terms fix
/// `round`), its sale starting at the close.
///
/// # Panics
/// If the terms do not fix `round` (a mistake in the test).
pub fn closed_for_round(id: &str, supply: u64, max: u32, round: u64) -> Pack {
    let closes_at = Timestamp::from_unix_nanos(
        i128::from(quicknet::time_of(round) - BEACON_MARGIN_SECONDS) * 1_000_000_000,
    )
    .expect("in range");
    let mut pack = crate::packs::active(id, 0);
    (pack.total_supply, pack.remaining) = (supply, supply);
    pack.max_per_user = Some(max);
    pack.sale_starts_at = Some(closes_at);
    pack.queue = Some(QueueTerms {
        opens_at: closes_at.plus_seconds(-3600).expect("in range"),
        closes_at,
        pass_seconds: 600,
    });
    assert_eq!(pack.queue.unwrap().beacon_round(), round);
    pack
}

/// `users` joined `pack_id`'s line directly in the store, as the join writes them (receipts
/// signed with a test key): for a line closed before the test, which no join reaches.
pub async fn join_directly<S: JoinQueue>(store: &S, pack_id: &PackId, users: &[UserId]) {
    let signer = ReceiptSigner::from_seed(&[7; 32]).expect("a 32-byte seed");
    for user in users {
        let entry = QueueEntry::new(pack_id.clone(), user.clone(), Timestamp::now(), &signer);
        store
            .join_queue(&entry)
            .await
            .unwrap_or_else(|e| panic!("{user} joining {pack_id}: {e}"));
    }
}
