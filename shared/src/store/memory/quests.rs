//! Quests and their claims in memory.

use std::collections::BTreeSet;

use super::MemoryStore;
use crate::cash::Credit;
use crate::ids::{QuestId, UserId};
use crate::purchases::mine::Page;
use crate::quests::{Claim, Quest};
use crate::store::StoreError;
use crate::store::cash::{CreditCashError, CreditOutcome};
use crate::store::quests::{
    ClaimError, ClaimQuest, Claimed, GetClaims, GetQuest, ListClaims, ListQuests, SeedQuests,
};

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

impl ClaimQuest for MemoryStore {
    async fn claim_quest(&self, claim: &Claim, credit: &Credit) -> Result<Claimed, ClaimError> {
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
        match tables.credit(credit, claim.claimed_at) {
            Ok(CreditOutcome::Credited { .. }) => {}
            Ok(CreditOutcome::AlreadyCredited) | Err(CreditCashError::ReferenceReused) => {
                return Err(StoreError::internal(
                    "claim: the quest's credit exists without its claim",
                )
                .into());
            }
            Err(CreditCashError::BalanceFull) => return Err(ClaimError::BalanceFull),
            Err(CreditCashError::Store(error)) => return Err(error.into()),
        }
        tables.claim_keys.insert(key, claim.quest_id.clone());
        tables.claims.insert(quest_key, claim.clone());
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
        let mut claims: Vec<&Claim> = tables
            .claims
            .values()
            .filter(|claim| claim.user_id == *user_id)
            .filter(|claim| after.is_none_or(|after| claim.list_key().as_str() < after))
            .collect();
        claims.sort_by_key(|claim| std::cmp::Reverse(claim.list_key()));
        let more = claims.len() > limit;
        claims.truncate(limit);
        Ok(Page {
            next: more
                .then(|| claims.last().map(|claim| claim.list_key()))
                .flatten(),
            entries: claims.into_iter().cloned().collect(),
        })
    }
}
