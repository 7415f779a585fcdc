//! Quests on DynamoDB: the operator's quests (`QUESTS` / `QUEST#<questId>`), a fan's claims
//! (`USER#<userId>` / `CLAIM#<questId>`, listed on GSI3 `REWARDS#<userId>`) and their keys
//! (`USER#<userId>` / `CLAIMKEY#<claimId>`).

use std::collections::BTreeSet;

use super::fan_view::{Filter, NewestFirst, index_key};
use super::records::{QuestRecord, claim_from_item, claim_item, claim_key_item, quest_from_item};
use super::transaction::put_new;
use super::{DynamoStore, Item, classify, key, s};
use crate::cash::Credit;
use crate::ids::{QuestId, UserId};
use crate::purchases::mine::Page;
use crate::quests::{Claim, Quest};
use crate::store::StoreError;
use crate::store::quests::{
    ClaimError, ClaimQuest, Claimed, GetClaims, GetQuest, ListClaims, ListQuests, SeedQuests,
};
use crate::store::schema::{
    CLAIM_PREFIX, ENTITY, GSI3, GSI3_PK, GSI3_SK, PK, QUEST_PREFIX, QUESTS_PK, SK, claim_key_sk,
    claim_sk, quest_sk, rewards_pk, user_pk,
};

/// The actions of a claim's transaction after the credit's two (its entry, the balance).
const CLAIM_ACTION: usize = 2;
const KEY_ACTION: usize = 3;

impl DynamoStore {
    /// Every item of `pk` whose sort key begins with `prefix`, strongly consistent or not.
    async fn query_prefix(
        &self,
        pk: String,
        prefix: &str,
        consistent: bool,
    ) -> Result<Vec<Item>, StoreError> {
        let mut items = Vec::new();
        let mut start = None;
        loop {
            let output = self
                .client
                .query()
                .table_name(&self.table)
                .key_condition_expression("#pk = :pk AND begins_with(#sk, :prefix)")
                .expression_attribute_names("#pk", PK)
                .expression_attribute_names("#sk", SK)
                .expression_attribute_values(":pk", s(pk.clone()))
                .expression_attribute_values(":prefix", s(prefix))
                .consistent_read(consistent)
                .set_exclusive_start_key(start)
                .send()
                .await
                .map_err(|e| classify("Query", e))?;
            items.extend(output.items.unwrap_or_default());
            start = output.last_evaluated_key.filter(|key| !key.is_empty());
            if start.is_none() {
                return Ok(items);
            }
        }
    }

    async fn get(&self, key: Item, consistent: bool) -> Result<Option<Item>, StoreError> {
        let output = self
            .client
            .get_item()
            .table_name(&self.table)
            .set_key(Some(key))
            .consistent_read(consistent)
            .send()
            .await
            .map_err(|e| classify("GetItem", e))?;
        Ok(output.item)
    }
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
        self.get(key(QUESTS_PK.into(), &quest_sk(quest_id)), false)
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
        self.get(key(user_pk(user_id), &claim_sk(quest_id)), true)
            .await?
            .map(claim_from_item)
            .transpose()
    }
}

impl ClaimQuest for DynamoStore {
    async fn claim_quest(&self, claim: &Claim, credit: &Credit) -> Result<Claimed, ClaimError> {
        let mut claimed = claim_item(claim)?;
        claimed.extend(key(user_pk(&claim.user_id), &claim_sk(&claim.quest_id)));
        claimed.insert(GSI3_PK.into(), s(rewards_pk(&claim.user_id)));
        claimed.insert(GSI3_SK.into(), s(claim.list_key()));
        let mut claim_key = claim_key_item(&claim.quest_id)?;
        claim_key.extend(key(user_pk(&claim.user_id), &claim_key_sk(&claim.claim_id)));
        let more = [
            put_new(&self.table, claimed)?,
            put_new(&self.table, claim_key)?,
        ];
        let Some(reasons) = self
            .transact_credit(credit, claim.claimed_at, &more)
            .await?
        else {
            return Ok(Claimed::Created(claim.clone()));
        };
        let failed = |at: usize| reasons.get(at).is_some_and(|r| r.condition_failed());
        if failed(CLAIM_ACTION) {
            // Claimed before (by a concurrent claim, or an earlier one): answer that claim.
            let existing = match reasons[CLAIM_ACTION].item.clone() {
                Some(item) => claim_from_item(item)?,
                None => self
                    .get_claim(&claim.user_id, &claim.quest_id)
                    .await?
                    .ok_or_else(|| StoreError::internal("claim: refused but not found"))?,
            };
            return Ok(Claimed::Repeated(existing));
        }
        if failed(KEY_ACTION) {
            return Err(ClaimError::KeyReused);
        }
        if failed(0) {
            return Err(
                StoreError::internal("claim: the quest's credit exists without its claim").into(),
            );
        }
        Err(ClaimError::BalanceFull)
    }
}

impl ListClaims for DynamoStore {
    async fn list_claims(
        &self,
        user_id: &UserId,
        limit: usize,
        after: Option<&str>,
    ) -> Result<Page<Claim>, StoreError> {
        let query = NewestFirst {
            index: GSI3,
            pk_name: GSI3_PK,
            sk_name: GSI3_SK,
            pk: rewards_pk(user_id),
            below: after.map(|after| (after, false)),
            filter: Filter::default(),
        };
        self.page_newest(
            &query,
            |found| limit - found,
            |item, page| {
                page.push(claim_from_item(item)?);
                Ok(None)
            },
            |last| index_key(last, GSI3_SK),
        )
        .await
    }
}
