//! Quests and their claims in memory.

use std::collections::BTreeSet;

use super::items::{Present, ShareItem};
use super::{MemoryStore, Tables, newest_page};
use crate::StoreError;
use crate::cash::{CreditCashError, CreditOutcome};
use crate::condition::{Attributes, Condition, require};
use crate::purchase_conditions as conditions;
use crate::quests::{
    ClaimError, ClaimQuest, Claimed, GetClaims, GetQuest, ListClaims, ListQuests, SeedQuests,
    credit_refused,
};
use domain::events::money::quest_reward_claimed;
use domain::ids::{QuestId, UserId};
use domain::purchases::mine::Page;
use domain::purchases::{Buys, StartRefusal, random_shard};
use domain::quests::{Claim, Grant, PackGrant, Quest};

impl SeedQuests for MemoryStore {
    async fn seed_quests(&self, quests: &[Quest]) -> Result<(), StoreError> {
        let mut tables = self.write();
        for quest in quests {
            tables.quests.insert(quest.id.clone(), quest.clone());
        }
        Ok(())
    }
}

impl ListQuests for MemoryStore {
    async fn list_quests(&self) -> Result<Vec<Quest>, StoreError> {
        Ok(self.read().quests.values().cloned().collect())
    }
}

impl GetQuest for MemoryStore {
    async fn get_quest(&self, quest_id: &QuestId) -> Result<Option<Quest>, StoreError> {
        Ok(self.read().quests.get(quest_id).cloned())
    }
}

impl GetClaims for MemoryStore {
    async fn claimed_quests(&self, user_id: &UserId) -> Result<BTreeSet<QuestId>, StoreError> {
        Ok(self
            .read()
            .claims
            .keys()
            .filter(|(user, _)| user == user_id)
            .map(|(_, quest)| quest.clone())
            .collect())
    }

    async fn get_claim(
        &self,
        user_id: &UserId,
        quest_id: &QuestId,
    ) -> Result<Option<Claim>, StoreError> {
        Ok(self
            .read()
            .claims
            .get(&(user_id.clone(), quest_id.clone()))
            .cloned())
    }
}

impl Tables {
    /// A Cash reward: its credit, as DynamoDB's transaction writes it.
    fn grant_cash(
        &mut self,
        claim: &Claim,
        credit: &domain::cash::Credit,
    ) -> Result<(), ClaimError> {
        match self.credit(credit, claim.claimed_at) {
            Ok(CreditOutcome::Credited { .. }) => Ok(()),
            Ok(CreditOutcome::AlreadyCredited) | Err(CreditCashError::ReferenceReused) => {
                Err(credit_refused(true))
            }
            Err(CreditCashError::BalanceFull) => Err(credit_refused(false)),
            Err(CreditCashError::Store(error)) => Err(error.into()),
        }
    }

    /// A pack reward: a unit of a share with one, the buyer's next nonce and the purchase, paid at 0, checked against the
    /// conditions DynamoDB's transaction puts on the same writes.
    fn grant_pack(&mut self, claim: &Claim, grant: &PackGrant) -> Result<(), ClaimError> {
        let now = claim.claimed_at;
        let pack = self
            .packs
            .get(grant.pack_id.as_str())
            .map(|s| s.pack.clone());
        grant.check(pack.as_ref(), now).map_err(ClaimError::Pack)?;
        let Some(pack) = pack else {
            return Err(ClaimError::Pack(StartRefusal::PackNotFound));
        };
        // As on DynamoDB, holds that ran out are left to the sweep.
        let shard = self
            .share_with_a_unit(&grant.pack_id, random_shard(pack.shard_count()))
            .ok_or(ClaimError::Pack(StartRefusal::SoldOut))?;
        let buys_at = (claim.user_id.clone(), grant.pack_id.clone());
        let buys = self.buys.get(&buys_at).copied().unwrap_or_default();
        let purchase = grant.purchase(&claim.user_id, &pack, buys, shard, now);
        let at = (claim.user_id.clone(), purchase.id.clone());
        let share = ShareItem {
            pack: &pack,
            remaining: self.supply[pack.id.as_str()][shard as usize],
        };
        require(
            "claim: share",
            &conditions::share_sells(&pack, now),
            Some(&share),
        )?;
        require(
            "claim: buyer's nonce",
            &conditions::buys_as_read(buys, None),
            self.buys.get(&buys_at).map(|b| b as &dyn Attributes),
        )?;
        require(
            "claim: purchase",
            &Condition::new_item(),
            self.purchases.get(&at).map(|_| &Present as &dyn Attributes),
        )?;
        self.move_units(&grant.pack_id, shard, -1, now);
        *self.sold.entry(grant.pack_id.to_string()).or_default() += 1;
        // Its own nonce, not one of the buyer's `held` (see `ClaimQuest`).
        self.buys.insert(
            buys_at,
            Buys {
                seq: purchase.nonce,
                held: buys.held,
            },
        );
        self.purchases.insert(at, purchase);
        Ok(())
    }
}

impl ClaimQuest for MemoryStore {
    async fn claim_quest(&self, claim: &Claim, grant: &Grant) -> Result<Claimed, ClaimError> {
        // One lock around the checks and the writes, as DynamoDB applies the transaction.
        let mut tables = self.write();
        let quest_key = (claim.user_id.clone(), claim.quest_id.clone());
        if let Some(existing) = tables.claims.get(&quest_key) {
            return Ok(Claimed::Repeated(existing.clone()));
        }
        let key = (claim.user_id.clone(), claim.claim_id.clone());
        if tables.claim_keys.contains_key(&key) {
            return Err(ClaimError::KeyReused);
        }
        match grant {
            Grant::Cash(credit) => tables.grant_cash(claim, credit)?,
            Grant::Pack(pack) => tables.grant_pack(claim, pack)?,
        }
        tables.claim_keys.insert(key, claim.quest_id.clone());
        tables.claims.insert(quest_key, claim.clone());
        tables.emit(quest_reward_claimed(claim, grant), claim.claimed_at);
        Ok(Claimed::Created(claim.clone()))
    }
}

impl ListClaims for MemoryStore {
    async fn list_claims(
        &self,
        user_id: &UserId,
        limit: usize,
        after: Option<&str>,
    ) -> Result<Page<Claim>, StoreError> {
        let tables = self.read();
        let claims = tables
            .claims
            .values()
            .filter(|claim| claim.user_id == *user_id)
            .map(|claim| (claim.list_key(), claim));
        Ok(newest_page(claims, limit, after))
    }
}
