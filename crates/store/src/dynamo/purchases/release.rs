//! Releasing holds that ran out: their units back into their shares.

use super::holds::HoldEntry;
use super::{buys_key, purchase_from_item, purchase_key, status_text};
use crate::StoreError;
use crate::dynamo::cache::Comeback;
use crate::dynamo::queue::entry_key;
use crate::dynamo::records::share_key;
use crate::dynamo::transaction::{Transaction, counter, update};
use crate::dynamo::{Attempts, DynamoStore, classify, number, s};
use crate::purchase_conditions as conditions;
use crate::purchases::{ReleaseHolds, Released};
use crate::queue_conditions;
use crate::schema::{
    BUYS_HELD, ENTRY_BOUGHT, ENTRY_STATUS, GSI2, GSI2_PK, GSI2_SK, PACK_REMAINING, PURCHASE_STATUS,
    holds_ended_bound, holds_pk,
};
use domain::events::money::purchase_expired;
use domain::ids::PackId;
use domain::purchases::{Purchase, PurchaseStatus, random_shard};
use domain::queue::entry::EntryStatus;
use domain::timestamp::Timestamp;

/// The actions of a release's transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ReleaseAction {
    /// The purchase expired, if still releasable.
    Purchase,
    /// Its unit back into its share.
    Share,
    /// Its buyer's count of the pack down by one.
    Buys,
    /// Its buyer's admission to the pack's line gets the unit back, inside their window (a
    /// purchase started through admission only).
    Allowance,
}

impl DynamoStore {
    /// Releases one expired hold: `expired`, its unit back into its share, its buyer's slot
    /// freed. The purchase's state alone decides (as in memory): the counts follow it with
    /// `ADD`, so a release never waits on them. `false` when another writer took the purchase
    /// first.
    pub(crate) async fn release(
        &self,
        purchase: &Purchase,
        now: Timestamp,
    ) -> Result<bool, StoreError> {
        let table = &self.table;
        let expired = update(
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
        )?;
        let unit_back = counter(
            table,
            share_key(&purchase.pack_id, purchase.supply_shard),
            PACK_REMAINING,
            1,
        )?;
        let count_down = counter(
            table,
            buys_key(&purchase.user_id, &purchase.pack_id),
            BUYS_HELD,
            -1,
        )?;
        let without_allowance = Transaction::new()
            .with(ReleaseAction::Purchase, expired)
            .with(ReleaseAction::Share, unit_back)
            .with(ReleaseAction::Buys, count_down)
            .emit(purchase_expired(purchase), now);
        let mut transaction = without_allowance.clone();
        if purchase.admitted {
            transaction.push(
                ReleaseAction::Allowance,
                update(
                    table,
                    entry_key(&purchase.pack_id, &purchase.user_id),
                    "SET #status = :admitted, #bought = #bought - :one",
                    &queue_conditions::allowance_back(now),
                    &[("#status", ENTRY_STATUS), ("#bought", ENTRY_BOUGHT)],
                    vec![
                        (":admitted", s(EntryStatus::Admitted.as_str())),
                        (":one", number(1)),
                    ],
                )?,
            );
        }
        let mut attempts = Attempts::new("release");
        loop {
            match self.run(transaction.clone()).await? {
                None => {
                    self.cache
                        .unit_returned(&purchase.pack_id, purchase.supply_shard);
                    // Counted here, where every release goes through (the sweep, a start before
                    // sold out or at the limit, a payment too late): no handler sees them all.
                    crate::metrics::count(crate::metrics::Metric::HoldsReleased);
                    return Ok(true);
                }
                Some(reasons) if reasons.failed(ReleaseAction::Purchase) => return Ok(false),
                // The fan's window has closed (or they are no longer admitted): the release
                // alone, their entry as it is.
                Some(reasons) if reasons.failed(ReleaseAction::Allowance) => {
                    transaction = without_allowance.clone();
                }
                Some(reasons) if reasons.conflicted() => {
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

    /// Releases up to `max` holds of `pack_id` that ended by `now`, from the holds of each of
    /// its shares in random order: bounded work, whatever the backlog of other packs. With
    /// [`Reach::NextEnd`], also when the next unit may come back (the first running hold of each
    /// share, read in the same Query: the index is in expiry order).
    pub(super) async fn release_pack_holds(
        &self,
        pack_id: &PackId,
        shards: u32,
        (now, max): (Timestamp, usize),
        reach: Reach,
    ) -> Result<(Released, Comeback), StoreError> {
        let first = random_shard(shards);
        let partitions = (0..shards)
            .map(|step| holds_pk(pack_id, (first + step) % shards))
            .collect();
        self.release_in(partitions, (now, max), reach).await
    }

    /// Releases up to `max` ended holds from the holds-index `partitions`, in order; and, with
    /// [`Reach::NextEnd`], when the earliest hold still running in them ends.
    async fn release_in(
        &self,
        partitions: Vec<String>,
        (now, max): (Timestamp, usize),
        reach: Reach,
    ) -> Result<(Released, Comeback), StoreError> {
        let mut report = Released::default();
        let bound = holds_ended_bound(now);
        let mut next_end = Comeback::Never;
        for partition in partitions {
            let mut start = None;
            // The next end reads one entry first: most often a running hold, and the partition
            // is done.
            let mut page = if reach == Reach::NextEnd { 1 } else { 100 };
            'partition: loop {
                let handled = report.released + report.lost_races + report.skipped;
                let left = (max as u64).saturating_sub(handled);
                if left == 0 {
                    report.more = true;
                    return Ok((report, Comeback::Unknown));
                }
                let query = self
                    .client
                    .query()
                    .table_name(&self.table)
                    .index_name(GSI2)
                    .expression_attribute_names("#pk", GSI2_PK)
                    .expression_attribute_values(":holds", s(&partition));
                let query = match reach {
                    Reach::Ended => query
                        .key_condition_expression("#pk = :holds AND #sk <= :ended")
                        .expression_attribute_names("#sk", GSI2_SK)
                        .expression_attribute_values(":ended", s(&bound)),
                    Reach::NextEnd => query.key_condition_expression("#pk = :holds"),
                };
                let output = query
                    .limit(i32::try_from(left.min(page)).unwrap_or(100))
                    .set_exclusive_start_key(start.take())
                    .send()
                    .await
                    .map_err(|e| classify("Query", e))?;
                page = 100;
                for item in output.items.unwrap_or_default() {
                    let entry = HoldEntry::of(&item);
                    if !entry.ended(&bound) {
                        next_end = next_end.earliest(entry.end());
                        break 'partition;
                    }
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
        Ok((report, next_end))
    }
}

/// How far a pass over holds partitions reads each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Reach {
    /// The holds that ended (the sweep).
    Ended,
    /// Those, then the first hold still running (a start before it answers sold out).
    NextEnd,
}

impl ReleaseHolds for DynamoStore {
    async fn release_holds(
        &self,
        pack_id: Option<&PackId>,
        now: Timestamp,
        max: usize,
    ) -> Result<Released, StoreError> {
        let partitions = match pack_id {
            Some(pack_id) => {
                let shards = self.stored_shards(pack_id).await?;
                let pass = self.release_pack_holds(pack_id, shards, (now, max), Reach::Ended);
                return Ok(pass.await?.0);
            }
            // The sweep: the holds of every listed pack, share by share.
            None => self
                .listed_supplies()
                .await?
                .into_iter()
                .flat_map(|listed| (0..listed.shards).map(move |k| holds_pk(&listed.pack_id, k)))
                .collect(),
        };
        Ok(self
            .release_in(partitions, (now, max), Reach::Ended)
            .await?
            .0)
    }
}
