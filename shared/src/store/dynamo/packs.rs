//! Packs on DynamoDB: the pack item (small: every purchase writes it) and its draw inputs.

use std::collections::HashMap;

use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::types::{AttributeValue, Delete, Put, Select, TransactWriteItem, Update};

use super::records::{
    DrawRecord, PACK_VERSION, SCHEMA_VERSION, check_version, draw_inputs_from_item, json_text,
};
use super::{Cancellation, DynamoStore, Item, classify, key, number, s};
use crate::ids::{LeagueId, PackId, TeamId};
use crate::packs::document::PackDocument;
use crate::packs::draw::ServerSeed;
use crate::packs::listing::{ListingKey, PackFilter, Page, PageRequest};
use crate::packs::seed::{SeedWrite, freeze_bound, queue_write};
use crate::packs::seed_revealed;
use crate::packs::{MAX_SUPPLY_SHARDS, Pack, split_supply};
use crate::queue::terms::QueueTerms;
use crate::store::StoreError;
use crate::store::packs::{
    GetPack, GetRevealedSeed, ListActivePacks, PublishRevealedSeeds, ReadSupply, RefreshRemaining,
    SeedPack, SeedPackError, StoredPack, Supply,
};
use crate::store::schema::{
    DRAW_ITEMS, DRAW_ITEMS_PER_PACK, DRAW_ODDS, DRAW_SK, ENDS_AT, ENTITY, GSI1, GSI1_PK, GSI1_SK,
    GSI2, GSI2_PK, GSI2_SK, GSI3, GSI3_PK, GSI3_SK, LISTED_PACKS, PACK_AMOUNT, PACK_CURRENCY,
    PACK_DOC, PACK_MAX_PER_USER, PACK_QUEUE, PACK_REMAINING, PACK_REVEALED_SEED, PACK_REVISION,
    PACK_SHARDS, PACK_SK, PACK_STATUS, PK, QUEUE_CLOSES_AT, QUEUE_OPENS_AT, QUEUE_PASS_SECONDS,
    SHARE_SOLD, SK, STARTS_AT, SUPPLY_SK, draw_pk, holds_pk, league_pk, pack_pk, supply_pk,
    team_pk,
};
use crate::timestamp::Timestamp;

/// The terms a start is conditioned on, each `Some` to set or `None` to remove: the pack item
/// and every share of its supply carry them, so that a start's transaction touches one share.
pub(crate) fn terms_attributes(pack: &Pack) -> Vec<(&'static str, Option<AttributeValue>)> {
    vec![
        (PACK_STATUS, Some(s(pack.status.as_str()))),
        (
            STARTS_AT,
            pack.sale_starts_at.map(|at| number(at.unix_nanos())),
        ),
        (ENDS_AT, pack.sale_ends_at.map(|at| number(at.unix_nanos()))),
        (PACK_AMOUNT, Some(number(pack.price.amount))),
        (PACK_CURRENCY, Some(s(&pack.price.currency))),
        (PACK_MAX_PER_USER, pack.max_per_user.map(number)),
        (
            PACK_QUEUE,
            pack.queue.map(|queue| queue_terms_value(&queue)),
        ),
    ]
}

/// A pack's queue terms as the pack item and its shares hold them (a start on a queued pack is
/// conditioned on the fan's admission): instants in nanoseconds, for conditions.
fn queue_terms_value(queue: &QueueTerms) -> AttributeValue {
    AttributeValue::M(HashMap::from([
        (
            QUEUE_OPENS_AT.to_owned(),
            number(queue.opens_at.unix_nanos()),
        ),
        (
            QUEUE_CLOSES_AT.to_owned(),
            number(queue.closes_at.unix_nanos()),
        ),
        (QUEUE_PASS_SECONDS.to_owned(), number(queue.pass_seconds)),
    ]))
}

/// The seeded attributes of a pack item, each `Some` to set or `None` to remove: everything but
/// the keys, `remaining` and `rev`.
fn seeded_attributes(pack: &Pack) -> Vec<(&'static str, Option<AttributeValue>)> {
    let listing = ListingKey::of(pack);
    let mut attributes = vec![
        (ENTITY, Some(s("pack"))),
        (SCHEMA_VERSION, Some(number(PACK_VERSION))),
        (PACK_DOC, Some(s(PackDocument::of(pack).fields()))),
        (PACK_SHARDS, Some(number(pack.shard_count()))),
        (GSI1_PK, listing.as_ref().map(|_| s(LISTED_PACKS))),
        (GSI1_SK, listing.as_ref().map(|key| s(key.as_str()))),
    ];
    // The packs of its league and of its team: the same sparse entry, in the other indexes.
    // (Seed files hold ids of the id grammar: a pack's league and team parse.)
    let listed_under = |partition: Option<String>| {
        listing
            .as_ref()
            .zip(partition)
            .map(|(key, partition)| (s(partition), s(key.as_str())))
            .unzip()
    };
    let league = pack
        .league_id
        .as_deref()
        .and_then(|id| LeagueId::parse(id).ok());
    let team = pack
        .team_id
        .as_deref()
        .and_then(|id| TeamId::parse(id).ok());
    let (league_pk_value, league_sk_value) = listed_under(league.as_ref().map(league_pk));
    let (team_pk_value, team_sk_value) = listed_under(team.as_ref().map(team_pk));
    attributes.extend([
        (GSI2_PK, league_pk_value),
        (GSI2_SK, league_sk_value),
        (GSI3_PK, team_pk_value),
        (GSI3_SK, team_sk_value),
    ]);
    attributes.extend(terms_attributes(pack));
    attributes
}

/// The item of share `shard` of `pack`'s supply, holding `remaining` units.
fn share_item(pack_id: &PackId, pack: &Pack, shard: u32, remaining: u64) -> Item {
    let mut item: Item = terms_attributes(pack)
        .into_iter()
        .filter_map(|(name, value)| Some((name.to_owned(), value?)))
        .collect();
    item.extend(share_key(pack_id, shard));
    item.insert(ENTITY.into(), s("supply"));
    item.insert(SCHEMA_VERSION.into(), number(PACK_VERSION));
    item.insert(PACK_REMAINING.into(), number(remaining));
    item
}

pub(crate) fn share_key(pack_id: &PackId, shard: u32) -> Item {
    key(supply_pk(pack_id, shard), SUPPLY_SK)
}

/// The units left in a share's item (0 when it has none).
pub(crate) fn share_units(item: Option<&Item>) -> u64 {
    item.and_then(|item| whole_number(item, PACK_REMAINING))
        .unwrap_or(0)
}

/// The whole item of a pack (`pack_id`) at `revision`: listable packs get the index keys; others
/// have none, so the sparse index never holds them.
pub fn pack_item(pack_id: &PackId, pack: &Pack, revision: u64) -> Item {
    let mut item: Item = seeded_attributes(pack)
        .into_iter()
        .filter_map(|(name, value)| Some((name.to_owned(), value?)))
        .collect();
    item.insert(PK.into(), s(pack_pk(pack_id)));
    item.insert(SK.into(), s(PACK_SK));
    item.insert(PACK_REMAINING.into(), number(pack.remaining));
    item.insert(PACK_REVISION.into(), number(revision));
    item
}

/// The document of a pack item (or of its projection holding `doc` and `remaining`).
pub fn document_from_item(item: &mut Item) -> Result<PackDocument, StoreError> {
    let doc = match item.remove(PACK_DOC) {
        Some(AttributeValue::S(doc)) => doc,
        _ => return Err(corrupt("pack", "no `doc` string")),
    };
    let remaining = whole_number(item, PACK_REMAINING)
        .ok_or_else(|| corrupt("pack", "no whole `remaining`"))?;
    PackDocument::from_stored(doc, remaining).map_err(|e| corrupt("pack", &e.to_string()))
}

fn corrupt(what: &str, problem: &str) -> StoreError {
    StoreError::internal(format!("{what} item: {problem}"))
}

pub(crate) fn whole_number(item: &Item, name: &str) -> Option<u64> {
    item.get(name)
        .and_then(|value| value.as_n().ok())
        .and_then(|text| text.parse().ok())
}

fn text<'a>(item: &'a Item, name: &str) -> Option<&'a str> {
    item.get(name)
        .and_then(|value| value.as_s().ok())
        .map(String::as_str)
}

/// The draw inputs of a pack that may change before its sale (its seed is set once, apart).
fn draw_inputs(pack: &Pack) -> [(&'static str, Option<AttributeValue>); 4] {
    [
        (DRAW_ITEMS, Some(s(json_text(&pack.items)))),
        (DRAW_ODDS, Some(s(json_text(&pack.odds)))),
        (DRAW_ITEMS_PER_PACK, Some(number(pack.items_per_pack))),
        (ENDS_AT, pack.sale_ends_at.map(|at| number(at.unix_nanos()))),
    ]
}

/// `SET a = :a, ... REMOVE b, ...` over `attributes`, with their names and values.
pub(super) struct UpdateExpression {
    set: Vec<String>,
    remove: Vec<String>,
    names: HashMap<String, String>,
    values: HashMap<String, AttributeValue>,
}

impl UpdateExpression {
    pub(super) fn new<N: Into<String>>(
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
    pub(super) fn set_once(mut self, name: &str, value: AttributeValue) -> Self {
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
    pub(super) fn into_unconditional(self, table: &str, key: Item) -> Result<Update, StoreError> {
        Update::builder()
            .table_name(table)
            .set_key(Some(key))
            .update_expression(self.text())
            .set_expression_attribute_names(Some(self.names))
            .set_expression_attribute_values((!self.values.is_empty()).then_some(self.values))
            .build()
            .map_err(|e| StoreError::internal_from("update", e))
    }

    pub(super) fn into_update(
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

/// The index a page of `filter`'s packs is read from, with its key attributes and the
/// partition holding them: a team's packs (its league's ones among them, when both are asked,
/// are filtered on the item's league entry), a league's, or every listed pack.
fn listing_index(filter: &PackFilter) -> (&'static str, &'static str, &'static str, String) {
    match (&filter.team, &filter.league) {
        (Some(team), _) => (GSI3, GSI3_PK, GSI3_SK, team_pk(team)),
        (None, Some(league)) => (GSI2, GSI2_PK, GSI2_SK, league_pk(league)),
        (None, None) => (GSI1, GSI1_PK, GSI1_SK, LISTED_PACKS.to_owned()),
    }
}

impl ListActivePacks for DynamoStore {
    async fn list_active_packs(&self, request: &PageRequest) -> Result<Page, StoreError> {
        let (index, index_pk, index_sk, partition) = listing_index(&request.filter);
        // One more than asked, to know without a second call whether another page follows.
        let read_limit = i32::try_from(request.limit + 1).unwrap_or(i32::MAX);
        let after = request
            .after
            .as_ref()
            .map(|key| Ok::<_, StoreError>((key, listed_pack_id(key.pack_id())?)))
            .transpose()?;
        let exclusive_start = after.map(|(key, pack_id)| {
            HashMap::from([
                (index_pk.to_owned(), s(partition.as_str())),
                (index_sk.to_owned(), s(key.as_str())),
                (PK.to_owned(), s(pack_pk(&pack_id))),
                (SK.to_owned(), s(PACK_SK)),
            ])
        });
        let mut filter = "(attribute_not_exists(#ends) OR #ends > :now)".to_owned();
        let mut names = HashMap::from([
            ("#pk".to_owned(), index_pk.to_owned()),
            ("#sk".to_owned(), index_sk.to_owned()),
            ("#ends".to_owned(), ENDS_AT.to_owned()),
            ("#doc".to_owned(), PACK_DOC.to_owned()),
            ("#remaining".to_owned(), PACK_REMAINING.to_owned()),
        ]);
        let mut values = HashMap::from([
            (":listed".to_owned(), s(partition.as_str())),
            (
                ":started".to_owned(),
                s(ListingKey::started_bound(request.now)),
            ),
            (":now".to_owned(), number(request.now.unix_nanos())),
        ]);
        if let (Some(_), Some(league)) = (&request.filter.team, &request.filter.league) {
            filter.push_str(" AND #league = :league");
            names.insert("#league".into(), GSI2_PK.into());
            values.insert(":league".into(), s(league_pk(league)));
        }
        let output = self
            .client
            .query()
            .table_name(&self.table)
            .index_name(index)
            .key_condition_expression("#pk = :listed AND #sk >= :started")
            .filter_expression(filter)
            .projection_expression("#doc, #remaining, #sk")
            .set_expression_attribute_names(Some(names))
            .set_expression_attribute_values(Some(values))
            .limit(read_limit)
            .set_exclusive_start_key(exclusive_start)
            .send()
            .await
            .map_err(|e| classify("Query", e))?;

        let mut items = output.items.unwrap_or_default().into_iter();
        let mut packs = Vec::with_capacity(items.len().min(request.limit));
        let mut last_key = None;
        while packs.len() < request.limit {
            let Some(mut item) = items.next() else { break };
            match document_from_item(&mut item) {
                Ok(document) => {
                    packs.push(document);
                    last_key = item.remove(index_sk);
                }
                // One corrupt item must not hide every other pack.
                Err(error) => tracing::error!(error = %error, "skipping an unreadable pack item"),
            }
        }
        let next = if items.len() > 0 {
            // The page is full and the extra item read shows that more follow.
            last_key.as_ref().and_then(listing_key)
        } else {
            // Items read but filtered out (ended sales) still move the position forward.
            output
                .last_evaluated_key
                .as_ref()
                .and_then(|key| key.get(index_sk))
                .and_then(listing_key)
        };
        Ok(Page { packs, next })
    }
}

/// The id of a listed pack, as its listing key or partition key has it.
fn listed_pack_id(text: &str) -> Result<PackId, StoreError> {
    PackId::parse(text).map_err(|e| StoreError::internal_from("a listed pack's id", e))
}

fn listing_key(value: &AttributeValue) -> Option<ListingKey> {
    value.as_s().ok().and_then(|text| ListingKey::parse(text))
}

/// The sale end (`endsAt`, nanoseconds) of a pack or draw item (`what`), if it has one.
pub(crate) fn sale_ends_at(item: &Item, what: &str) -> Result<Option<Timestamp>, StoreError> {
    instant_attribute(item, ENDS_AT, what)
}

/// The instant held in nanoseconds by attribute `name` of a `what` item, if it has one.
pub(crate) fn instant_attribute(
    item: &Item,
    name: &str,
    what: &str,
) -> Result<Option<Timestamp>, StoreError> {
    item.get(name)
        .map(|value| {
            value
                .as_n()
                .ok()
                .and_then(|n| n.parse::<i128>().ok())
                .and_then(Timestamp::from_unix_nanos)
                .ok_or_else(|| corrupt(what, &format!("bad `{name}`")))
        })
        .transpose()
}

/// A pack from its item and its draw item.
fn stored_pack(pack_item: Item, draw_item: Item) -> Result<StoredPack, StoreError> {
    let revision =
        whole_number(&pack_item, PACK_REVISION).ok_or_else(|| corrupt("pack", "no `rev`"))?;
    let mut pack = pack_from_item(pack_item)?;
    let inputs = draw_inputs_from_item(draw_item)?;
    pack.items = inputs.items;
    Ok(StoredPack {
        pack,
        seed: inputs.seed,
        revision,
    })
}

/// The pack of a pack item (items left out: they live with the draw inputs).
pub(crate) fn pack_from_item(mut item: Item) -> Result<Pack, StoreError> {
    check_version(&item, "pack", PACK_VERSION)?;
    // A pack item written before the supply had shares has no `shards` (and its `remaining` is
    // the exact count): re-seeding it writes its shares (`SeedPack`).
    let shards = match item.get(PACK_SHARDS) {
        None => None,
        Some(_) => Some(
            whole_number(&item, PACK_SHARDS)
                .and_then(|n| u32::try_from(n).ok())
                .filter(|n| (1..=MAX_SUPPLY_SHARDS).contains(n))
                .ok_or_else(|| corrupt("pack", "`shards` is not 1-100"))?,
        ),
    };
    let mut pack = document_from_item(&mut item)?
        .to_pack()
        .map_err(|e| corrupt("pack", &e.to_string()))?;
    pack.supply_shards = shards;
    Ok(pack)
}

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
            super::queue::seeding_actions(table, pack_id, queue_write(pack, write, now))?;
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
        let mut listed = Vec::new();
        let mut start = None;
        loop {
            let output = self
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
                .expression_attribute_values(":listed", s(LISTED_PACKS))
                .set_exclusive_start_key(start.take())
                .send()
                .await
                .map_err(|e| classify("Query", e))?;
            for item in output.items.unwrap_or_default() {
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
            match output.last_evaluated_key {
                Some(next) => start = Some(next),
                None => return Ok(listed),
            }
        }
    }

    /// Sets a pack's `remaining` summary (the pack item must exist).
    pub(crate) async fn write_summary(
        &self,
        pack_id: &PackId,
        remaining: u64,
    ) -> Result<(), StoreError> {
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
            match written {
                Ok(_) => published += 1,
                Err(error)
                    if error
                        .as_service_error()
                        .is_some_and(|e| e.is_conditional_check_failed_exception()) => {}
                Err(error) => return Err(classify("UpdateItem", error)),
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
