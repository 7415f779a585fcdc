//! Quests (`QUESTS` / `QUEST#<questId>`), a fan's claims (`USER#<userId>` / `CLAIM#<questId>`)
//! and their keys (`USER#<userId>` / `CLAIMKEY#<claimId>`) as records.

use serde::{Deserialize, Serialize};

use super::{read_record, readable, version_one};
use crate::StoreError;
use crate::dynamo::{Item, s};
use crate::schema::ENTITY;
use domain::ids::{PackId, PurchaseId, QuestId, UserId};
use domain::quests::{Claim, Quest, Reward};
use domain::timestamp::Timestamp;

/// The version of the quest, claim and claim-key items this release writes, and the newest it
/// reads.
pub(crate) const QUEST_VERSION: u32 = 1;

/// A quest item: the quest as the seeding resolved it, as one JSON text (`doc`), as a pack's
/// API document is kept.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct QuestRecord {
    #[serde(default = "version_one")]
    schema_version: u32,
    doc: String,
}

impl QuestRecord {
    pub(crate) fn new(quest: &Quest) -> Result<Self, StoreError> {
        Ok(Self {
            schema_version: QUEST_VERSION,
            doc: serde_json::to_string(quest)
                .map_err(|e| StoreError::internal_from("quest item", e))?,
        })
    }
}

impl TryFrom<QuestRecord> for Quest {
    type Error = StoreError;

    fn try_from(record: QuestRecord) -> Result<Self, StoreError> {
        readable("quest", record.schema_version, QUEST_VERSION)?;
        serde_json::from_str(&record.doc).map_err(|e| StoreError::internal_from("quest item", e))
    }
}

pub(crate) fn quest_from_item(item: Item) -> Result<Quest, StoreError> {
    read_record::<QuestRecord, _>(item, "quest")
}

/// A claim item's attributes (besides its keys and index keys).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ClaimRecord {
    #[serde(default = "version_one")]
    schema_version: u32,
    user_id: UserId,
    quest_id: QuestId,
    claim_id: String,
    /// The reward's kind: `cash` (with `amount` and `currency`) or `pack` (with `packId` and
    /// `purchaseId`, the purchase the claim made). Version 1 items written before pack rewards
    /// are all `cash`, and read as they are.
    reward: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    amount: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    currency: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pack_id: Option<PackId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    purchase_id: Option<PurchaseId>,
    claimed_at: Timestamp,
}

impl From<&Claim> for ClaimRecord {
    fn from(claim: &Claim) -> Self {
        let mut record = Self {
            schema_version: QUEST_VERSION,
            user_id: claim.user_id.clone(),
            quest_id: claim.quest_id.clone(),
            claim_id: claim.claim_id.clone(),
            reward: String::new(),
            amount: None,
            currency: None,
            pack_id: None,
            purchase_id: claim.purchase_id.clone(),
            claimed_at: claim.claimed_at,
        };
        match &claim.reward {
            Reward::Cash { amount, currency } => {
                record.reward = "cash".into();
                record.amount = Some(*amount);
                record.currency = Some(currency.clone());
            }
            Reward::Pack { pack_id } => {
                record.reward = "pack".into();
                record.pack_id = Some(pack_id.clone());
            }
        }
        record
    }
}

impl TryFrom<ClaimRecord> for Claim {
    type Error = StoreError;

    fn try_from(record: ClaimRecord) -> Result<Self, StoreError> {
        readable("claim", record.schema_version, QUEST_VERSION)?;
        let reward = match (record.reward.as_str(), record.amount, record.currency) {
            ("cash", Some(amount), Some(currency)) => Reward::Cash { amount, currency },
            ("pack", None, None) => Reward::Pack {
                pack_id: record
                    .pack_id
                    .ok_or_else(|| StoreError::internal("claim item: a pack reward's pack"))?,
            },
            _ => return Err(StoreError::internal("claim item: an unknown reward")),
        };
        Ok(Claim {
            user_id: record.user_id,
            quest_id: record.quest_id,
            claim_id: record.claim_id,
            reward,
            purchase_id: record.purchase_id,
            claimed_at: record.claimed_at,
        })
    }
}

pub(crate) fn claim_item(claim: &Claim) -> Result<Item, StoreError> {
    let mut item: Item = serde_dynamo::to_item(ClaimRecord::from(claim))
        .map_err(|e| StoreError::internal_from("claim item", e))?;
    item.insert(ENTITY.into(), s("claim"));
    Ok(item)
}

pub(crate) fn claim_from_item(item: Item) -> Result<Claim, StoreError> {
    read_record::<ClaimRecord, _>(item, "claim")
}

/// A claim key item: the quest its key claimed.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ClaimKeyRecord {
    #[serde(default = "version_one")]
    schema_version: u32,
    quest_id: QuestId,
}

pub(crate) fn claim_key_item(quest_id: &QuestId) -> Result<Item, StoreError> {
    let mut item: Item = serde_dynamo::to_item(ClaimKeyRecord {
        schema_version: QUEST_VERSION,
        quest_id: quest_id.clone(),
    })
    .map_err(|e| StoreError::internal_from("claim key item", e))?;
    item.insert(ENTITY.into(), s("claim-key"));
    Ok(item)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dynamo::number;
    use crate::dynamo::records::SCHEMA_VERSION;

    #[test]
    fn a_claim_reads_back_as_written_and_a_newer_version_is_refused() {
        let pack = Claim {
            user_id: UserId::parse("fan-1").unwrap(),
            quest_id: QuestId::parse("rookie-double").unwrap(),
            claim_id: "def".into(),
            reward: Reward::Pack {
                pack_id: PackId::parse("nba-rookie-2026").unwrap(),
            },
            purchase_id: Some(PurchaseId::parse("p1").unwrap()),
            claimed_at: Timestamp::parse("2026-11-26T04:00:00Z").unwrap(),
        };
        assert_eq!(claim_from_item(claim_item(&pack).unwrap()).unwrap(), pack);
        let claim = Claim {
            user_id: UserId::parse("fan-1").unwrap(),
            quest_id: QuestId::parse("first-pack").unwrap(),
            claim_id: "abc".into(),
            reward: Reward::Cash {
                amount: 100,
                currency: "USD".into(),
            },
            purchase_id: None,
            claimed_at: Timestamp::parse("2026-11-26T04:00:00Z").unwrap(),
        };
        let item = claim_item(&claim).unwrap();
        assert_eq!(item.get(SCHEMA_VERSION), Some(&number(QUEST_VERSION)));
        assert_eq!(claim_from_item(item.clone()).unwrap(), claim);
        let mut newer = item;
        newer.insert(SCHEMA_VERSION.into(), number(QUEST_VERSION + 1));
        assert!(claim_from_item(newer).is_err());
    }
}
