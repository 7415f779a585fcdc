//! Quests on DynamoDB: the operator's quests (`QUESTS` / `QUEST#<questId>`), a fan's claims
//! (`USER#<userId>` / `CLAIM#<questId>`, listed on GSI3 `REWARDS#<userId>`) and their keys
//! (`USER#<userId>` / `CLAIMKEY#<claimId>`). A Cash reward is written with the ledger's credit
//! (`cash.rs`), a pack reward with its purchase (`purchases/reward.rs`).

use std::collections::BTreeSet;

use aws_sdk_dynamodb::types::TransactWriteItem;

use super::cash::CreditAction;
use super::purchases::PackClaimed;
use super::records::{QuestRecord, claim_from_item, claim_item, claim_key_item, quest_from_item};
use super::transaction::put_new;
use super::{DynamoStore, Item, classify, key, s};
use crate::StoreError;
use crate::quests::{
    ClaimError, ClaimQuest, Claimed, GetClaims, GetQuest, ListClaims, ListQuests, SeedQuests,
    credit_refused,
};
use crate::schema::{
    CLAIM_PREFIX, ENTITY, GSI3_PK, GSI3_SK, QUEST_PREFIX, QUESTS_PK, claim_key_sk, claim_sk,
    quest_sk, rewards_pk, user_pk,
};
use domain::cash::Credit;
use domain::events::NewEvent;
use domain::events::money::quest_reward_claimed;
use domain::ids::{QuestId, UserId};
use domain::purchases::mine::Page;
use domain::quests::{Claim, Grant, Quest};

/// The actions of a Cash claim's transaction after the credit's two (its entry, the balance).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ClaimAction {
    /// The fan's claim of the quest (its key free).
    Claim,
    /// The claim's idempotency key (its key free).
    Key,
}

impl SeedQuests for DynamoStore {
    async fn seed_quests(&self, quests: &[Quest]) -> Result<(), StoreError> {
        for quest in quests {
            let mut item: Item = serde_dynamo::to_item(QuestRecord::new(quest)?)
                .map_err(|e| StoreError::internal_from("quest item", e))?;
            item.extend(key(QUESTS_PK.into(), &quest_sk(&quest.id)));
            item.insert(ENTITY.into(), s("quest"));
            self.client
                .put_item()
                .table_name(&self.table)
                .set_item(Some(item))
                .send()
                .await
                .map_err(|e| classify("PutItem", e))?;
        }
        Ok(())
    }
}

impl ListQuests for DynamoStore {
    async fn list_quests(&self) -> Result<Vec<Quest>, StoreError> {
        self.query_prefix(QUESTS_PK.into(), QUEST_PREFIX, false)
            .await?
            .into_iter()
            .map(quest_from_item)
            .collect()
    }
}

impl GetQuest for DynamoStore {
    async fn get_quest(&self, quest_id: &QuestId) -> Result<Option<Quest>, StoreError> {
        self.get_item(key(QUESTS_PK.into(), &quest_sk(quest_id)), false)
            .await?
            .map(quest_from_item)
            .transpose()
    }
}

impl GetClaims for DynamoStore {
    async fn claimed_quests(&self, user_id: &UserId) -> Result<BTreeSet<QuestId>, StoreError> {
        self.query_prefix(user_pk(user_id), CLAIM_PREFIX, true)
            .await?
            .into_iter()
            .map(|item| claim_from_item(item).map(|claim| claim.quest_id))
            .collect()
    }

    async fn get_claim(
        &self,
        user_id: &UserId,
        quest_id: &QuestId,
    ) -> Result<Option<Claim>, StoreError> {
        self.get_item(key(user_pk(user_id), &claim_sk(quest_id)), true)
            .await?
            .map(claim_from_item)
            .transpose()
    }
}

impl DynamoStore {
    /// A claim taken before (by a concurrent claim, or an earlier one): that claim, as the
    /// cancellation returned it or read again.
    async fn claim_taken(&self, claim: &Claim, item: Option<Item>) -> Result<Claimed, ClaimError> {
        let existing = match item {
            Some(item) => claim_from_item(item)?,
            None => self
                .get_claim(&claim.user_id, &claim.quest_id)
                .await?
                .ok_or_else(|| StoreError::internal("claim: refused but not found"))?,
        };
        Ok(Claimed::Repeated(existing))
    }

    /// A pack refused before any transaction was tried: a claim made (its unit the last, say)
    /// still answers, and a key of another claim is still refused, in the memory store's order.
    async fn pack_refused(
        &self,
        claim: &Claim,
        refusal: domain::purchases::StartRefusal,
    ) -> Result<Claimed, ClaimError> {
        let user = user_pk(&claim.user_id);
        let keys = [
            key(user.clone(), &claim_sk(&claim.quest_id)),
            key(user, &claim_key_sk(&claim.claim_id)),
        ];
        let mut items = self.batch_get_slice(&keys, true).await?.into_iter();
        if let Some(existing) = items.next().flatten() {
            return Ok(Claimed::Repeated(claim_from_item(existing)?));
        }
        if items.next().flatten().is_some() {
            return Err(ClaimError::KeyReused);
        }
        Err(ClaimError::Pack(refusal))
    }

    /// A Cash reward: the credit's two actions, then the claim's.
    async fn claim_cash(
        &self,
        claim: &Claim,
        credit: &Credit,
        [claimed, claim_key]: [TransactWriteItem; 2],
        events: &[NewEvent],
    ) -> Result<Claimed, ClaimError> {
        let more = [(ClaimAction::Claim, claimed), (ClaimAction::Key, claim_key)];
        let Some(reasons) = self
            .transact_credit(credit, claim.claimed_at, &more, events)
            .await?
        else {
            return Ok(Claimed::Created(claim.clone()));
        };
        let claim_action = CreditAction::More(ClaimAction::Claim);
        if reasons.failed(claim_action) {
            return self
                .claim_taken(claim, reasons.of(claim_action).item.clone())
                .await;
        }
        if reasons.failed(CreditAction::More(ClaimAction::Key)) {
            return Err(ClaimError::KeyReused);
        }
        Err(credit_refused(reasons.failed(CreditAction::Entry)))
    }
}

impl ClaimQuest for DynamoStore {
    async fn claim_quest(&self, claim: &Claim, grant: &Grant) -> Result<Claimed, ClaimError> {
        let mut claimed = claim_item(claim)?;
        claimed.extend(key(user_pk(&claim.user_id), &claim_sk(&claim.quest_id)));
        claimed.insert(GSI3_PK.into(), s(rewards_pk(&claim.user_id)));
        claimed.insert(GSI3_SK.into(), s(claim.list_key()));
        let mut claim_key = claim_key_item(&claim.quest_id)?;
        claim_key.extend(key(user_pk(&claim.user_id), &claim_key_sk(&claim.claim_id)));
        let puts = [
            put_new(&self.table, claimed)?,
            put_new(&self.table, claim_key)?,
        ];
        let events = quest_reward_claimed(claim, grant);
        match grant {
            Grant::Cash(credit) => self.claim_cash(claim, credit, puts, &events).await,
            Grant::Pack(pack) => {
                let [claimed, claim_key] = puts;
                match self
                    .claim_pack(claim, pack, (claimed, claim_key), events)
                    .await
                {
                    Ok(PackClaimed::Made) => Ok(Claimed::Created(claim.clone())),
                    Ok(PackClaimed::ClaimTaken(item)) => self.claim_taken(claim, item).await,
                    Ok(PackClaimed::KeyTaken) => Err(ClaimError::KeyReused),
                    Err(ClaimError::Pack(refusal)) => self.pack_refused(claim, refusal).await,
                    Err(error) => Err(error),
                }
            }
        }
    }
}

impl ListClaims for DynamoStore {
    async fn list_claims(
        &self,
        user_id: &UserId,
        limit: usize,
        after: Option<&str>,
    ) -> Result<Page<Claim>, StoreError> {
        self.page_of_gsi3(rewards_pk(user_id), limit, after, claim_from_item)
            .await
    }
}
