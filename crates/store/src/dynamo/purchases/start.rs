//! Starting a purchase: a unit of a pack held for the fan until they pay or the hold ends.

use aws_sdk_dynamodb::types::{
    ConditionCheck, ReturnValuesOnConditionCheckFailure, TransactWriteItem,
};

use super::admission::{admission_action, entry_of};
use super::holds::unpaid_key;
use super::release::Reach;
use super::{
    balance_in, buys_from_item, buys_key, cash_key, purchase_from_item, purchase_item,
    purchase_key, status_text,
};
use crate::StoreError;
use crate::condition::Condition;
use crate::dynamo::cache::Comeback;
use crate::dynamo::condition::render;
use crate::dynamo::records::{HoldSlotRecord, PURCHASE_VERSION, SCHEMA_VERSION, unpaid_from_item};
use crate::dynamo::records::{pack_from_item, share_key, share_units, terms_attributes};
use crate::dynamo::transaction::{Reasons, Transaction, build, put_new, update};
use crate::dynamo::{Attempts, DynamoStore, Item, classify, key, number, s};
use crate::purchases::decide::{
    BeforeRefusing, Placement, Release, StartRead, StartWrite, repeat, start_write,
};
use crate::purchases::{StartError, StartPurchase, Started};
use crate::schema::{
    BUYS_HELD, BUYS_SEQ, ENTITY, PACK_REMAINING, PACK_SK, PK, PURCHASE_EXPIRES_NS, PURCHASE_STATUS,
    SK, pack_pk, user_pk,
};
use crate::schema::{PURCHASE_PREFIX, UNPAID_VERSION, unpaid_slot};
use domain::events::money::purchase_reserved;
use domain::packs::Pack;
use domain::purchases::{
    Buys, Purchase, PurchaseStatus, StartRefusal, StartRequest, UnpaidHolds, check_human,
    check_start, random_shard, take_hold_slot,
};
use domain::queue::entry::QueueEntry;

/// The actions of a start's transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StartAction {
    /// A unit taken from the purchase's share (its terms as read).
    Share,
    /// The buyer's count of the pack, as read.
    Buys,
    /// The new purchase (its key free).
    Purchase,
    /// The fan's unpaid holds gain the purchase, as read.
    Unpaid,
    /// The buyer's balance covers their unpaid holds (only when the policy needs funds).
    Funds,
    /// The fan's entry in a queued pack's line admits them, as read (only on a queued pack).
    Admission,
}

impl DynamoStore {
    /// The start's transaction: `write`'s unit of the purchase's share, the buyer's count, the
    /// new purchase, its slot among the fan's unpaid holds and, when asked, the check of the
    /// fan's balance and the update of their entry in the pack's line.
    fn start_actions(
        &self,
        request: &StartRequest,
        write: &StartWrite,
    ) -> Result<Transaction<StartAction>, StoreError> {
        let table = &self.table;
        let purchase = &write.purchase;
        let buys_values = vec![
            (":next", number(write.seq)),
            (":one", number(1)),
            (":zero", number(0)),
            (":entity", s("buys")),
            (":sv", number(PURCHASE_VERSION)),
        ];
        let share_update = update(
            table,
            share_key(&request.pack_id, purchase.supply_shard),
            "SET #remaining = #remaining - :one",
            &write.share,
            &[("#remaining", PACK_REMAINING)],
            vec![(":one", number(1))],
        )?;
        let buys_update = update(
            table,
            buys_key(&request.user_id, &request.pack_id),
            "SET #seq = :next, #held = if_not_exists(#held, :zero) + :one, #entity = :entity, \
             #sv = :sv",
            &write.buys,
            &[
                ("#seq", BUYS_SEQ),
                ("#held", BUYS_HELD),
                ("#entity", ENTITY),
                ("#sv", SCHEMA_VERSION),
            ],
            buys_values,
        )?;
        let mut transaction = Transaction::new()
            .with(StartAction::Share, share_update)
            .with(StartAction::Buys, buys_update)
            .with(
                StartAction::Purchase,
                put_new(table, purchase_item(purchase)?)?,
            )
            .with(StartAction::Unpaid, self.take_slot_action(write)?)
            .emit(purchase_reserved(purchase), request.now);
        if let Some(funds) = &write.funds {
            transaction.push(StartAction::Funds, self.funds_check(purchase, funds)?);
        }
        if let Some(entry) = &write.entry {
            transaction.push(
                StartAction::Admission,
                admission_action(table, request, entry)?,
            );
        }
        Ok(transaction)
    }

    /// The fan's unpaid holds gain `write`'s hold in its slot, on condition that they are as
    /// read: the cap and the funds were decided on them.
    fn take_slot_action(&self, write: &StartWrite) -> Result<TransactWriteItem, StoreError> {
        let held = serde_dynamo::to_attribute_value(HoldSlotRecord::from(&write.hold))
            .map_err(|e| StoreError::internal_from("hold slot", e))?;
        let slot_name = unpaid_slot(write.slot);
        let values = vec![
            (":held", held),
            (":next", number(write.unpaid_version)),
            (":sv", number(PURCHASE_VERSION)),
        ];
        update(
            &self.table,
            unpaid_key(&write.purchase.user_id),
            "SET #slot = :held, #v = :next, #sv = :sv",
            &write.unpaid_condition,
            &[
                ("#slot", slot_name.as_str()),
                ("#v", UNPAID_VERSION),
                ("#sv", SCHEMA_VERSION),
            ],
            values,
        )
    }

    /// The check that the buyer's balance holds `funds` (their holds covered).
    fn funds_check(
        &self,
        purchase: &Purchase,
        funds: &Condition,
    ) -> Result<TransactWriteItem, StoreError> {
        let condition = render(funds);
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
}

impl DynamoStore {
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
                    self.cache.keep_terms(&request.pack_id, pack, request.now);
                }
                pack
            }
        };
        // A queued pack sells only to admitted fans: their entry too (a read of its own, as
        // the pack's terms may only now be known).
        let entry = match &pack {
            Some(pack) if pack.queue.is_some() => {
                self.read_entry(&request.pack_id, &request.user_id, true)
                    .await?
            }
            _ => None,
        };
        Ok(StartState {
            pack,
            buys: buys_from_item(buys.as_ref())?,
            existing,
            unpaid: unpaid_from_item(unpaid.as_ref())?,
            cash,
            entry,
        })
    }

    /// Releases the holds of `request`'s buyer on its pack that ran out unreleased; how many it
    /// found, released here or by another request meanwhile (either way the buyer's count went
    /// down). A Query of the buyer's own purchases (their partition only), filtered on the server.
    async fn release_buyers_dead_holds(&self, request: &StartRequest) -> Result<u64, StoreError> {
        let mut found = 0;
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
                .expression_attribute_values(":purchases", s(PURCHASE_PREFIX))
                .expression_attribute_values(":pack", s(request.pack_id.as_str()))
                .expression_attribute_values(":reserved", status_text(PurchaseStatus::Reserved))
                .expression_attribute_values(":now", number(request.now.unix_nanos()))
                .set_exclusive_start_key(start.take())
                .send()
                .await
                .map_err(|e| classify("Query", e))?;
            for item in output.items.unwrap_or_default() {
                self.release(&purchase_from_item(item)?, request.now)
                    .await?;
                found += 1;
            }
            match output.last_evaluated_key {
                Some(next) => start = Some(next),
                None => return Ok(found),
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
    /// The fan's entry in the pack's line (a queued pack only).
    entry: Option<QueueEntry>,
}

/// Whether a share's item (as a cancellation returned it) carries `pack`'s terms as read.
fn share_has_terms(item: &Item, pack: &Pack) -> bool {
    terms_attributes(pack)
        .into_iter()
        .all(|(name, value)| item.get(name) == value.as_ref())
}

/// Full reads of a pack's shares one start may make before it gives up with a 503: each is
/// followed by a try of every share it found a unit in (or, the first time none had one, by the
/// release of the pack's dead holds), so another read means all of those were taken meanwhile,
/// by starts that got them.
const MAX_SHARE_READS: u32 = 4;

/// Where a start looks for a unit: the share to try next and what it learnt of the others.
#[derive(Default)]
struct ShareSearch {
    /// The share just tried, to try again (it had units).
    next: Option<u32>,
    /// Shares the last read found units in, not tried yet.
    candidates: Vec<u32>,
    /// Whether the first try (a guess, without a read) was made.
    guessed: bool,
    /// Full reads of the shares made.
    reads: u32,
    /// What the start released before refusing.
    released: BeforeRefusing,
    /// When the pack's next unit may come back, as its release before sold out saw it.
    next_unit: Option<Comeback>,
    /// Whether the start is past the instance's memory of the pack sold out: it consults it once,
    /// before it reads anything of the pack, then decides on what it reads. A start that put
    /// its buyer's own units back is past it from the start: it tries them whatever the
    /// instance remembers, since another request may have marked the pack sold out since.
    past_memory: bool,
}

/// What [`DynamoStore::find_share`] found.
enum Found {
    /// A share to take a unit from.
    Share(u32),
    /// Shares with units, or the shares to read again after the pack's dead holds were
    /// released: decide again, then go on.
    LookAgain,
}

impl DynamoStore {
    /// The share a start tries next: the one just tried while it had units, else one the last
    /// read found units in, else at first a guess, else a fresh read of them all. Sold out when
    /// no share has a unit, even after the pack's dead holds are released.
    async fn find_share(
        &self,
        request: &StartRequest,
        shards: u32,
        search: &mut ShareSearch,
        attempts: &Attempts,
    ) -> Result<Found, StartError> {
        let pack_id = &request.pack_id;
        if !std::mem::replace(&mut search.past_memory, true)
            && self.cache.sold_out(pack_id, request.now)
        {
            return Err(StartRefusal::SoldOut.into());
        }
        let mut next = search.next.take().or_else(|| search.candidates.pop());
        if next.is_none() && !search.guessed {
            // The first try needs no read: a share at random, of those not seen empty.
            search.guessed = true;
            next = self.cache.pick_shard(pack_id, shards);
        }
        if let Some(shard) = next {
            return Ok(Found::Share(shard));
        }
        // Every share tried has run out: read them all, go on to those with units.
        if search.reads == MAX_SHARE_READS {
            return Err(attempts.exhausted().into());
        }
        search.reads += 1;
        let shares = self.read_shares(pack_id, shards, true).await?;
        self.cache.learn(pack_id, &shares);
        search.candidates = (0..shards).filter(|&k| shares[k as usize] > 0).collect();
        shuffle(&mut search.candidates);
        if !search.candidates.is_empty() {
            return Ok(Found::LookAgain);
        }
        // No unit anywhere: take back the dead holds, and see when the next may come back.
        if let Some(release) = search.released.release(&StartRefusal::SoldOut) {
            let found = self.release_before_refusing(request, release, shards, search);
            if release.decide_again(found.await?) {
                return Ok(Found::LookAgain);
            }
        }
        let next_unit = search.next_unit.unwrap_or(Comeback::Unknown);
        if self.cache.mark_sold_out(pack_id, request.now, next_unit)
            && let Err(error) = self.write_summary(pack_id, 0).await
        {
            tracing::warn!(error = %error, "the sold-out summary was not written");
        }
        Err(StartRefusal::SoldOut.into())
    }

    /// Takes in what a cancelled start's transaction returned (each failed item as it is now),
    /// and the share tried to be tried again unless it ran out. `true` when a race was lost on
    /// something other than the share's last unit: decided again as another attempt.
    async fn take_in(
        &self,
        request: &StartRequest,
        state: &mut StartState,
        reasons: &Reasons<StartAction>,
        shard: u32,
        search: &mut ShareSearch,
    ) -> Result<bool, StoreError> {
        let pack_id = &request.pack_id;
        let mut lost = false;
        if reasons.failed(StartAction::Unpaid) {
            // Another start or payment of this fan's came between: decide on their holds now.
            state.unpaid = unpaid_from_item(reasons.of(StartAction::Unpaid).item.as_ref())?;
            lost = true;
        }
        if reasons.failed(StartAction::Funds) {
            state.cash = reasons.of(StartAction::Funds).item.clone();
            lost = true;
        }
        if reasons.failed(StartAction::Admission) {
            // The entry as it is now says why: lapsed meanwhile, or another start of the fan's.
            state.entry = entry_of(reasons.of(StartAction::Admission).item.clone())?;
            lost = true;
        }
        let mut retry_share = true;
        if reasons.failed(StartAction::Share) {
            match &reasons.of(StartAction::Share).item {
                Some(item)
                    if state
                        .pack
                        .as_ref()
                        .is_some_and(|pack| share_has_terms(item, pack)) =>
                {
                    if share_units(Some(item)) == 0 {
                        // This share ran out: on to another, no attempt spent.
                        self.cache.mark_empty(pack_id, shard);
                        retry_share = false;
                    }
                }
                _ => {
                    // The terms changed since they were read (a sale ended early): read them.
                    self.cache.forget_terms(pack_id);
                    state.pack = self.start_state(request).await?.pack;
                    lost = true;
                }
            }
        }
        if reasons.failed(StartAction::Buys) {
            state.buys = buys_from_item(reasons.of(StartAction::Buys).item.as_ref())?;
            lost = true;
        }
        if retry_share {
            search.next = Some(shard);
        }
        Ok(lost)
    }
}

impl StartPurchase for DynamoStore {
    async fn start_purchase(&self, request: &StartRequest) -> Result<Started, StartError> {
        let mut state = self.start_state(request).await?;
        if let Some(existing) = state.existing.take() {
            return repeat(request, purchase_from_item(existing)?);
        }
        if let Some(pack) = &state.pack {
            check_human(pack, request)?;
        }
        let mut search = ShareSearch::default();
        let mut attempts = Attempts::new("start");
        loop {
            if let Err(refusal) = check_start(state.pack.as_ref(), state.buys, request.now) {
                // The count includes holds that ran out unreleased: those are not live, so they
                // are released first and the buyer's count decided again.
                if let Some(release) = search.released.release(&refusal) {
                    let shards = state.pack.as_ref().map_or(1, Pack::shard_count);
                    let found = self.release_before_refusing(request, release, shards, &mut search);
                    if release.decide_again(found.await?) {
                        search.past_memory = true;
                        state.buys = self.start_state(request).await?.buys;
                        continue;
                    }
                }
                return Err(refusal.into());
            }
            let Some(pack) = state.pack.as_ref() else {
                return Err(StartRefusal::PackNotFound.into());
            };
            let admitted = self.admission(pack, state.entry.as_ref(), request).await?;
            let balance = balance_in(state.cash.as_ref(), &pack.price.currency)?;
            let (slot, needed) = take_hold_slot(
                &state.unpaid,
                request.policy,
                &pack.price,
                balance,
                request.now,
            )?;
            let shard = match self
                .find_share(request, pack.shard_count(), &mut search, &attempts)
                .await?
            {
                Found::Share(shard) => shard,
                Found::LookAgain => continue,
            };
            let read = StartRead {
                buys: state.buys,
                unpaid_version: state.unpaid.version,
                admitted,
            };
            let placement = Placement {
                shard,
                slot,
                needed,
            };
            let write = start_write(request, pack, read, placement);
            let Some(reasons) = self.run(self.start_actions(request, &write)?).await? else {
                return Ok(Started::Created(write.purchase));
            };
            if reasons.failed(StartAction::Purchase) {
                // A concurrent request with the same key made the purchase first.
                let existing = reasons.of(StartAction::Purchase).item.clone();
                let existing = existing.ok_or_else(|| {
                    StoreError::internal("start: no purchase in the cancellation")
                })?;
                return repeat(request, purchase_from_item(existing)?);
            }
            let lost = self
                .take_in(request, &mut state, &reasons, shard, &mut search)
                .await?;
            if reasons.conflicted() {
                attempts.after_conflict().await?;
            } else if lost {
                attempts.again()?;
            }
        }
    }
}

impl DynamoStore {
    /// Makes `release` (decided by [`BeforeRefusing`]) for a start of a pack of `shards`
    /// shares: how many holds it found; `search` learns when the pack's next unit may come back.
    async fn release_before_refusing(
        &self,
        request: &StartRequest,
        release: Release,
        shards: u32,
        search: &mut ShareSearch,
    ) -> Result<u64, StoreError> {
        match release {
            Release::BuyersDeadHolds => self.release_buyers_dead_holds(request).await,
            Release::PackHolds { max } => {
                let (released, next_unit) = self
                    .release_pack_holds(
                        &request.pack_id,
                        shards,
                        (request.now, max),
                        Reach::NextEnd,
                    )
                    .await?;
                search.next_unit = Some(next_unit);
                Ok(released.released + released.lost_races)
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
