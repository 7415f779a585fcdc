//! A line's exclusion counts in memory, under the store's one lock (one count per line and
//! reason: the shards of DynamoDB spread writes, which a map does not need).

use std::collections::BTreeMap;

use super::MemoryStore;
use crate::StoreError;
use crate::queue_excluded::{CountExclusion, ReadExclusions};
use domain::ids::PackId;
use domain::queue::excluded::Exclusion;

impl CountExclusion for MemoryStore {
    async fn count_exclusion(&self, pack_id: &PackId, reason: Exclusion) -> Result<(), StoreError> {
        *self
            .write()
            .exclusions
            .entry((pack_id.clone(), reason))
            .or_default() += 1;
        Ok(())
    }
}

impl ReadExclusions for MemoryStore {
    async fn exclusions(&self, pack_id: &PackId) -> Result<BTreeMap<Exclusion, u64>, StoreError> {
        let tables = self.read();
        Ok(Exclusion::ALL
            .iter()
            .map(|reason| {
                let count = tables.exclusions.get(&(pack_id.clone(), *reason));
                (*reason, count.copied().unwrap_or(0))
            })
            .collect())
    }
}
