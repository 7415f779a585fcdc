//! A quest as the API shows it, with the fan's progress, and the quests active now: what
//! `GET /api/quests` answers and the home dashboard shows.

use serde::Serialize;
use utoipa::ToSchema;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::Schema;

use crate::openapi::schemas::Id;
use crate::views::pack::countdown;
use domain::ids::{QuestId, UserId};
use domain::purchases::mine::{ItemsPosition, MyItem, MyItemsQuery};
use domain::quests::{Goal, Progress, Quest, Reward, progress};
use domain::timestamp::Timestamp;
use store::StoreError;
use store::purchases::ListMyItems;
use store::quests::{GetClaims, ListQuests};

/// Items read per Query of the fan's opened purchases when progress is computed.
const ITEMS_PER_READ: usize = 1000;

/// Every item the fan pulled: their opened purchases, a Query per `ITEMS_PER_READ` items
/// (about a Query per 200 openings of 5 items).
pub async fn fan_items(
    store: &impl ListMyItems,
    user_id: &UserId,
) -> Result<Vec<MyItem>, StoreError> {
    let mut items = Vec::new();
    let mut after = None;
    loop {
        let page = store
            .list_my_items(&MyItemsQuery {
                user_id: user_id.clone(),
                pack_id: None,
                rarity: None,
                limit: ITEMS_PER_READ,
                after,
            })
            .await?;
        items.extend(page.entries);
        match page.next.as_deref().and_then(ItemsPosition::parse) {
            Some(next) => after = Some(next),
            None => return Ok(items),
        }
    }
}

/// The quests active at `now`, each with the fan's progress: what `GET /api/quests` answers
/// and what the home dashboard shows. Reads: one Query of the quests, one of the fan's claims,
/// and the fan's items ([`fan_items`]); the three run concurrently.
pub async fn active_quests<S: ListQuests + GetClaims + ListMyItems>(
    store: &S,
    user_id: &UserId,
    now: Timestamp,
) -> Result<Vec<(Quest, Progress)>, StoreError> {
    let (quests, claimed, items) = tokio::try_join!(
        store.list_quests(),
        store.claimed_quests(user_id),
        fan_items(store, user_id)
    )?;
    Ok(quests
        .into_iter()
        .filter(|quest| quest.is_active(now))
        .map(|quest| {
            let progress = progress(&quest, &items, claimed.contains(&quest.id));
            (quest, progress)
        })
        .collect())
}

/// A quest with the caller's progress.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = Quest)]
pub struct QuestJson<'a> {
    #[schema(value_type = Id)]
    id: &'a QuestId,
    #[schema(min_length = 1, max_length = 200)]
    name: &'a str,
    #[schema(max_length = 2000)]
    description: &'a str,
    starts_at: Timestamp,
    #[schema(schema_with = starts_countdown)]
    starts_in_ms: u64,
    /// Openings count until then; the reward may be claimed until 7 days after.
    ends_at: Timestamp,
    #[schema(schema_with = ends_countdown)]
    ends_in_ms: u64,
    goal: &'a Goal,
    reward: &'a Reward,
    progress: Progress,
}

fn starts_countdown() -> RefOr<Schema> {
    countdown("startsAt", false)
}

fn ends_countdown() -> RefOr<Schema> {
    countdown("endsAt", false)
}

impl<'a> QuestJson<'a> {
    /// `quest` with the fan's `progress`, answered at `now`.
    pub fn of(quest: &'a Quest, progress: Progress, now: Timestamp) -> Self {
        Self {
            id: &quest.id,
            name: &quest.name,
            description: &quest.description,
            starts_at: quest.starts_at,
            starts_in_ms: now.millis_until(quest.starts_at),
            ends_at: quest.ends_at,
            ends_in_ms: now.millis_until(quest.ends_at),
            goal: &quest.goal,
            reward: &quest.reward,
            progress,
        }
    }
}

/// A reward the caller claimed.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = ClaimedReward)]
pub struct RewardJson<'a> {
    #[schema(value_type = Id)]
    quest_id: &'a QuestId,
    reward: &'a Reward,
    /// A pack reward's purchase (paid at price 0): read and opened as any purchase.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Id)]
    purchase_id: Option<&'a domain::ids::PurchaseId>,
    claimed_at: Timestamp,
}

impl<'a> RewardJson<'a> {
    pub fn of(claim: &'a domain::quests::Claim) -> Self {
        Self {
            quest_id: &claim.quest_id,
            reward: &claim.reward,
            purchase_id: claim.purchase_id.as_ref(),
            claimed_at: claim.claimed_at,
        }
    }
}
