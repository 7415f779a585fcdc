//! A line's exclusion counters on DynamoDB (`QUEUE#<packId>#EXCLUDED#<k>` / `EXCLUDED`, one
//! numeric attribute per reason): a refusal is one unconditional `UpdateItem` `ADD` (1 write
//! unit) on one of 64 keys picked at random; the report reads all 64 in one `BatchGetItem`,
//! eventually consistent (32 read units, once the sale is over and cached publicly for 5 s).

use std::collections::BTreeMap;

use super::records::{ABUSE_VERSION, SCHEMA_VERSION, check_version, whole_number};
use super::{DynamoStore, classify, key, number, s};
use crate::StoreError;
use crate::queue_excluded::{CountExclusion, ReadExclusions};
use crate::schema::{ENTITY, EXCLUSION_SK, exclusion_pk};
use domain::ids::PackId;
use domain::purchases::random_shard;
use domain::queue::excluded::{EXCLUSION_SHARDS, Exclusion};

impl CountExclusion for DynamoStore {
    async fn count_exclusion(&self, pack_id: &PackId, reason: Exclusion) -> Result<(), StoreError> {
        let shard = random_shard(EXCLUSION_SHARDS);
        self.client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(exclusion_pk(pack_id, shard), EXCLUSION_SK)))
            .update_expression("SET #entity = :entity, #sv = :sv ADD #n :one")
            .expression_attribute_names("#entity", ENTITY)
            .expression_attribute_names("#sv", SCHEMA_VERSION)
            .expression_attribute_names("#n", reason.as_str())
            .expression_attribute_values(":entity", s("excluded"))
            .expression_attribute_values(":sv", number(ABUSE_VERSION))
            .expression_attribute_values(":one", number(1))
            .send()
            .await
            .map(drop)
            .map_err(|e| classify("UpdateItem", e))
    }
}

impl ReadExclusions for DynamoStore {
    async fn exclusions(&self, pack_id: &PackId) -> Result<BTreeMap<Exclusion, u64>, StoreError> {
        let keys: Vec<_> = (0..EXCLUSION_SHARDS)
            .map(|shard| key(exclusion_pk(pack_id, shard), EXCLUSION_SK))
            .collect();
        let mut counts: BTreeMap<Exclusion, u64> =
            Exclusion::ALL.iter().map(|reason| (*reason, 0)).collect();
        for item in self
            .batch_get_slice(&keys, false)
            .await?
            .into_iter()
            .flatten()
        {
            check_version(&item, "exclusion counter", ABUSE_VERSION)?;
            for (reason, count) in &mut counts {
                *count += whole_number(&item, reason.as_str()).unwrap_or(0);
            }
        }
        Ok(counts)
    }
}
