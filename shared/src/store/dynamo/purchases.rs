//! Purchases on DynamoDB. Every operation reads once (a `BatchGetItem` of what it decides on),
//! applies the rules of [`crate::purchases`] to what it read, then writes once: one transaction
//! whose conditions re-check, inside the write, everything another request could have changed
//! since the read. When a condition fails, the transaction's cancellation hands back the item as
//! it is now (`ALL_OLD`), so the decision is taken again on fresh state without another read.

use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::types::{
    AttributeValue, ConditionCheck, Put, ReturnValuesOnConditionCheckFailure, TransactWriteItem,
    Update,
};

use super::condition::render;
use super::packs::{
    draw_inputs_from_item, pack_from_item, sale_ends_at, share_key, share_units, terms_attributes,
    whole_number,
};
use super::records::{
    CASH_VERSION, PURCHASE_VERSION, PurchaseRecord, SCHEMA_VERSION, check_version,
};
use super::{Attempts, Cancellation, DynamoStore, Item, key, number, s};
use crate::cash::ledger::debit_entry_id;
use crate::ids::{PackId, PurchaseId, UserId};
use crate::packs::Pack;
use crate::purchases::conditions;
use crate::purchases::mine::{opened_list_key, purchase_list_key};
use crate::purchases::{
    Buys, CompleteRefusal, Completion, HoldSlot, OpenRefusal, Purchase, PurchaseStatus,
    StartRefusal, StartRequest, UnpaidHolds, check_complete, check_open, check_start, opened,
    random_shard, take_hold_slot,
};
use crate::store::StoreError;
use crate::store::condition::Condition;
use crate::store::purchases::{
    CompleteError, CompletePurchase, Completed, GetPurchase, OpenError, OpenPurchase, Opened,
    ReleaseHolds, Released, StartError, StartPurchase, Started,
};
use crate::store::schema::{
    BUYS_HELD, BUYS_SEQ, CASH_SK, ENTITY, GSI2, GSI2_PK, GSI2_SK, HOLD_UNRELEASABLE, LEDGER_AMOUNT,
    LEDGER_AT, LEDGER_CURRENCY, LEDGER_PURCHASE_ID, PACK_REMAINING, PACK_SK, PK,
    PURCHASE_EXPIRES_NS, PURCHASE_STATUS, SHARE_SOLD, SK, buys_sk, cash_pk, debit_sk, hold_key,
    holds_ended_bound, holds_pk, pack_pk, purchase_sk, user_pk,
};
use crate::store::schema::{DRAW_SK, UNPAID_SK, UNPAID_VERSION, draw_pk, unpaid_slot};
use crate::store::schema::{GSI3_PK, GSI3_SK, time_key};
use crate::timestamp::Timestamp;

fn purchase_key(user_id: &str, purchase_id: &str) -> Item {
    key(user_pk(user_id), &purchase_sk(purchase_id))
}

fn buys_key(user_id: &str, pack_id: &str) -> Item {
    key(user_pk(user_id), &buys_sk(pack_id))
}

fn cash_key(user_id: &str) -> Item {
    key(cash_pk(user_id), CASH_SK)
}

pub(crate) fn status_text(status: PurchaseStatus) -> AttributeValue {
    s(conditions::status_text(status))
}

/// The item of a purchase: its fields, its key, its key in the fan's purchase list, and while
/// reserved, the holds index keys.
pub(crate) fn purchase_item(purchase: &Purchase) -> Result<Item, StoreError> {
    let mut item: Item = serde_dynamo::to_item(PurchaseRecord::from(purchase))
        .map_err(|e| StoreError::internal_from("purchase item", e))?;
    item.extend(purchase_key(&purchase.user_id, &purchase.id));
    item.insert(ENTITY.into(), s("purchase"));
    item.insert(
        PURCHASE_EXPIRES_NS.into(),
        number(purchase.expires_at.unix_nanos()),
    );
    // The fan's purchase list: set once, by the start's put (the key never changes after).
    item.insert(GSI3_PK.into(), s(user_pk(&purchase.user_id)));
    item.insert(GSI3_SK.into(), s(purchase_list_key(purchase)));
    if purchase.status == PurchaseStatus::Reserved {
        item.insert(
            GSI2_PK.into(),
            s(holds_pk(&purchase.pack_id, purchase.supply_shard)),
        );
        item.insert(
            GSI2_SK.into(),
            s(hold_key(purchase.expires_at, &purchase.id)),
        );
    }
    // Once opened, the fan's item list (GSI2 is free again: the payment removed the hold's).
    if let Some(opened_key) = opened_list_key(purchase) {
        item.insert(GSI2_PK.into(), s(user_pk(&purchase.user_id)));
        item.insert(GSI2_SK.into(), s(opened_key));
    }
    Ok(item)
}

pub(crate) fn purchase_from_item(item: Item) -> Result<Purchase, StoreError> {
    serde_dynamo::from_item::<_, PurchaseRecord>(item)
        .map_err(|e| StoreError::internal_from("purchase item", e))?
        .try_into()
}

fn buys_from_item(item: Option<&Item>) -> Buys {
    item.map_or_else(Buys::default, |item| Buys {
        seq: whole_number(item, BUYS_SEQ).unwrap_or(0),
        held: whole_number(item, BUYS_HELD).unwrap_or(0),
    })
}

/// The balance in `currency` of a user's cash item (0 when none).
fn balance_in(item: Option<&Item>, currency: &str) -> u64 {
    item.and_then(|item| whole_number(item, currency))
        .unwrap_or(0)
}

fn build<T, E: std::error::Error + Send + Sync + 'static>(
    built: Result<T, E>,
) -> Result<T, StoreError> {
    built.map_err(|e| StoreError::internal_from("transaction action", e))
}

/// An update of `key`: `expression` (with its `#name`s and `:value`s) on the declared
/// `condition`.
fn update(
    table: &str,
    key: Item,
    expression: &str,
    condition: &Condition,
    names: &[(&str, &str)],
    values: Vec<(&str, AttributeValue)>,
) -> Result<TransactWriteItem, StoreError> {
    let condition = render(condition);
    let mut builder = Update::builder()
        .table_name(table)
        .set_key(Some(key))
        .update_expression(expression)
        .condition_expression(condition.expression)
        .set_expression_attribute_names(Some(condition.names.into_iter().collect()))
        .set_expression_attribute_values(Some(condition.values.into_iter().collect()))
        .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld);
    for (name, attribute) in names {
        builder = builder.expression_attribute_names(*name, *attribute);
    }
    for (name, value) in values {
        builder = builder.expression_attribute_values(name, value);
    }
    Ok(TransactWriteItem::builder()
        .update(build(builder.build())?)
        .build())
}

/// A put of a new item (its key must be free).
fn put_new(table: &str, item: Item) -> Result<TransactWriteItem, StoreError> {
    let condition = render(&Condition::new_item());
    let put = Put::builder()
        .table_name(table)
        .set_item(Some(item))
        .condition_expression(condition.expression)
        .set_expression_attribute_names(Some(condition.names.into_iter().collect()))
        .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
        .build();
    Ok(TransactWriteItem::builder().put(build(put)?).build())
}

/// What a cancelled transaction says of the action at `index`.
fn reason(reasons: &[Cancellation], index: usize) -> Cancellation {
    reasons.get(index).cloned().unwrap_or_default()
}

impl DynamoStore {
    /// The start's transaction: a unit of the purchase's share, the buyer's count, the new
    /// purchase.
    fn start_actions(
        &self,
        request: &StartRequest,
        pack: &crate::packs::Pack,
        buys: Buys,
        purchase: &Purchase,
    ) -> Result<Vec<TransactWriteItem>, StoreError> {
        let table = &self.table;
        let buys_values = vec![
            (":next", number(purchase.nonce)),
            (":one", number(1)),
            (":zero", number(0)),
            (":entity", s("buys")),
            (":sv", number(PURCHASE_VERSION)),
        ];
        let share_update = update(
            table,
            share_key(&pack.id, purchase.supply_shard),
            "SET #remaining = #remaining - :one",
            &conditions::share_sells(pack, request.now),
            &[("#remaining", PACK_REMAINING)],
            vec![(":one", number(1))],
        )?;
        let buys_update = update(
            table,
            buys_key(&request.user_id, &request.pack_id),
            "SET #seq = :next, #held = if_not_exists(#held, :zero) + :one, #entity = :entity, \
             #sv = :sv",
            &conditions::buys_as_read(buys, pack.max_per_user),
            &[
                ("#seq", BUYS_SEQ),
                ("#held", BUYS_HELD),
                ("#entity", ENTITY),
                ("#sv", SCHEMA_VERSION),
            ],
            buys_values,
        )?;
        Ok(vec![
            share_update,
            buys_update,
            put_new(table, purchase_item(purchase)?)?,
        ])
    }

    /// The fan's unpaid holds gain `purchase` in `slot`, on condition that they are as read
    /// (`version`): the cap and the funds were decided on them.
    fn take_slot_action(
        &self,
        purchase: &Purchase,
        slot: u32,
        version: u64,
    ) -> Result<TransactWriteItem, StoreError> {
        let held = HoldSlot {
            purchase_id: purchase.id.clone(),
            expires_at: purchase.expires_at,
            price: purchase.price.clone(),
        };
        let held = serde_dynamo::to_attribute_value(&held)
            .map_err(|e| StoreError::internal_from("hold slot", e))?;
        let slot_name = unpaid_slot(slot);
        let values = vec![
            (":held", held),
            (":next", number(version + 1)),
            (":sv", number(PURCHASE_VERSION)),
        ];
        update(
            &self.table,
            unpaid_key(&purchase.user_id),
            "SET #slot = :held, #v = :next, #sv = :sv",
            &conditions::unpaid_as_read(version),
            &[
                ("#slot", slot_name.as_str()),
                ("#v", UNPAID_VERSION),
                ("#sv", SCHEMA_VERSION),
            ],
            values,
        )
    }

    /// A condition that the buyer's balance in `purchase`'s currency is at least `needed`.
    fn funds_check(
        &self,
        purchase: &Purchase,
        needed: u64,
    ) -> Result<TransactWriteItem, StoreError> {
        let condition = render(&conditions::funds_cover(&purchase.price.currency, needed));
        let check = ConditionCheck::builder()
            .table_name(&self.table)
            .set_key(Some(cash_key(&purchase.user_id)))
            .condition_expression(condition.expression)
            .set_expression_attribute_names(Some(condition.names.into_iter().collect()))
            .set_expression_attribute_values(Some(condition.values.into_iter().collect()))
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
            .build();
        Ok(TransactWriteItem::builder()
            .condition_check(build(check)?)
            .build())
    }

    /// Releases one expired hold: `expired`, its unit back into its share, its buyer's slot
    /// freed. The purchase's state alone decides (as in memory): the counts follow it with
    /// `ADD`, so a release never waits on them. `false` when another writer took the purchase
    /// first.
    async fn release(&self, purchase: &Purchase, now: Timestamp) -> Result<bool, StoreError> {
        let table = &self.table;
        let actions = vec![
            update(
                table,
                purchase_key(&purchase.user_id, &purchase.id),
                "SET #status = :expired REMOVE #gsi2pk, #gsi2sk",
                &conditions::releasable(now),
                &[
                    ("#status", PURCHASE_STATUS),
                    ("#gsi2pk", GSI2_PK),
                    ("#gsi2sk", GSI2_SK),
                ],
                vec![(":expired", status_text(PurchaseStatus::Expired))],
            )?,
            counter(
                table,
                share_key(&purchase.pack_id, purchase.supply_shard),
                PACK_REMAINING,
                1,
            )?,
            counter(
                table,
                buys_key(&purchase.user_id, &purchase.pack_id),
                BUYS_HELD,
                -1,
            )?,
        ];
        let mut attempts = Attempts::new("release");
        loop {
            match self.transact(actions.clone()).await? {
                None => {
                    self.cache
                        .unit_returned(&purchase.pack_id, purchase.supply_shard);
                    // Counted here, where every release goes through (the sweep, a start before
                    // sold out or at the limit, a payment too late): no handler sees them all.
                    crate::metrics::count(crate::metrics::Metric::HoldsReleased);
                    return Ok(true);
                }
                Some(reasons) if reason(&reasons, 0).condition_failed() => return Ok(false),
                Some(reasons) if reasons.iter().any(Cancellation::conflicted) => {
                    attempts.after_conflict().await?;
                }
                Some(_) => {
                    return Err(StoreError::internal(format!(
                        "release of purchase {}: cancelled for no condition",
                        purchase.id
                    )));
                }
            }
        }
    }

    /// What a start decides on, in one strongly consistent read: the pack (its frozen terms as
    /// kept, else read and kept when frozen), the buyer's count, any purchase already under the
    /// start's id, the fan's unpaid holds and, when a start needs funds, their balances.
    async fn start_state(&self, request: &StartRequest) -> Result<StartState, StoreError> {
        let cached = self.cache.terms(&request.pack_id);
        let mut keys = vec![
            buys_key(&request.user_id, &request.pack_id),
            purchase_key(&request.user_id, &request.purchase_id),
            unpaid_key(&request.user_id),
        ];
        if request.policy.requires_funds {
            keys.push(cash_key(&request.user_id));
        }
        if cached.is_none() {
            keys.push(key(pack_pk(&request.pack_id), PACK_SK));
        }
        let mut items = self.batch_get_slice(&keys, true).await?.into_iter();
        let mut next = || items.next().flatten();
        let (buys, existing, unpaid) = (next(), next(), next());
        let cash = if request.policy.requires_funds {
            next()
        } else {
            None
        };
        let pack = match cached {
            Some(pack) => Some(pack),
            None => {
                let pack = next().map(pack_from_item).transpose()?;
                if let Some(pack) = &pack {
                    self.cache.keep_terms(pack, request.now);
                }
                pack
            }
        };
        Ok(StartState {
            pack,
            buys: buys_from_item(buys.as_ref()),
            existing,
            unpaid: unpaid_from_item(unpaid.as_ref())?,
            cash,
        })
    }

    /// Releases up to `max` holds of `pack_id` that ended by `now`, from the holds of each of
    /// its shares in random order: bounded work, whatever the backlog of other packs.
    async fn release_pack_holds(
        &self,
        pack_id: &str,
        shards: u32,
        now: Timestamp,
        max: usize,
    ) -> Result<Released, StoreError> {
        let first = random_shard(shards);
        let partitions = (0..shards)
            .map(|step| holds_pk(pack_id, (first + step) % shards))
            .collect();
        self.release_in(partitions, now, max).await
    }

    /// Releases up to `max` ended holds from the holds-index `partitions`, in order.
    async fn release_in(
        &self,
        partitions: Vec<String>,
        now: Timestamp,
        max: usize,
    ) -> Result<Released, StoreError> {
        let mut report = Released::default();
        for partition in partitions {
            let mut start = None;
            loop {
                let handled = report.released + report.lost_races + report.skipped;
                let left = (max as u64).saturating_sub(handled);
                if left == 0 {
                    report.more = true;
                    return Ok(report);
                }
                let output = self
                    .client
                    .query()
                    .table_name(&self.table)
                    .index_name(GSI2)
                    .key_condition_expression("#pk = :holds AND #sk <= :ended")
                    .expression_attribute_names("#pk", GSI2_PK)
                    .expression_attribute_names("#sk", GSI2_SK)
                    .expression_attribute_values(":holds", s(&partition))
                    .expression_attribute_values(":ended", s(holds_ended_bound(now)))
                    .limit(i32::try_from(left.min(100)).unwrap_or(100))
                    .set_exclusive_start_key(start.take())
                    .send()
                    .await
                    .map_err(|e| super::classify("Query", e))?;
                for item in output.items.unwrap_or_default() {
                    let entry = HoldEntry::of(&item);
                    let released = match purchase_from_item(item) {
                        Ok(purchase) => self.release(&purchase, now).await,
                        Err(error) => Err(error),
                    };
                    match released {
                        Ok(true) => report.released += 1,
                        Ok(false) => report.lost_races += 1,
                        // Throttling or an outage: the next sweep tries again.
                        Err(error @ StoreError::Unavailable { .. }) => return Err(error),
                        Err(error) => {
                            tracing::error!(
                                error = %error.detail(),
                                "a hold cannot be released; taken out of the holds index"
                            );
                            self.set_aside(entry).await?;
                            report.skipped += 1;
                        }
                    }
                }
                match output.last_evaluated_key {
                    Some(next) => start = Some(next),
                    None => break,
                }
            }
        }
        Ok(report)
    }
}

/// Where a hold sits: its item's key and its holds-index sort key, read before the item is.
struct HoldEntry {
    key: Item,
    sort_key: Option<AttributeValue>,
}

impl HoldEntry {
    fn of(item: &Item) -> Self {
        Self {
            key: [PK, SK]
                .into_iter()
                .filter_map(|name| Some((name.to_owned(), item.get(name)?.clone())))
                .collect(),
            sort_key: item.get(GSI2_SK).cloned(),
        }
    }
}

impl DynamoStore {
    /// Takes a hold that cannot be released out of the holds index, marked `unreleasable`: left
    /// in it, it would come first in every later read of its share's holds and, with enough of
    /// them, keep every sweep and sold-out start from the holds behind it. Its unit stays out of
    /// the supply, so a pack's books show it until an operator repairs the record. Conditioned on
    /// the entry being the one read; a failure other than an outage is logged and left.
    async fn set_aside(&self, entry: HoldEntry) -> Result<(), StoreError> {
        let Some(sort_key) = entry.sort_key else {
            return Ok(());
        };
        let written = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(entry.key))
            .update_expression("REMOVE #gsi2pk, #gsi2sk SET #unreleasable = :now")
            .condition_expression("#gsi2sk = :seen")
            .expression_attribute_names("#gsi2pk", GSI2_PK)
            .expression_attribute_names("#gsi2sk", GSI2_SK)
            .expression_attribute_names("#unreleasable", HOLD_UNRELEASABLE)
            .expression_attribute_values(":now", s(Timestamp::now().to_string()))
            .expression_attribute_values(":seen", sort_key)
            .send()
            .await;
        match written.map_err(|e| super::classify("UpdateItem", e)) {
            Ok(_) => Ok(()),
            Err(error @ StoreError::Unavailable { .. }) => Err(error),
            Err(error) => {
                tracing::error!(error = %error.detail(), "an unreleasable hold was not set aside");
                Ok(())
            }
        }
    }

    /// Releases the holds of `request`'s buyer on its pack that ran out unreleased; how many.
    /// A Query of the buyer's own purchases (their partition only), filtered on the server.
    async fn release_buyers_dead_holds(&self, request: &StartRequest) -> Result<u64, StoreError> {
        let mut released = 0;
        let mut start = None;
        loop {
            let output = self
                .client
                .query()
                .table_name(&self.table)
                .key_condition_expression("#pk = :user AND begins_with(#sk, :purchases)")
                .filter_expression("#pack = :pack AND #status = :reserved AND #expires <= :now")
                .expression_attribute_names("#pk", PK)
                .expression_attribute_names("#sk", SK)
                .expression_attribute_names("#pack", "packId")
                .expression_attribute_names("#status", PURCHASE_STATUS)
                .expression_attribute_names("#expires", PURCHASE_EXPIRES_NS)
                .expression_attribute_values(":user", s(user_pk(&request.user_id)))
                .expression_attribute_values(":purchases", s(purchase_sk("")))
                .expression_attribute_values(":pack", s(&request.pack_id))
                .expression_attribute_values(":reserved", status_text(PurchaseStatus::Reserved))
                .expression_attribute_values(":now", number(request.now.unix_nanos()))
                .set_exclusive_start_key(start.take())
                .send()
                .await
                .map_err(|e| super::classify("Query", e))?;
            for item in output.items.unwrap_or_default() {
                if self
                    .release(&purchase_from_item(item)?, request.now)
                    .await?
                {
                    released += 1;
                }
            }
            match output.last_evaluated_key {
                Some(next) => start = Some(next),
                None => return Ok(released),
            }
        }
    }
}

/// What a start read.
struct StartState {
    pack: Option<Pack>,
    buys: Buys,
    existing: Option<Item>,
    unpaid: UnpaidHolds,
    cash: Option<Item>,
}

fn unpaid_key(user_id: &str) -> Item {
    key(user_pk(user_id), UNPAID_SK)
}

/// A fan's unpaid holds from their item (none when it is absent).
fn unpaid_from_item(item: Option<&Item>) -> Result<UnpaidHolds, StoreError> {
    let Some(item) = item else {
        return Ok(UnpaidHolds::default());
    };
    check_version(item, "unpaid holds", PURCHASE_VERSION)?;
    let mut holds = UnpaidHolds {
        slots: Vec::new(),
        version: whole_number(item, UNPAID_VERSION).unwrap_or(0),
    };
    for (name, value) in item {
        let Some(slot) = name.strip_prefix('s').and_then(|k| k.parse::<usize>().ok()) else {
            continue;
        };
        let held: HoldSlot = serde_dynamo::from_attribute_value(value.clone())
            .map_err(|e| StoreError::internal_from("unpaid holds item", e))?;
        if holds.slots.len() <= slot {
            holds.slots.resize(slot + 1, None);
        }
        holds.slots[slot] = Some(held);
    }
    Ok(holds)
}

/// `ADD change` to the number `attribute` of the item at `key`, unconditionally.
fn counter(
    table: &str,
    key: Item,
    attribute: &str,
    change: i64,
) -> Result<TransactWriteItem, StoreError> {
    let update = Update::builder()
        .table_name(table)
        .set_key(Some(key))
        .update_expression("ADD #counter :change")
        .expression_attribute_names("#counter", attribute)
        .expression_attribute_values(":change", number(change))
        .build();
    Ok(TransactWriteItem::builder().update(build(update)?).build())
}

/// Whether a share's item (as a cancellation returned it) carries `pack`'s terms as read.
fn share_has_terms(item: &Item, pack: &Pack) -> bool {
    terms_attributes(pack)
        .into_iter()
        .all(|(name, value)| item.get(name) == value.as_ref())
}

/// Full reads of a pack's shares one start may make before it gives up with a 503: each is
/// followed by a try of every share it found a unit in, so another read means all of those were
/// taken meanwhile, by starts that got them.
const MAX_SHARE_READS: u32 = 4;

impl StartPurchase for DynamoStore {
    async fn start_purchase(&self, request: &StartRequest) -> Result<Started, StartError> {
        let StartState {
            mut pack,
            mut buys,
            existing,
            mut unpaid,
            mut cash,
        } = self.start_state(request).await?;
        if let Some(existing) = existing {
            return repeat(request, purchase_from_item(existing)?);
        }
        let pack_id = request.pack_id.as_str();
        let mut next_shard = None;
        let mut candidates: Vec<u32> = Vec::new();
        let mut attempts = Attempts::new("start");
        let mut share_reads = 0;
        let (mut guessed, mut released_holds, mut released_own) = (false, false, false);
        loop {
            match check_start(pack.as_ref(), buys, request.now) {
                // The count includes holds that ran out unreleased: those are not live, so they
                // are released first and the buyer's count decided again.
                Err(StartRefusal::LimitReached) if !released_own => {
                    released_own = true;
                    if self.release_buyers_dead_holds(request).await? > 0 {
                        buys = self.start_state(request).await?.buys;
                        continue;
                    }
                    return Err(StartRefusal::LimitReached.into());
                }
                checked => checked?,
            }
            let Some(pack_read) = pack.as_ref() else {
                return Err(StartRefusal::PackNotFound.into());
            };
            let balance = balance_in(cash.as_ref(), &pack_read.price.currency);
            let (slot, needed) = take_hold_slot(
                &unpaid,
                request.policy,
                &pack_read.price,
                balance,
                request.now,
            )?;
            let shards = pack_read.shard_count();
            if self.cache.sold_out(pack_id) {
                return Err(StartRefusal::SoldOut.into());
            }
            let mut next = next_shard.take().or_else(|| candidates.pop());
            if next.is_none() && !guessed {
                // The first try needs no read: a share at random, of those not seen empty.
                guessed = true;
                next = self.cache.pick_shard(pack_id, shards);
            }
            let shard = match next {
                Some(shard) => shard,
                None => {
                    // Every share tried has run out: read them all, go on to those with units.
                    if share_reads == MAX_SHARE_READS {
                        return Err(attempts.exhausted().into());
                    }
                    share_reads += 1;
                    let shares = self.read_shares(pack_id, shards, true).await?;
                    self.cache.learn(pack_id, &shares);
                    candidates = (0..shards).filter(|&k| shares[k as usize] > 0).collect();
                    shuffle(&mut candidates);
                    if !candidates.is_empty() {
                        continue;
                    }
                    if !released_holds {
                        // No unit anywhere: take back the dead holds before answering sold out.
                        released_holds = true;
                        let released = self
                            .release_pack_holds(
                                pack_id,
                                shards,
                                request.now,
                                RELEASE_BEFORE_SOLD_OUT,
                            )
                            .await?;
                        if released.released > 0 {
                            continue;
                        }
                    }
                    if self.cache.mark_sold_out(pack_id)
                        && let Err(error) = self.write_summary(pack_id, 0).await
                    {
                        tracing::warn!(error = %error, "the sold-out summary was not written");
                    }
                    return Err(StartRefusal::SoldOut.into());
                }
            };
            let purchase = request.purchase(buys, &pack_read.price, shard, slot);
            let mut actions = self.start_actions(request, pack_read, buys, &purchase)?;
            actions.push(self.take_slot_action(&purchase, slot, unpaid.version)?);
            if needed > 0 {
                actions.push(self.funds_check(&purchase, needed)?);
            }
            let Some(reasons) = self.transact(actions).await? else {
                return Ok(Started::Created(purchase));
            };
            let (share_reason, buys_reason, purchase_reason) = (
                reason(&reasons, 0),
                reason(&reasons, 1),
                reason(&reasons, 2),
            );
            let (unpaid_reason, cash_reason) = (reason(&reasons, 3), reason(&reasons, 4));
            // Whether a race was lost on something other than the share's last unit: decided
            // again on what the cancellation returned, as another attempt.
            let mut lost = false;
            if unpaid_reason.condition_failed() {
                // Another start or payment of this fan's came between: decide on their holds now.
                unpaid = unpaid_from_item(unpaid_reason.item.as_ref())?;
                lost = true;
            }
            if cash_reason.condition_failed() {
                cash = cash_reason.item;
                lost = true;
            }
            if purchase_reason.condition_failed() {
                // A concurrent request with the same key made the purchase first.
                let existing = purchase_reason.item.ok_or_else(|| {
                    StoreError::internal("start: no purchase in the cancellation")
                })?;
                return repeat(request, purchase_from_item(existing)?);
            }
            let mut retry_share = true;
            if share_reason.condition_failed() {
                match share_reason.item {
                    Some(item) if share_has_terms(&item, pack_read) => {
                        if share_units(Some(&item)) == 0 {
                            // This share ran out: on to another, no attempt spent.
                            self.cache.mark_empty(pack_id, shard);
                            retry_share = false;
                        }
                    }
                    _ => {
                        // The terms changed since they were read (a sale ended early): read them.
                        self.cache.forget_terms(pack_id);
                        pack = self.start_state(request).await?.pack;
                        lost = true;
                    }
                }
            }
            if buys_reason.condition_failed() {
                buys = buys_from_item(buys_reason.item.as_ref());
                lost = true;
            }
            if reasons.iter().any(Cancellation::conflicted) {
                attempts.after_conflict().await?;
            } else if lost {
                attempts.again()?;
            }
            if retry_share {
                next_shard = Some(shard);
            }
        }
    }
}

/// `items` in a random order.
fn shuffle(items: &mut [u32]) {
    for at in (1..items.len()).rev() {
        let other = random_shard(u32::try_from(at + 1).unwrap_or(u32::MAX)) as usize;
        items.swap(at, other);
    }
}

/// How many of a pack's expired holds a start releases before answering sold out.
const RELEASE_BEFORE_SOLD_OUT: usize = 25;

/// The answer to a start whose key already names `existing`.
fn repeat(request: &StartRequest, existing: Purchase) -> Result<Started, StartError> {
    if request.is_repeated_by(&existing) {
        Ok(Started::Repeated(existing))
    } else {
        Err(StartError::KeyReused)
    }
}

impl GetPurchase for DynamoStore {
    async fn get_purchase(
        &self,
        user_id: &UserId,
        purchase_id: &PurchaseId,
    ) -> Result<Option<Purchase>, StoreError> {
        let output = self
            .client
            .get_item()
            .table_name(&self.table)
            .set_key(Some(purchase_key(user_id, purchase_id)))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| super::classify("GetItem", e))?;
        output.item.map(purchase_from_item).transpose()
    }
}

impl DynamoStore {
    /// The completion's transaction: the purchase paid, the balance down by the price from
    /// exactly `balance`, the debit written.
    fn pay_actions(
        &self,
        purchase: &Purchase,
        balance: u64,
        free_slot: bool,
        now: Timestamp,
    ) -> Result<Vec<TransactWriteItem>, StoreError> {
        let table = &self.table;
        let price = &purchase.price;
        let mut debit = key(cash_pk(&purchase.user_id), &debit_sk(&purchase.id));
        debit.extend([
            (ENTITY.to_owned(), s("debit")),
            (SCHEMA_VERSION.to_owned(), number(CASH_VERSION)),
            (LEDGER_PURCHASE_ID.to_owned(), s(&purchase.id)),
            (LEDGER_AMOUNT.to_owned(), number(price.amount)),
            (LEDGER_CURRENCY.to_owned(), s(&price.currency)),
            (LEDGER_AT.to_owned(), s(now.to_string())),
            // The fan's ledger entry, written by the payment's own transaction.
            (GSI3_PK.to_owned(), s(cash_pk(&purchase.user_id))),
            (
                GSI3_SK.to_owned(),
                s(time_key(now, &debit_entry_id(&purchase.id))),
            ),
        ]);
        let mut actions = vec![
            update(
                table,
                purchase_key(&purchase.user_id, &purchase.id),
                "SET #status = :completed, #completed = :now_text REMOVE #gsi2pk, #gsi2sk",
                &conditions::payable(now),
                &[
                    ("#status", PURCHASE_STATUS),
                    ("#completed", "completedAt"),
                    ("#gsi2pk", GSI2_PK),
                    ("#gsi2sk", GSI2_SK),
                ],
                vec![
                    (":completed", status_text(PurchaseStatus::Completed)),
                    (":now_text", s(now.to_string())),
                ],
            )?,
            update(
                table,
                cash_key(&purchase.user_id),
                // A free pack paid from no balance creates the Cash item: it gets a version too.
                "SET #balance = if_not_exists(#balance, :zero) - :price, #sv = :sv",
                &conditions::balance_as_read(price, balance),
                &[
                    ("#balance", price.currency.as_str()),
                    ("#sv", SCHEMA_VERSION),
                ],
                vec![
                    (":sv", number(CASH_VERSION)),
                    (":zero", number(0)),
                    (":price", number(price.amount)),
                ],
            )?,
            put_new(table, debit)?,
            counter(
                table,
                share_key(&purchase.pack_id, purchase.supply_shard),
                SHARE_SOLD,
                1,
            )?,
        ];
        // Paid: no longer one of the fan's unpaid holds, if its slot is still this purchase's.
        if let Some(slot) = purchase.hold_slot.filter(|_| free_slot) {
            let slot_name = unpaid_slot(slot);
            actions.push(update(
                table,
                unpaid_key(&purchase.user_id),
                "REMOVE #slot SET #v = #v + :one",
                &conditions::slot_holds(slot, &purchase.id),
                &[("#slot", slot_name.as_str()), ("#v", UNPAID_VERSION)],
                vec![(":one", number(1))],
            )?);
        }
        Ok(actions)
    }
}

impl DynamoStore {
    /// What a completion decides on, in one strongly consistent read: the purchase, the buyer's
    /// balances and when the pack's sale ends (its seed's reveal closes payments).
    async fn completion_state(
        &self,
        user_id: &UserId,
        pack_id: &PackId,
        purchase_id: &PurchaseId,
    ) -> Result<(Option<Purchase>, Option<Item>, Option<Timestamp>), StoreError> {
        let [purchase_item, cash_item, pack_item] = self
            .batch_get(
                [
                    purchase_key(user_id, purchase_id),
                    cash_key(user_id),
                    key(pack_pk(pack_id), PACK_SK),
                ],
                true,
            )
            .await?;
        let sale_ends_at = match &pack_item {
            Some(pack) => sale_ends_at(pack, "pack")?,
            None => None,
        };
        Ok((
            purchase_item.map(purchase_from_item).transpose()?,
            cash_item,
            sale_ends_at,
        ))
    }
}

impl CompletePurchase for DynamoStore {
    async fn complete_purchase(
        &self,
        user_id: &UserId,
        pack_id: &PackId,
        purchase_id: &PurchaseId,
        now: Timestamp,
    ) -> Result<Completed, CompleteError> {
        let (mut purchase, mut cash, sale_ends_at) =
            self.completion_state(user_id, pack_id, purchase_id).await?;
        let mut free_slot = true;
        let mut attempts = Attempts::new("complete");
        loop {
            let currency = purchase.as_ref().map_or("", |p| p.price.currency.as_str());
            let balance = balance_in(cash.as_ref(), currency);
            let completion =
                check_complete(purchase.as_ref(), pack_id, sale_ends_at, balance, now)?;
            let Some(current) = purchase.take() else {
                return Err(CompleteRefusal::NotFound.into());
            };
            match completion {
                Completion::Replay => {
                    return Ok(Completed::Repeated {
                        purchase: current,
                        balance,
                    });
                }
                Completion::Release => {
                    if self.release(&current, now).await? {
                        return Err(CompleteRefusal::Expired.into());
                    }
                    // Paid (or released by the sweep) since the read: decide on it as it is now.
                    (purchase, cash, _) =
                        self.completion_state(user_id, pack_id, purchase_id).await?;
                    attempts.again()?;
                    continue;
                }
                Completion::Pay => {}
            }
            let Some(reasons) = self
                .transact(self.pay_actions(&current, balance, free_slot, now)?)
                .await?
            else {
                let paid = Purchase {
                    status: PurchaseStatus::Completed,
                    completed_at: Some(now),
                    ..current
                };
                return Ok(Completed::Paid {
                    balance: balance - paid.price.amount,
                    purchase: paid,
                });
            };
            let (purchase_reason, cash_reason, debit_reason) = (
                reason(&reasons, 0),
                reason(&reasons, 1),
                reason(&reasons, 2),
            );
            if reason(&reasons, 4).condition_failed() {
                // The slot holds another hold now (this one ran out on another clock, and a
                // start took it): pay without freeing it.
                free_slot = false;
            }
            purchase = Some(match purchase_reason.item {
                Some(item) if purchase_reason.condition_failed() => purchase_from_item(item)?,
                _ => current,
            });
            if cash_reason.condition_failed() {
                cash = cash_reason.item;
            }
            if debit_reason.condition_failed() {
                // Only a completion of this very purchase writes its debit: read it again.
                purchase = self.get_purchase(user_id, purchase_id).await?;
            }
            attempts.after(&reasons).await?;
        }
    }
}

impl ReleaseHolds for DynamoStore {
    async fn release_holds(
        &self,
        pack_id: Option<&str>,
        now: Timestamp,
        max: usize,
    ) -> Result<Released, StoreError> {
        let partitions = match pack_id {
            Some(pack_id) => {
                let shards = self.stored_shards(pack_id).await?;
                return self.release_pack_holds(pack_id, shards, now, max).await;
            }
            // The sweep: the holds of every listed pack, share by share.
            None => self
                .listed_supplies()
                .await?
                .into_iter()
                .flat_map(|listed| (0..listed.shards).map(move |k| holds_pk(&listed.pack_id, k)))
                .collect(),
        };
        self.release_in(partitions, now, max).await
    }
}

impl OpenPurchase for DynamoStore {
    async fn open_purchase(
        &self,
        user_id: &UserId,
        pack_id: &PackId,
        purchase_id: &PurchaseId,
        now: Timestamp,
    ) -> Result<Opened, OpenError> {
        let [stored, draw_item] = self
            .batch_get(
                [
                    purchase_key(user_id, purchase_id),
                    key(draw_pk(pack_id), DRAW_SK),
                ],
                true,
            )
            .await?;
        let purchase = stored.map(purchase_from_item).transpose()?;
        let open_now = check_open(purchase.as_ref(), pack_id, now)?;
        let (Some(purchase), Some(draw_item)) = (purchase, draw_item) else {
            return Err(StoreError::internal(format!("pack {pack_id} has no draw inputs")).into());
        };
        let inputs = draw_inputs_from_item(&draw_item)?;
        let fairness = inputs.fairness_at(now);
        if !open_now {
            return Ok(Opened {
                purchase,
                fairness,
                repeated: true,
            });
        }
        let opened = opened(&purchase, &inputs, now)?;
        let written: Item = purchase_item(&opened)?;
        // With its entry in the fan's item list, in the same conditional write that opens it.
        let attributes = ["status", "openedAt", "items", "fairness", GSI2_PK, GSI2_SK];
        let mut values: Vec<(&str, AttributeValue)> = Vec::new();
        let placeholders = [
            ":status",
            ":openedAt",
            ":items",
            ":fairness",
            ":mine",
            ":opened_key",
        ];
        for (attribute, placeholder) in attributes.iter().zip(placeholders) {
            let value = written.get(*attribute).cloned().ok_or_else(|| {
                StoreError::internal(format!("opened purchase without `{attribute}`"))
            })?;
            values.push((placeholder, value));
        }
        // One item, so one conditional UpdateItem, not a transaction (half the write units).
        let condition = render(&conditions::openable());
        let mut write = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(purchase_key(user_id, purchase_id)))
            .update_expression(
                "SET #status = :status, #openedAt = :openedAt, #items = :items, #fairness = :fairness, \
                 #gsi2pk = :mine, #gsi2sk = :opened_key",
            )
            .condition_expression(condition.expression)
            .set_expression_attribute_names(Some(condition.names.into_iter().collect()))
            .set_expression_attribute_values(Some(condition.values.into_iter().collect()))
            .expression_attribute_names("#gsi2pk", GSI2_PK)
            .expression_attribute_names("#gsi2sk", GSI2_SK)
            .expression_attribute_names("#status", PURCHASE_STATUS)
            .expression_attribute_names("#openedAt", "openedAt")
            .expression_attribute_names("#items", "items")
            .expression_attribute_names("#fairness", "fairness")
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld);
        for (name, value) in values {
            write = write.expression_attribute_values(name, value);
        }
        let mut attempts = Attempts::new("open");
        let failed = loop {
            let error = match write.clone().send().await {
                Ok(_) => {
                    return Ok(Opened {
                        purchase: opened,
                        fairness,
                        repeated: false,
                    });
                }
                Err(error) => error,
            };
            match error.as_service_error() {
                Some(UpdateItemError::ConditionalCheckFailedException(failed)) => {
                    break failed.clone();
                }
                // A transaction (a sweep's release that read the purchase while reserved) was
                // on the item at that moment: nothing was written.
                Some(UpdateItemError::TransactionConflictException(_)) => {
                    attempts.after_conflict().await?;
                }
                _ => return Err(super::classify("UpdateItem", error).into()),
            }
        };
        // Opened meanwhile by a concurrent request: answer its draw.
        let current = failed
            .item()
            .cloned()
            .map(purchase_from_item)
            .transpose()?
            .ok_or(OpenRefusal::NotFound)?;
        match check_open(Some(&current), pack_id, now)? {
            false => Ok(Opened {
                purchase: current,
                fairness,
                repeated: true,
            }),
            true => Err(
                StoreError::internal("open: the condition failed on a completed purchase").into(),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hold_keys_sort_by_expiry_and_the_bound_takes_exactly_the_ended() {
        let at = |text: &str| Timestamp::parse(text).unwrap();
        let now = at("2026-06-01T12:00:00Z");
        let bound = holds_ended_bound(now);
        assert!(hold_key(at("2026-06-01T11:59:59.999999999Z"), "zzz") <= bound);
        assert!(hold_key(now, "zzzzzzzzzzzzzzzzzzzzzz") <= bound);
        assert!(hold_key(now, "-") <= bound);
        assert!(hold_key(at("2026-06-01T12:00:00.000000001Z"), "-") > bound);
        assert!(
            hold_key(at("1970-01-01T00:00:00Z"), "a") < hold_key(at("2026-01-01T00:00:00Z"), "a")
        );
    }
}
