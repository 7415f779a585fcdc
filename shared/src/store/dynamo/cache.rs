//! What a warm function keeps of a pack between invocations: its terms once frozen, which of its
//! shares it last found empty, and, for a moment, that its whole supply was found empty. Never
//! anything of a user. Each entry only steers which writes are tried: every start is still
//! decided by its transaction's conditions, which catch terms that changed since.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::ids::PackId;
use crate::packs::Pack;
use crate::packs::seed::replaceable;
use crate::purchases::random_shard;
use crate::timestamp::Timestamp;

/// How long an instance answers sold out without reading a pack's shares again, once it read
/// them all empty and found no dead hold to release: a drop's sold-out presses then read each
/// share at most once a second per instance (BENCHMARKS.md, capacity), and a unit that comes back
/// meanwhile is offered at most this much later by that instance.
pub const SOLD_OUT_MEMORY: Duration = Duration::from_secs(1);

#[derive(Debug, Default)]
pub(crate) struct PackCache {
    packs: Mutex<HashMap<PackId, Entry>>,
}

#[derive(Debug, Default)]
struct Entry {
    /// The pack as read, once its terms are frozen.
    terms: Option<Pack>,
    /// Shares last seen empty.
    empty: Vec<bool>,
    sold_out_until: Option<Instant>,
    /// Whether this instance has written a summary of 0 for the pack.
    summary_zeroed: bool,
}

impl PackCache {
    fn with<T>(&self, pack_id: &PackId, f: impl FnOnce(&mut Entry) -> T) -> T {
        let mut packs = self.packs.lock().unwrap_or_else(PoisonError::into_inner);
        f(packs.entry(pack_id.clone()).or_default())
    }

    /// The pack's terms, when kept.
    pub(crate) fn terms(&self, pack_id: &PackId) -> Option<Pack> {
        self.with(pack_id, |entry| entry.terms.clone())
    }

    /// Keeps `pack`'s terms if they are frozen at `now` (seeding can no longer replace them).
    pub(crate) fn keep_terms(&self, pack_id: &PackId, pack: &Pack, now: Timestamp) {
        if !replaceable(pack, now) {
            self.with(pack_id, |entry| entry.terms = Some(pack.clone()));
        }
    }

    pub(crate) fn forget_terms(&self, pack_id: &PackId) {
        self.with(pack_id, |entry| entry.terms = None);
    }

    /// A share to try first: a random one of those not last seen empty; none when every share
    /// was, as a try would then most likely be a write refused (2 write units, a round trip)
    /// before the read of every share that decides.
    pub(crate) fn pick_shard(&self, pack_id: &PackId, shards: u32) -> Option<u32> {
        self.with(pack_id, |entry| {
            let open: Vec<u32> = (0..shards)
                .filter(|&k| !entry.empty.get(k as usize).copied().unwrap_or(false))
                .collect();
            let n = u32::try_from(open.len()).unwrap_or(u32::MAX);
            (n > 0).then(|| open[random_shard(n) as usize])
        })
    }

    pub(crate) fn mark_empty(&self, pack_id: &PackId, shard: u32) {
        self.with(pack_id, |entry| {
            let at = shard as usize;
            if entry.empty.len() <= at {
                entry.empty.resize(at + 1, false);
            }
            entry.empty[at] = true;
        });
    }

    /// What a read of every share found.
    pub(crate) fn learn(&self, pack_id: &PackId, shares: &[u64]) {
        self.with(pack_id, |entry| {
            entry.empty = shares.iter().map(|&units| units == 0).collect();
        });
    }

    pub(crate) fn sold_out(&self, pack_id: &PackId) -> bool {
        self.with(pack_id, |entry| {
            entry
                .sold_out_until
                .is_some_and(|until| Instant::now() < until)
        })
    }

    /// The supply was read empty; `true` the first time, when the summary should say 0.
    pub(crate) fn mark_sold_out(&self, pack_id: &PackId) -> bool {
        self.with(pack_id, |entry| {
            entry.sold_out_until = Some(Instant::now() + SOLD_OUT_MEMORY);
            !std::mem::replace(&mut entry.summary_zeroed, true)
        })
    }

    /// A unit went back (a release by this instance): its pack is no longer sold out here.
    pub(crate) fn unit_returned(&self, pack_id: &PackId, shard: u32) {
        self.with(pack_id, |entry| {
            entry.sold_out_until = None;
            entry.summary_zeroed = false;
            if let Some(empty) = entry.empty.get_mut(shard as usize) {
                *empty = false;
            }
        });
    }
}
