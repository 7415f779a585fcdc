//! The sweep's pack work: `remaining` summaries and revealed seeds of listed packs.

use aws_sdk_dynamodb::operation::update_item::UpdateItemError;

use crate::StoreError;
use crate::condition::{Compare, Condition};
use crate::dynamo::Attempts;
use crate::dynamo::records::{corrupt, draw_inputs_from_item, sale_ends_at, text, whole_number};
use crate::dynamo::transaction::{Transaction, update};
use crate::dynamo::{DynamoStore, Item, classify, condition, key, number, s};
use crate::packs::{GetRevealedSeed, PublishRevealedSeeds, RefreshRemaining};
use crate::schema::{
    DRAW_SK, ENDS_AT, GSI1, GSI1_PK, LISTED_PACKS, PACK_REMAINING, PACK_REVEALED_SEED, PACK_SHARDS,
    PACK_SK, PK, draw_pk, pack_pk,
};
use domain::events::money::pack_sold_out;
use domain::ids::PackId;
use domain::packs::draw::ServerSeed;
use domain::packs::seed_revealed;
use domain::timestamp::Timestamp;

/// A listed pack as the sweep sees it: its id, shares, `remaining` summary, sale end and
/// whether its revealed seed is published.
pub(crate) struct ListedSupply {
    pub(crate) pack_id: PackId,
    pub(crate) shards: u32,
    pub(crate) summary: u64,
    ends_at: Option<Timestamp>,
    seed_published: bool,
}

impl DynamoStore {
    /// Every pack in the listing index (active packs, ended ones included), all pages.
    pub(crate) async fn listed_supplies(&self) -> Result<Vec<ListedSupply>, StoreError> {
        let query = self
            .client
            .query()
            .table_name(&self.table)
            .index_name(GSI1)
            .key_condition_expression("#pk = :listed")
            .projection_expression("#id, #shards, #remaining, #ends, #revealed")
            .expression_attribute_names("#pk", GSI1_PK)
            .expression_attribute_names("#id", PK)
            .expression_attribute_names("#shards", PACK_SHARDS)
            .expression_attribute_names("#remaining", PACK_REMAINING)
            .expression_attribute_names("#ends", ENDS_AT)
            .expression_attribute_names("#revealed", PACK_REVEALED_SEED)
            .expression_attribute_values(":listed", s(LISTED_PACKS));
        let mut listed = Vec::new();
        for item in self.query_pages(query).await? {
            let pack_id = text(&item, PK)
                .and_then(|pk| pk.strip_prefix("PACK#"))
                .and_then(|id| PackId::parse(id).ok());
            let shards = whole_number(&item, PACK_SHARDS).and_then(|n| u32::try_from(n).ok());
            match (pack_id, shards, sale_ends_at(&item, "pack")) {
                (Some(pack_id), Some(shards), Ok(ends_at)) => listed.push(ListedSupply {
                    pack_id,
                    shards,
                    summary: whole_number(&item, PACK_REMAINING).unwrap_or(0),
                    ends_at,
                    seed_published: item.contains_key(PACK_REVEALED_SEED),
                }),
                _ => tracing::error!("skipping a listed pack item without its id or shards"),
            }
        }
        Ok(listed)
    }

    /// Sets a pack's `remaining` summary (the pack item must exist).
    pub(crate) async fn write_summary(
        &self,
        pack_id: &PackId,
        remaining: u64,
    ) -> Result<(), StoreError> {
        if remaining == 0 {
            return self.write_sold_out(pack_id).await;
        }
        // Only a change is written: every instance that finds a pack sold out writes its 0, and
        // an unchanged item leaves the listing index (`PACKS#LISTED`, shared by every pack)
        // untouched, where a write of the same value could cost it an entry per instance.
        let written = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(pack_pk(pack_id), PACK_SK)))
            .update_expression("SET #remaining = :remaining")
            .condition_expression("attribute_exists(#pk) AND #remaining <> :remaining")
            .expression_attribute_names("#remaining", PACK_REMAINING)
            .expression_attribute_names("#pk", PK)
            .expression_attribute_values(":remaining", number(remaining))
            .send()
            .await;
        match written {
            Err(error)
                if matches!(
                    error.as_service_error(),
                    Some(UpdateItemError::ConditionalCheckFailedException(_))
                ) =>
            {
                Ok(())
            }
            written => written.map(|_| ()).map_err(|e| classify("UpdateItem", e)),
        }
    }
}

/// The one action of a sell-out's transaction: the summary down to 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct SoldOut;

impl DynamoStore {
    /// A pack's summary set to 0 with its `pack.sold_out`, only where it was above 0: of every
    /// instance and sweep that finds the pack sold out, one writes each sell-out's event
    /// (docs/events.md).
    async fn write_sold_out(&self, pack_id: &PackId) -> Result<(), StoreError> {
        let was_selling =
            Condition::exists(PK).and(Condition::is(PACK_REMAINING, Compare::Gt, 0u64));
        let summary = update(
            &self.table,
            key(pack_pk(pack_id), PACK_SK),
            "SET #remaining = :none",
            &was_selling,
            &[("#remaining", PACK_REMAINING)],
            vec![(":none", number(0))],
        )?;
        let transaction = Transaction::new()
            .with(SoldOut, summary)
            .emit(pack_sold_out(pack_id), Timestamp::now());
        let mut attempts = Attempts::new("sold out");
        loop {
            match self.run(transaction.clone()).await? {
                None => return Ok(()),
                Some(reasons) if reasons.failed(SoldOut) => return Ok(()),
                Some(reasons) => attempts.after(reasons.all()).await?,
            }
        }
    }
}

impl RefreshRemaining for DynamoStore {
    async fn refresh_remaining(&self) -> Result<u64, StoreError> {
        let mut changed = 0;
        for listed in self.listed_supplies().await? {
            let remaining: u64 = self
                .read_shares(&listed.pack_id, listed.shards, false)
                .await?
                .iter()
                .sum();
            if remaining != listed.summary {
                self.write_summary(&listed.pack_id, remaining).await?;
                changed += 1;
            }
        }
        Ok(changed)
    }
}

impl PublishRevealedSeeds for DynamoStore {
    async fn publish_revealed_seeds(&self, now: Timestamp) -> Result<u64, StoreError> {
        let mut published = 0;
        for listed in self.listed_supplies().await? {
            let Some(ends_at) = listed.ends_at else {
                continue;
            };
            if listed.seed_published || !seed_revealed(Some(ends_at), now) {
                continue;
            }
            let [draw] = self
                .batch_get([key(draw_pk(&listed.pack_id), DRAW_SK)], true)
                .await?;
            let seed = draw_inputs_from_item(draw.ok_or_else(|| corrupt("draw", "missing"))?)?.seed;
            // Only while the sale still ends when it was read: an end moved meanwhile (it cannot
            // move once reached, but the read may be old) waits for the next sweep.
            let written = self
                .client
                .update_item()
                .table_name(&self.table)
                .set_key(Some(key(pack_pk(&listed.pack_id), PACK_SK)))
                .update_expression("SET #revealed = :seed")
                .condition_expression("#ends = :ends")
                .expression_attribute_names("#revealed", PACK_REVEALED_SEED)
                .expression_attribute_names("#ends", ENDS_AT)
                .expression_attribute_values(":seed", s(seed.to_hex()))
                .expression_attribute_values(":ends", number(ends_at.unix_nanos()))
                .send()
                .await;
            if condition::written("UpdateItem", written)?.is_some() {
                published += 1;
            }
        }
        Ok(published)
    }
}

impl GetRevealedSeed for DynamoStore {
    async fn revealed_seed(&self, pack_id: &PackId) -> Result<Option<ServerSeed>, StoreError> {
        let output = self
            .client
            .get_item()
            .table_name(&self.table)
            .set_key(Some(key(pack_pk(pack_id), PACK_SK)))
            .projection_expression("#revealed")
            .expression_attribute_names("#revealed", PACK_REVEALED_SEED)
            .send()
            .await
            .map_err(|e| classify("GetItem", e))?;
        Ok(output
            .item
            .as_ref()
            .and_then(|item| text(item, PACK_REVEALED_SEED))
            .and_then(ServerSeed::from_hex))
    }

    async fn revealed_seeds(
        &self,
        pack_ids: &[&PackId],
    ) -> Result<Vec<Option<ServerSeed>>, StoreError> {
        let keys: Vec<Item> = pack_ids
            .iter()
            .map(|id| key(pack_pk(id), PACK_SK))
            .collect();
        Ok(self
            .batch_get_slice(&keys, false)
            .await?
            .iter()
            .map(|item| {
                item.as_ref()
                    .and_then(|item| text(item, PACK_REVEALED_SEED))
                    .and_then(ServerSeed::from_hex)
            })
            .collect())
    }
}
