//! What a warm function keeps of a pack between invocations: its terms once frozen, which of its
//! shares it last found empty, and, for a while, that its whole supply was found empty. Never
//! anything of a user. Each entry only steers which writes are tried: every start is still
//! decided by its transaction's conditions, which catch terms that changed since.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use domain::ids::PackId;
use domain::packs::Pack;
use domain::packs::seed::replaceable;
use domain::purchases::random_shard;
use domain::timestamp::Timestamp;

/// The shortest time an instance answers sold out from memory once it read every share empty:
/// it reads a pack's shares again at most this often (docs/design.md, "Sold out").
pub const SOLD_OUT_RECHECK_SECONDS: i64 = 1;
/// The longest: a unit that comes back other than from a hold that ran out (an operator's
/// repair of a hold set aside) is offered at most this much later by every instance.
pub const SOLD_OUT_MEMORY_SECONDS: i64 = 30;

/// When a unit may next come back to a pack found sold out. Units come back only from holds that
/// run out, so this is the end of the earliest hold still running, when a pass over every share's
/// holds saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Comeback {
    /// The pass stopped before it saw every share's holds.
    Unknown,
    /// No hold runs: nothing can come back.
    Never,
    /// When the earliest hold still running ends.
    At(Timestamp),
}

impl Comeback {
    /// The earlier of two: what a pass over several partitions saw.
    pub(crate) fn earliest(self, other: Comeback) -> Comeback {
        match (self, other) {
            (Comeback::Unknown, _) | (_, Comeback::Unknown) => Comeback::Unknown,
            (Comeback::Never, next) | (next, Comeback::Never) => next,
            (Comeback::At(a), Comeback::At(b)) => Comeback::At(a.min(b)),
        }
    }
}

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
    /// Until when a start answers sold out without reading (request time).
    sold_out_until: Option<Timestamp>,
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

    /// What a read of every share found; a share with units ends any memory of a sell-out.
    pub(crate) fn learn(&self, pack_id: &PackId, shares: &[u64]) {
        self.with(pack_id, |entry| {
            entry.empty = shares.iter().map(|&units| units == 0).collect();
            if shares.iter().any(|&units| units > 0) {
                entry.sold_out_until = None;
            }
        });
    }

    /// Whether a start at `now` answers sold out from memory. Once the memory has passed, the
    /// first start to ask reads the shares again, and the others are answered from memory for
    /// [`SOLD_OUT_RECHECK_SECONDS`] meanwhile: one read per instance, not one per concurrent
    /// request (a refresh that finds units ends the memory at once).
    pub(crate) fn sold_out(&self, pack_id: &PackId, now: Timestamp) -> bool {
        self.with(pack_id, |entry| match entry.sold_out_until {
            Some(until) if now < until => true,
            Some(_) => {
                entry.sold_out_until = now.plus_seconds(SOLD_OUT_RECHECK_SECONDS);
                false
            }
            None => false,
        })
    }

    /// The supply was read empty at `now`: sold out until the next unit may come back, at least
    /// [`SOLD_OUT_RECHECK_SECONDS`], at most [`SOLD_OUT_MEMORY_SECONDS`]. `true` the first time,
    /// when the summary should say 0.
    pub(crate) fn mark_sold_out(&self, pack_id: &PackId, now: Timestamp, next: Comeback) -> bool {
        let (least, most) = (
            now.plus_seconds(SOLD_OUT_RECHECK_SECONDS),
            now.plus_seconds(SOLD_OUT_MEMORY_SECONDS),
        );
        let until = match next {
            Comeback::Unknown => least,
            Comeback::Never => most,
            Comeback::At(end) => most.map(|most| end.min(most)).max(least),
        };
        self.with(pack_id, |entry| {
            entry.sold_out_until = until;
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
