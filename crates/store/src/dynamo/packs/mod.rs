//! Packs on DynamoDB: reading a pack (its item and draw inputs) and its supply. The items'
//! mapping is `records/pack.rs`; seeding, listing and the sweep's work have a file each.

use aws_sdk_dynamodb::types::Select;

use crate::StoreError;
use crate::dynamo::records::{corrupt, share_key, share_units, stored_pack, whole_number};
use crate::dynamo::{DynamoStore, Item, classify, key, s};
use crate::packs::{GetPack, ReadSupply, StoredPack, Supply};
use crate::schema::{
    DRAW_SK, GSI2, GSI2_PK, PACK_SHARDS, PACK_SK, SHARE_SOLD, draw_pk, holds_pk, pack_pk,
};
use domain::ids::PackId;
use domain::packs::MAX_SUPPLY_SHARDS;

mod listing;
mod seed;
pub(super) use seed::UpdateExpression;
mod sweep;

impl GetPack for DynamoStore {
    async fn get_pack(&self, pack_id: &PackId) -> Result<Option<StoredPack>, StoreError> {
        let [pack_item, draw_item] = self
            .batch_get(
                [
                    key(pack_pk(pack_id), PACK_SK),
                    key(draw_pk(pack_id), DRAW_SK),
                ],
                false,
            )
            .await?;
        match (pack_item, draw_item) {
            (None, _) => Ok(None),
            (Some(_), None) => Err(corrupt("draw", "missing for a stored pack")),
            (Some(pack_item), Some(draw_item)) => stored_pack(pack_item, draw_item).map(Some),
        }
    }
}

impl DynamoStore {
    /// How many shares the stored pack's supply has (0: no such pack).
    pub(crate) async fn stored_shards(&self, pack_id: &PackId) -> Result<u32, StoreError> {
        let [item] = self
            .batch_get([key(pack_pk(pack_id), PACK_SK)], true)
            .await?;
        Ok(item
            .and_then(|item| whole_number(&item, PACK_SHARDS))
            .and_then(|n| u32::try_from(n).ok())
            .unwrap_or(0))
    }

    /// The items of `keys` (any number), in their order.
    pub(crate) async fn batch_get_all(
        &self,
        keys: Vec<Item>,
        consistent: bool,
    ) -> Result<Vec<Option<Item>>, StoreError> {
        let mut found = Vec::with_capacity(keys.len());
        for chunk in keys.chunks(MAX_SUPPLY_SHARDS as usize) {
            found.extend(self.batch_get_slice(chunk, consistent).await?);
        }
        Ok(found)
    }

    /// The units left in each of a pack's `shards` shares.
    pub(crate) async fn read_shares(
        &self,
        pack_id: &PackId,
        shards: u32,
        consistent: bool,
    ) -> Result<Vec<u64>, StoreError> {
        let keys = (0..shards).map(|k| share_key(pack_id, k)).collect();
        let items = self.batch_get_all(keys, consistent).await?;
        Ok(items
            .iter()
            .map(|item| share_units(item.as_ref()))
            .collect())
    }
}

impl ReadSupply for DynamoStore {
    async fn read_supply(&self, pack_id: &PackId) -> Result<Option<Supply>, StoreError> {
        let shards = self.stored_shards(pack_id).await?;
        if shards == 0 {
            return Ok(None);
        }
        let keys = (0..shards).map(|k| share_key(pack_id, k)).collect();
        let items = self.batch_get_all(keys, true).await?;
        let mut held = 0;
        for shard in 0..shards {
            held += self.count_holds(&holds_pk(pack_id, shard)).await?;
        }
        Ok(Some(Supply {
            shares: items
                .iter()
                .map(|item| share_units(item.as_ref()))
                .collect(),
            held,
            sold: items
                .iter()
                .flatten()
                .filter_map(|item| whole_number(item, SHARE_SOLD))
                .sum(),
        }))
    }
}

impl DynamoStore {
    /// The reserved purchases in a partition of the holds index.
    async fn count_holds(&self, partition: &str) -> Result<u64, StoreError> {
        let (mut count, mut start) = (0, None);
        loop {
            let output = self
                .client
                .query()
                .table_name(&self.table)
                .index_name(GSI2)
                .key_condition_expression("#pk = :holds")
                .expression_attribute_names("#pk", GSI2_PK)
                .expression_attribute_values(":holds", s(partition))
                .select(Select::Count)
                .set_exclusive_start_key(start.take())
                .send()
                .await
                .map_err(|e| classify("Query", e))?;
            count += u64::try_from(output.count).unwrap_or(0);
            match output.last_evaluated_key {
                Some(next) => start = Some(next),
                None => return Ok(count),
            }
        }
    }
}
