//! Seeding a pack: its item, draw inputs and supply shares, in one conditioned transaction.

use std::collections::HashMap;

use aws_sdk_dynamodb::types::{AttributeValue, Delete, Put, TransactWriteItem, Update};

use crate::StoreError;
use crate::dynamo::records::{
    DrawRecord, PACK_VERSION, SCHEMA_VERSION, draw_inputs, pack_item, seeded_attributes,
    share_item, share_key, terms_attributes, whole_number,
};
use crate::dynamo::{Cancellation, DynamoStore, Item, key, number, s};
use crate::packs::{SeedPack, SeedPackError};
use crate::schema::{
    DRAW_SK, ENTITY, PACK_REMAINING, PACK_REVISION, PACK_SK, PK, STARTS_AT, draw_pk, pack_pk,
};
use domain::packs::draw::ServerSeed;
use domain::packs::seed::{SeedWrite, freeze_bound, queue_write};
use domain::packs::{Pack, split_supply};
use domain::timestamp::Timestamp;

/// `SET a = :a, ... REMOVE b, ...` over `attributes`, with their names and values.
pub(in crate::dynamo) struct UpdateExpression {
    set: Vec<String>,
    remove: Vec<String>,
    names: HashMap<String, String>,
    values: HashMap<String, AttributeValue>,
}

impl UpdateExpression {
    pub(in crate::dynamo) fn new<N: Into<String>>(
        attributes: impl IntoIterator<Item = (N, Option<AttributeValue>)>,
    ) -> Self {
        let mut expression = Self {
            set: Vec::new(),
            remove: Vec::new(),
            names: HashMap::new(),
            values: HashMap::new(),
        };
        for (index, (name, value)) in attributes.into_iter().enumerate() {
            let placeholder = format!("#a{index}");
            expression.names.insert(placeholder.clone(), name.into());
            match value {
                Some(value) => {
                    expression.set.push(format!("{placeholder} = :a{index}"));
                    expression.values.insert(format!(":a{index}"), value);
                }
                None => expression.remove.push(placeholder),
            }
        }
        expression
    }

    /// Also sets `name` to `value`, unless the item has it already (a queue's seed and its hash
    /// are set once).
    pub(in crate::dynamo) fn set_once(mut self, name: &str, value: AttributeValue) -> Self {
        let index = self.names.len();
        self.names.insert(format!("#k{index}"), name.to_owned());
        self.values.insert(format!(":k{index}"), value);
        self.set
            .push(format!("#k{index} = if_not_exists(#k{index}, :k{index})"));
        self
    }

    fn text(&self) -> String {
        let mut text = format!("SET {}", self.set.join(", "));
        if !self.remove.is_empty() {
            text.push_str(&format!(" REMOVE {}", self.remove.join(", ")));
        }
        text
    }

    /// The update that also adds `units` to the item's `remaining`, creating it if need be.
    fn into_added(mut self, table: &str, key: Item, units: u64) -> Result<Update, StoreError> {
        self.names
            .insert("#remaining".into(), PACK_REMAINING.into());
        self.values.insert(":units".into(), number(units));
        let expression = format!("{} ADD #remaining :units", self.text());
        Update::builder()
            .table_name(table)
            .set_key(Some(key))
            .update_expression(expression)
            .set_expression_attribute_names(Some(self.names))
            .set_expression_attribute_values(Some(self.values))
            .build()
            .map_err(|e| StoreError::internal_from("update", e))
    }

    /// The update, on no condition of its own (the transaction's other actions carry it).
    pub(in crate::dynamo) fn into_unconditional(
        self,
        table: &str,
        key: Item,
    ) -> Result<Update, StoreError> {
        Update::builder()
            .table_name(table)
            .set_key(Some(key))
            .update_expression(self.text())
            .set_expression_attribute_names(Some(self.names))
            .set_expression_attribute_values((!self.values.is_empty()).then_some(self.values))
            .build()
            .map_err(|e| StoreError::internal_from("update", e))
    }

    pub(in crate::dynamo) fn into_update(
        mut self,
        table: &str,
        key: Item,
        condition: &str,
        values: impl IntoIterator<Item = (&'static str, AttributeValue)>,
    ) -> Result<Update, StoreError> {
        self.names.insert("#pk".into(), PK.into());
        self.values
            .extend(values.into_iter().map(|(k, v)| (k.to_owned(), v)));
        Update::builder()
            .table_name(table)
            .set_key(Some(key))
            .update_expression(self.text())
            .condition_expression(condition)
            .set_expression_attribute_names(Some(self.names))
            .set_expression_attribute_values((!self.values.is_empty()).then_some(self.values))
            .build()
            .map_err(|e| StoreError::internal_from("update", e))
    }
}

impl SeedPack for DynamoStore {
    async fn seed_pack(
        &self,
        pack: &Pack,
        write: SeedWrite,
        revision: u64,
        now: Timestamp,
    ) -> Result<(), SeedPackError> {
        let pack_id = &pack
            .pack_id()
            .map_err(|e| StoreError::internal_from("seeding a pack", e))?;
        let table = &self.table;
        let next = number(revision + 1);
        let put = |item: Item, condition: Option<&str>| {
            let mut put = Put::builder().table_name(table).set_item(Some(item));
            if let Some(condition) = condition {
                put = put
                    .condition_expression(condition)
                    .expression_attribute_names("#pk", PK);
            }
            put.build()
                .map(|put| TransactWriteItem::builder().put(put).build())
                .map_err(|e| StoreError::internal_from("put", e))
        };
        // The pack item's write comes first: it carries the condition the whole write rests on.
        let mut actions = Vec::new();
        match write {
            SeedWrite::Create => {
                let mut draw = DrawRecord::new(pack, &ServerSeed::generate()).into_item();
                draw.extend(key(draw_pk(pack_id), DRAW_SK));
                draw.insert(ENTITY.into(), s("draw"));
                let new = Some("attribute_not_exists(#pk)");
                actions.push(put(pack_item(pack_id, pack, revision + 1), new)?);
                actions.push(put(draw, new)?);
                for (shard, units) in (0..).zip(split_supply(pack.remaining, pack.shard_count())) {
                    actions.push(put(share_item(pack_id, pack, shard, units), new)?);
                }
            }
            SeedWrite::Replace | SeedWrite::Update => {
                let mut attributes = seeded_attributes(pack);
                attributes.push((PACK_REVISION, Some(next)));
                let mut condition = "#pk = :pk AND #rev = :rev".to_owned();
                let mut values = vec![(":pk", s(pack_pk(pack_id))), (":rev", number(revision))];
                let mut expression_names = vec![("#rev", PACK_REVISION)];
                if write == SeedWrite::Replace {
                    // No purchase can exist: the file's `remaining` is the truth, and the write
                    // holds only while the sale is still more than the freeze away.
                    attributes.push((PACK_REMAINING, Some(number(pack.remaining))));
                    condition.push_str(" AND (attribute_not_exists(#starts) OR #starts > :now)");
                    values.push((":now", number(freeze_bound(now).unix_nanos())));
                    expression_names.push(("#starts", STARTS_AT));
                }
                let mut update = UpdateExpression::new(attributes);
                update.names.extend(
                    expression_names
                        .into_iter()
                        .map(|(k, v)| (k.to_owned(), v.to_owned())),
                );
                let pack_update = update.into_update(
                    table,
                    key(pack_pk(pack_id), PACK_SK),
                    &condition,
                    values,
                )?;
                actions.push(TransactWriteItem::builder().update(pack_update).build());
                let draw_update = UpdateExpression::new(draw_inputs(pack)).into_update(
                    table,
                    key(draw_pk(pack_id), DRAW_SK),
                    "attribute_exists(#pk)",
                    [],
                )?;
                actions.push(TransactWriteItem::builder().update(draw_update).build());
                if write == SeedWrite::Replace {
                    // The supply split anew; shares a smaller count no longer has go.
                    let stored = self.stored_shards(pack_id).await?;
                    for (shard, units) in
                        (0..).zip(split_supply(pack.remaining, pack.shard_count()))
                    {
                        actions.push(put(share_item(pack_id, pack, shard, units), None)?);
                    }
                    for shard in pack.shard_count()..stored {
                        let delete = Delete::builder()
                            .table_name(table)
                            .set_key(Some(share_key(pack_id, shard)))
                            .build()
                            .map_err(|e| StoreError::internal_from("delete", e))?;
                        actions.push(TransactWriteItem::builder().delete(delete).build());
                    }
                } else if self.stored_shards(pack_id).await? == 0 {
                    // Stored before the supply had shares: its exact `remaining` is the pack
                    // item's, split over the shares now (the pack's revision, in the condition
                    // above, keeps it from moving meanwhile). Added to what a share may hold
                    // already: a hold of before the deploy, released since, gave its unit back
                    // to share 0.
                    let [stored] = self
                        .batch_get([key(pack_pk(pack_id), PACK_SK)], true)
                        .await?;
                    let remaining = stored
                        .as_ref()
                        .and_then(|item| whole_number(item, PACK_REMAINING))
                        .unwrap_or(0);
                    for (shard, units) in (0..).zip(split_supply(remaining, pack.shard_count())) {
                        let mut attributes = terms_attributes(pack);
                        attributes.push((ENTITY, Some(s("supply"))));
                        attributes.push((SCHEMA_VERSION, Some(number(PACK_VERSION))));
                        let share = UpdateExpression::new(attributes).into_added(
                            table,
                            share_key(pack_id, shard),
                            units,
                        )?;
                        actions.push(TransactWriteItem::builder().update(share).build());
                    }
                } else {
                    // The shares keep their units and take the terms as they are now (a sale
                    // ended early ends on every share).
                    for shard in 0..pack.shard_count() {
                        let share_update = UpdateExpression::new(terms_attributes(pack))
                            .into_update(
                                table,
                                share_key(pack_id, shard),
                                "attribute_exists(#pk)",
                                [],
                            )?;
                        actions.push(TransactWriteItem::builder().update(share_update).build());
                    }
                }
            }
        }
        // The queue's state and seed go with the pack and its draw inputs, in the transaction
        // that carries the pack's condition.
        let queue_actions =
            crate::dynamo::queue::seeding_actions(table, pack_id, queue_write(pack, write, now))?;
        actions.splice(2..2, queue_actions);
        // One transaction takes 100 actions: a pack of more than 96 shares writes the rest in a
        // second one, after the first (the one with the pack's condition) has held.
        let mut chunks = actions.chunks(MAX_TRANSACTION_ACTIONS);
        let first = chunks.next().map(<[_]>::to_vec).unwrap_or_default();
        match self.transact(first).await? {
            None => {}
            Some(reasons) if reasons.iter().any(Cancellation::condition_failed) => {
                return Err(SeedPackError::Changed);
            }
            Some(_) => {
                return Err(StoreError::unavailable(
                    "TransactWriteItems: cancelled by a concurrent transaction",
                )
                .into());
            }
        }
        for rest in chunks {
            if self.transact(rest.to_vec()).await?.is_some() {
                return Err(StoreError::unavailable(format!(
                    "pack {}: shares past the first transaction were not written; run again",
                    pack.id
                ))
                .into());
            }
        }
        Ok(())
    }
}

/// The most actions one `TransactWriteItems` takes.
const MAX_TRANSACTION_ACTIONS: usize = 100;
