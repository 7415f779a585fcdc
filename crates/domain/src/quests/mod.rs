//! Quests: goals the operator seeds (like packs) that a fan meets by opening packs and owning
//! items, each with a reward claimed once: Cash credited to the fan's balance, or a pack (a paid
//! purchase at price 0 taking a unit of the pack's supply, opened as any purchase).
//!
//! Progress is computed, never kept: from the fan's opened purchases (the items index the fan's
//! `GET /api/me/items` reads), at the time of the request. An opening therefore costs nothing
//! more than it did, a quest seeded after a fan's openings counts them at once (those in its
//! window, for `open_packs`), and progress cannot drift from the items it counts. Completion is
//! monotonic (openings are never undone), so a claim decided on a read cannot be made wrong by a
//! later write.

pub mod seed;

use std::collections::BTreeSet;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};

use crate::cash::Money;
use crate::ids::{LeagueId, PackId, PurchaseId, QuestId, UserId};
use crate::packs::Pack;
use crate::purchases::mine::MyItem;
use crate::purchases::{Buys, Purchase, PurchaseStatus, StartRefusal, check_start};
use crate::timestamp::Timestamp;

/// How long after its end a quest's reward may still be claimed.
pub const CLAIM_GRACE_SECONDS: i64 = 7 * 24 * 3600;

/// What a quest asks of a fan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
#[schema(as = QuestGoal)]
pub enum Goal {
    /// Open `count` packs within the quest's window (of one league's or one pack's).
    OpenPacks {
        #[schema(minimum = 1)]
        count: u32,
        #[serde(rename = "leagueId", default, skip_serializing_if = "Option::is_none")]
        #[schema(value_type = Option<crate::json_schema::Id>)]
        league_id: Option<LeagueId>,
        #[serde(rename = "packId", default, skip_serializing_if = "Option::is_none")]
        #[schema(value_type = Option<crate::json_schema::Id>)]
        pack_id: Option<PackId>,
    },
    /// Own every one of these items.
    CollectItems {
        #[serde(rename = "itemIds")]
        #[schema(value_type = Vec<crate::json_schema::Id>, min_items = 1)]
        item_ids: Vec<String>,
    },
    /// Own `count` items of a rarity (from one league's packs).
    CollectRarity {
        #[schema(min_length = 1, max_length = 32)]
        rarity: String,
        #[schema(minimum = 1)]
        count: u32,
        #[serde(rename = "leagueId", default, skip_serializing_if = "Option::is_none")]
        #[schema(value_type = Option<crate::json_schema::Id>)]
        league_id: Option<LeagueId>,
    },
}

/// What a completed quest gives, once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
#[schema(as = QuestReward)]
pub enum Reward {
    /// Cash credited to the fan's balance, with a ledger entry naming the quest.
    Cash {
        #[schema(minimum = 1)]
        amount: u64,
        #[schema(value_type = crate::json_schema::Currency)]
        currency: String,
    },
    /// A pack: a purchase of it at price 0, already paid, that takes a unit of its supply like
    /// any purchase and is opened like one (409 `sold_out` while none is left: the quest stays
    /// claimable until it ends).
    Pack {
        #[serde(rename = "packId")]
        #[schema(value_type = crate::json_schema::Id)]
        pack_id: PackId,
    },
}

/// A quest as seeded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Quest {
    pub id: QuestId,
    pub name: String,
    pub description: String,
    pub starts_at: Timestamp,
    pub ends_at: Timestamp,
    pub goal: Goal,
    pub reward: Reward,
    /// The packs a goal with a `leagueId` counts, resolved by the seeding from the packs it
    /// knows (re-seeding resolves them again); never shown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub league_packs: Option<BTreeSet<PackId>>,
}

impl Quest {
    /// Whether the quest is on at `now` (listed, counting openings).
    pub fn is_active(&self, now: Timestamp) -> bool {
        self.starts_at <= now && now < self.ends_at
    }

    /// The last instant its reward may be claimed.
    pub fn claimable_until(&self) -> Timestamp {
        self.ends_at
            .plus_seconds(CLAIM_GRACE_SECONDS)
            .unwrap_or(self.ends_at)
    }

    /// Whether `pack_id`'s openings and items count towards the goal.
    fn counts_pack(&self, pack_id: &PackId) -> bool {
        self.league_packs
            .as_ref()
            .is_none_or(|packs| packs.contains(pack_id))
    }
}

/// A fan's progress on a quest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = QuestProgress)]
pub struct Progress {
    /// Towards `target`, never above it.
    pub current: u64,
    pub target: u64,
    pub completed: bool,
    pub claimed: bool,
}

/// The fan's progress on `quest` from every item they pulled (`items`, any order), and whether
/// they claimed it.
pub fn progress(quest: &Quest, items: &[MyItem], claimed: bool) -> Progress {
    let (current, target) = match &quest.goal {
        Goal::OpenPacks { count, pack_id, .. } => {
            let opened: BTreeSet<&PurchaseId> = items
                .iter()
                .filter(|mine| {
                    quest.starts_at <= mine.opened_at
                        && mine.opened_at < quest.ends_at
                        && quest.counts_pack(&mine.pack_id)
                        && pack_id.as_ref().is_none_or(|id| mine.pack_id == *id)
                })
                .map(|mine| &mine.purchase_id)
                .collect();
            (opened.len() as u64, u64::from(*count))
        }
        Goal::CollectItems { item_ids } => {
            let owned: BTreeSet<&str> = items.iter().map(|m| m.item.item_id.as_str()).collect();
            let wanted: BTreeSet<&str> = item_ids.iter().map(String::as_str).collect();
            (
                wanted.intersection(&owned).count() as u64,
                wanted.len() as u64,
            )
        }
        Goal::CollectRarity { rarity, count, .. } => (
            items
                .iter()
                .filter(|m| m.item.rarity == *rarity && quest.counts_pack(&m.pack_id))
                .count() as u64,
            u64::from(*count),
        ),
    };
    Progress {
        current: current.min(target),
        target,
        completed: current >= target,
        claimed,
    }
}

/// A reward a fan claimed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    pub user_id: UserId,
    pub quest_id: QuestId,
    /// Derived from the fan and the claim's `Idempotency-Key` ([`claim_id`]).
    pub claim_id: String,
    pub reward: Reward,
    /// A pack reward's purchase ([`reward_purchase_id`]); `None` for Cash.
    pub purchase_id: Option<PurchaseId>,
    pub claimed_at: Timestamp,
}

impl Claim {
    /// The claim of `quest` by `user_id` with `idempotency_key` at `now`, giving `grant`.
    pub fn new(
        quest: &Quest,
        user_id: &UserId,
        idempotency_key: &str,
        grant: &Grant,
        now: Timestamp,
    ) -> Self {
        Self {
            user_id: user_id.clone(),
            quest_id: quest.id.clone(),
            claim_id: claim_id(user_id, idempotency_key),
            reward: quest.reward.clone(),
            purchase_id: match grant {
                Grant::Cash(_) => None,
                Grant::Pack(pack) => Some(pack.purchase_id.clone()),
            },
            claimed_at: now,
        }
    }

    /// Its key in the fan's rewards list: newest first, then by quest.
    pub fn list_key(&self) -> String {
        crate::timestamp::time_key(self.claimed_at, self.quest_id.as_str())
    }
}

/// A claim's id: from the fan and the `Idempotency-Key`, as a purchase's is.
pub fn claim_id(user_id: &UserId, idempotency_key: &str) -> String {
    let digest = aws_lc_rs::digest::digest(
        &aws_lc_rs::digest::SHA256,
        format!("claim-v1\n{user_id}\n{idempotency_key}").as_bytes(),
    );
    URL_SAFE_NO_PAD.encode(&digest.as_ref()[..16])
}

/// The reference of a quest's Cash credit to a fan: one per fan and quest, so the credit
/// ledger's own condition (a reference credits once) also holds a claim to one credit.
pub fn credit_reference(quest_id: &QuestId, user_id: &UserId) -> String {
    format!("{QUEST_REFERENCE_PREFIX}{quest_id}:{user_id}")
}

/// The quest a credit's reference names, when it is a quest's.
pub fn quest_of_reference(reference: &str) -> Option<QuestId> {
    let rest = reference.strip_prefix(QUEST_REFERENCE_PREFIX)?;
    QuestId::parse(rest.split_once(':')?.0).ok()
}

/// The references of quests' credits: only the claim function writes them (IAM), and
/// `cash-credit` refuses them.
pub const QUEST_REFERENCE_PREFIX: &str = "quest:";

/// What a claim of `quest` by `user_id` gives, as the store writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Grant {
    /// A Cash reward: its credit, in the claim's transaction.
    Cash(crate::cash::Credit),
    /// A pack reward: its purchase, in the claim's transaction.
    Pack(PackGrant),
}

/// A pack reward's purchase: paid at price 0 when it is made, its unit taken from one of the
/// pack's shares, its nonce the buyer's next (never reused, so its draw is its own).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackGrant {
    pub pack_id: PackId,
    pub purchase_id: PurchaseId,
    /// Picked by the server, as for a start without one.
    pub client_seed: String,
}

impl PackGrant {
    /// Whether the reward's pack can be had at `now`: as a start checks it, without the
    /// buyer's `maxPerUser` (a reward is not a purchase the fan chose; the quest already caps it
    /// to one per fan). Whether a unit is left is the supply's to say.
    pub fn check(&self, pack: Option<&Pack>, now: Timestamp) -> Result<(), StartRefusal> {
        check_start(pack, Buys::default(), now)
    }

    /// The reward's purchase for `user_id`, its unit from share `shard` of `pack`: paid at
    /// price 0 when made (as a purchase paid through `complete-purchase` looks, so it is read
    /// and opened like one), its nonce the buyer's next after `buys`.
    pub fn purchase(
        &self,
        user_id: &UserId,
        pack: &Pack,
        buys: Buys,
        shard: u32,
        now: Timestamp,
    ) -> Purchase {
        Purchase {
            id: self.purchase_id.clone(),
            pack_id: self.pack_id.clone(),
            user_id: user_id.clone(),
            status: PurchaseStatus::Completed,
            price: Money {
                amount: 0,
                currency: pack.price.currency.clone(),
            },
            client_seed: self.client_seed.clone(),
            requested_seed: None,
            nonce: buys.seq + 1,
            reserved_at: now,
            expires_at: now,
            completed_at: Some(now),
            opened_at: None,
            items: None,
            fairness: None,
            supply_shard: shard,
            hold_slot: None,
            admitted: false,
        }
    }
}

/// The id of a pack reward's purchase: from the fan and the quest, so that every claim of the
/// quest (whatever its key) names the same purchase item. No `Idempotency-Key` holds a newline,
/// so no start's id is one.
pub fn reward_purchase_id(quest_id: &QuestId, user_id: &UserId) -> PurchaseId {
    crate::purchases::purchase_id(user_id, &format!("quest-reward\n{quest_id}"))
}

/// What a claim of `quest`'s reward by `user_id` writes.
pub fn grant(quest: &Quest, user_id: &UserId) -> Grant {
    match &quest.reward {
        Reward::Cash { amount, currency } => Grant::Cash(crate::cash::Credit {
            user_id: user_id.clone(),
            amount: Money {
                amount: *amount,
                currency: currency.clone(),
            },
            reference: credit_reference(&quest.id, user_id),
        }),
        Reward::Pack { pack_id } => Grant::Pack(PackGrant {
            pack_id: pack_id.clone(),
            purchase_id: reward_purchase_id(&quest.id, user_id),
            client_seed: crate::purchases::random_client_seed(),
        }),
    }
}

/// Why a claim is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ClaimRefusal {
    #[error("the quest is not completed")]
    NotCompleted,
    #[error("the quest ended more than 7 days ago")]
    Ended,
}

/// Whether a fan may claim `quest` at `now` with `progress` (a repeat of a claim made is
/// answered before this is asked).
pub fn check_claim(quest: &Quest, progress: &Progress, now: Timestamp) -> Result<(), ClaimRefusal> {
    if now > quest.claimable_until() {
        return Err(ClaimRefusal::Ended);
    }
    if !progress.completed {
        return Err(ClaimRefusal::NotCompleted);
    }
    Ok(())
}

#[cfg(test)]
mod tests;
