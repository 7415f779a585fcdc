//! The exclusions of a line ([`Exclusion`]): counted one by one as refusals happen, read summed
//! for the drop's report.

use std::collections::BTreeMap;
use std::future::Future;

use crate::StoreError;
use domain::ids::PackId;
use domain::queue::excluded::Exclusion;

/// Counts one exclusion of `pack_id`'s line for `reason`: one unconditional add on one of
/// [`EXCLUSION_SHARDS`](domain::queue::excluded::EXCLUSION_SHARDS) counters, picked at random,
/// so that no key takes every refusal.
pub trait CountExclusion: Send + Sync {
    fn count_exclusion(
        &self,
        pack_id: &PackId,
        reason: Exclusion,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;
}

/// Every reason of [`Exclusion::ALL`] with its count for `pack_id`'s line (0 when none): the
/// counters summed, one read of all of them.
pub trait ReadExclusions: Send + Sync {
    fn exclusions(
        &self,
        pack_id: &PackId,
    ) -> impl Future<Output = Result<BTreeMap<Exclusion, u64>, StoreError>> + Send;
}
