//! A quest's pack reward: a purchase at price 0, paid when made, whose unit is taken from one of
//! the pack's shares inside the claim's own transaction (with the claim and its key item), so
//! that any number of concurrent claims make one purchase and take one unit.

use aws_sdk_dynamodb::types::TransactWriteItem;

use super::{buys_from_item, buys_key, purchase_item};
use crate::StoreError;
use crate::dynamo::records::{
    PURCHASE_VERSION, SCHEMA_VERSION, pack_from_item, share_key, share_units,
};
use crate::dynamo::transaction::{Transaction, put_new, update};
use crate::dynamo::{Attempts, DynamoStore, Item, key, number, s};
use crate::purchase_conditions as conditions;
use crate::quests::ClaimError;
use crate::schema::{BUYS_SEQ, ENTITY, PACK_REMAINING, PACK_SK, SHARE_SOLD, pack_pk};
use domain::events::NewEvent;
use domain::ids::PackId;
use domain::packs::Pack;
use domain::purchases::{Buys, StartRefusal, random_shard};
use domain::quests::{Claim, PackGrant};
use domain::timestamp::Timestamp;

/// The actions of a pack reward's claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RewardAction {
    /// The claim item (its key free: once per fan and quest).
    Claim,
    /// The claim's key item (its key free: a key names one claim).
    Key,
    /// A unit taken from a share (the pack selling, a unit left, its terms as read).
    Share,
    /// The buyer's last nonce moved on, as read (not their `held`: see `ClaimQuest`).
    Buys,
    /// The purchase, paid at 0 (its key free).
    Purchase,
}

/// What a pack reward's transaction came to.
pub(crate) enum PackClaimed {
    /// The claim, its key, the unit and the purchase written.
    Made,
    /// The fan's claim of the quest exists (as returned, when it was).
    ClaimTaken(Option<Item>),
    /// The key claimed another quest.
    KeyTaken,
}

/// Full reads of the pack's shares one claim may make (as a start, each read followed by a try
/// of every share it found a unit in) before it answers 503.
const MAX_SHARE_READS: u32 = 4;

impl DynamoStore {
    /// Claims `grant` for `claim` with the claim's two puts (`claimed`, `claim_key`) and its
    /// `events`: reads the
    /// pack's terms, the buyer's count and its shares, then tries the shares that had a unit,
    /// each in one transaction; a share found empty is left for the others, every share empty
    /// is `sold_out` with nothing written (holds that ran out come back with the sweep, and the
    /// quest stays claimable).
    pub(crate) async fn claim_pack(
        &self,
        claim: &Claim,
        grant: &PackGrant,
        (claimed, claim_key): (TransactWriteItem, TransactWriteItem),
        events: Vec<NewEvent>,
    ) -> Result<PackClaimed, ClaimError> {
        let now = claim.claimed_at;
        let (mut pack, mut buys) = self.reward_state(claim, &grant.pack_id).await?;
        let mut attempts = Attempts::new("reward");
        let mut candidates: Vec<u32> = Vec::new();
        let mut reads = 0;
        loop {
            grant.check(pack.as_ref(), now).map_err(ClaimError::Pack)?;
            let Some(terms) = pack.as_ref() else {
                return Err(ClaimError::Pack(StartRefusal::PackNotFound));
            };
            let shards = terms.shard_count();
            let Some(shard) = candidates.pop() else {
                if reads == MAX_SHARE_READS {
                    return Err(attempts.exhausted().into());
                }
                reads += 1;
                candidates = self.shares_with_units(&grant.pack_id, shards).await?;
                if candidates.is_empty() {
                    // Dead holds are left to the sweep (`release-holds`): releasing them here
                    // would give this function the holds index and every purchase's release.
                    return Err(ClaimError::Pack(StartRefusal::SoldOut));
                }
                continue;
            };
            let purchase = grant.purchase(&claim.user_id, terms, buys, shard, now);
            let transaction = Transaction::new()
                .with(RewardAction::Claim, claimed.clone())
                .with(RewardAction::Key, claim_key.clone())
                .with(
                    RewardAction::Share,
                    self.take_unit(grant, terms, shard, now)?,
                )
                .with(RewardAction::Buys, self.next_nonce(claim, grant, buys)?)
                .with(
                    RewardAction::Purchase,
                    put_new(&self.table, purchase_item(&purchase)?)?,
                )
                .emit(events.clone(), now);
            let Some(reasons) = self.run(transaction).await? else {
                return Ok(PackClaimed::Made);
            };
            if reasons.failed(RewardAction::Claim) {
                let existing = reasons.of(RewardAction::Claim).item.clone();
                return Ok(PackClaimed::ClaimTaken(existing));
            }
            if reasons.failed(RewardAction::Key) {
                return Ok(PackClaimed::KeyTaken);
            }
            if reasons.failed(RewardAction::Purchase) {
                return Err(StoreError::internal(
                    "claim: the reward's purchase exists without its claim",
                )
                .into());
            }
            let mut lost = false;
            let mut retry_share = true;
            if reasons.failed(RewardAction::Share) {
                if share_units(reasons.of(RewardAction::Share).item.as_ref()) == 0 {
                    // This share ran out: on to another, no attempt spent.
                    self.cache.mark_empty(&grant.pack_id, shard);
                    retry_share = false;
                } else {
                    // A unit is left, so the terms changed since they were read: read them.
                    self.cache.forget_terms(&grant.pack_id);
                    pack = self.reward_state(claim, &grant.pack_id).await?.0;
                    lost = true;
                }
            }
            if reasons.failed(RewardAction::Buys) {
                // The fan started a purchase of the pack meanwhile: their nonce moved on.
                buys = buys_from_item(reasons.of(RewardAction::Buys).item.as_ref())?;
                lost = true;
            }
            if retry_share {
                candidates.push(shard);
            }
            if reasons.conflicted() {
                attempts.after_conflict().await?;
            } else if lost {
                attempts.again()?;
            }
        }
    }

    /// The pack's terms and the buyer's count of it, strongly consistent.
    async fn reward_state(
        &self,
        claim: &Claim,
        pack_id: &PackId,
    ) -> Result<(Option<Pack>, Buys), StoreError> {
        let keys = [
            key(pack_pk(pack_id), PACK_SK),
            buys_key(&claim.user_id, pack_id),
        ];
        let mut items = self.batch_get_slice(&keys, true).await?.into_iter();
        let pack = items.next().flatten().map(pack_from_item).transpose()?;
        let buys = buys_from_item(items.next().flatten().as_ref())?;
        Ok((pack, buys))
    }

    /// The shares of a pack with a unit left (strongly consistent), from one at random, so
    /// that concurrent claims spread over them.
    async fn shares_with_units(
        &self,
        pack_id: &PackId,
        shards: u32,
    ) -> Result<Vec<u32>, StoreError> {
        let shares = self.read_shares(pack_id, shards, true).await?;
        self.cache.learn(pack_id, &shares);
        let first = random_shard(shards);
        Ok((0..shards)
            .map(|step| (first + step) % shards)
            .filter(|&k| shares[k as usize] > 0)
            .collect())
    }

    /// A unit of `pack`'s share `shard`, sold at once: its `remaining` down, its `sold` up, on
    /// the start's condition (the pack on sale, a unit left, its terms as read).
    fn take_unit(
        &self,
        grant: &PackGrant,
        pack: &Pack,
        shard: u32,
        now: Timestamp,
    ) -> Result<TransactWriteItem, StoreError> {
        update(
            &self.table,
            share_key(&grant.pack_id, shard),
            "SET #remaining = #remaining - :one ADD #sold :one",
            &conditions::share_sells(pack, now),
            &[("#remaining", PACK_REMAINING), ("#sold", SHARE_SOLD)],
            vec![(":one", number(1))],
        )
    }

    /// The buyer's last nonce moved on to the purchase's, on condition that it is as read.
    fn next_nonce(
        &self,
        claim: &Claim,
        grant: &PackGrant,
        buys: Buys,
    ) -> Result<TransactWriteItem, StoreError> {
        update(
            &self.table,
            buys_key(&claim.user_id, &grant.pack_id),
            "SET #seq = :next, #entity = :entity, #sv = :sv",
            &conditions::buys_as_read(buys, None),
            &[
                ("#seq", BUYS_SEQ),
                ("#entity", ENTITY),
                ("#sv", SCHEMA_VERSION),
            ],
            vec![
                (":next", number(buys.seq + 1)),
                (":entity", s("buys")),
                (":sv", number(PURCHASE_VERSION)),
            ],
        )
    }
}
