//! The operator's quests file (`infra/seed/quests.json`): parsed, checked on its own, then
//! against the packs and the catalogue it names, before anything is written.

use std::collections::{BTreeSet, HashSet};

use crate::cash::{MAX_CREDIT, is_currency};
use crate::catalog::Catalog;
use crate::packs::Pack;
use crate::quests::{Goal, Quest, Reward};

/// The most items a `collect_items` goal may name.
pub const MAX_GOAL_ITEMS: usize = 50;

/// Why a quests file is refused: the quest (its index, or its id) and the problem.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("quest {quest}: {problem}")]
pub struct QuestSeedError {
    pub quest: String,
    pub problem: String,
}

fn refuse(quest: impl Into<String>, problem: impl Into<String>) -> QuestSeedError {
    QuestSeedError {
        quest: quest.into(),
        problem: problem.into(),
    }
}

/// Reads a quests file (a JSON array of quests) and checks each on its own.
pub fn parse_quests(json: &[u8]) -> Result<Vec<Quest>, QuestSeedError> {
    let deserializer = &mut serde_json::Deserializer::from_slice(json);
    let quests: Vec<Quest> = serde_path_to_error::deserialize(deserializer)
        .map_err(|error| refuse(error.path().to_string(), error.into_inner().to_string()))?;
    let mut ids = HashSet::new();
    for quest in &quests {
        if !ids.insert(&quest.id) {
            return Err(refuse(quest.id.as_str(), "the id is used twice"));
        }
        check_quest(quest).map_err(|problem| refuse(quest.id.as_str(), problem))?;
    }
    Ok(quests)
}

fn check_quest(quest: &Quest) -> Result<(), &'static str> {
    if quest.name.trim().is_empty() || quest.name.chars().count() > 200 {
        return Err("name must be 1-200 characters");
    }
    if quest.description.chars().count() > 2000 {
        return Err("description must be at most 2000 characters");
    }
    if quest.starts_at >= quest.ends_at {
        return Err("startsAt must come before endsAt");
    }
    if quest.league_packs.is_some() {
        return Err("leaguePacks is the seeding's, not the file's");
    }
    match &quest.goal {
        Goal::OpenPacks { count: 0, .. } | Goal::CollectRarity { count: 0, .. } => {
            return Err("a goal's count must be at least 1");
        }
        Goal::CollectItems { item_ids }
            if item_ids.is_empty() || item_ids.len() > MAX_GOAL_ITEMS =>
        {
            return Err("itemIds must name 1-50 items");
        }
        _ => {}
    }
    match &quest.reward {
        Reward::Cash { amount, currency }
            if !(1..=MAX_CREDIT).contains(amount) || !is_currency(currency) =>
        {
            Err("a Cash reward is 1 to 10^12 minor units of an ISO 4217 currency")
        }
        // Checked against the packs by `resolve`.
        Reward::Cash { .. } | Reward::Pack { .. } => Ok(()),
    }
}

/// Checks `quests` against the packs and the catalogue they may name, and resolves each goal's
/// league to the packs of that league (what progress counts): an unknown pack (of a goal or a
/// reward), item, rarity or league refuses the whole file.
pub fn resolve(
    quests: &mut [Quest],
    packs: &[Pack],
    catalog: &Catalog,
) -> Result<(), QuestSeedError> {
    let pack = |id: &str| packs.iter().find(|pack| pack.id == id);
    let items: BTreeSet<&str> = packs
        .iter()
        .flat_map(|pack| pack.items.iter().map(|item| item.id.as_str()))
        .collect();
    let rarities: BTreeSet<&str> = packs
        .iter()
        .flat_map(|pack| pack.odds.iter().map(|odds| odds.rarity.as_str()))
        .collect();
    for quest in quests.iter_mut() {
        let id = quest.id.to_string();
        if let Reward::Pack { pack_id } = &quest.reward {
            let Some(rewarded) = pack(pack_id.as_str()) else {
                return Err(refuse(id, format!("reward: no pack {pack_id}")));
            };
            check_reward_pack(rewarded)
                .map_err(|problem| refuse(&id, format!("reward: pack {pack_id} {problem}")))?;
        }
        let league = match &quest.goal {
            Goal::OpenPacks {
                league_id, pack_id, ..
            } => {
                if let Some(pack_id) = pack_id
                    && pack(pack_id.as_str()).is_none()
                {
                    return Err(refuse(id, format!("goal: no pack {pack_id}")));
                }
                league_id.clone()
            }
            Goal::CollectItems { item_ids } => {
                if let Some(unknown) = item_ids.iter().find(|item| !items.contains(item.as_str())) {
                    return Err(refuse(id, format!("goal: no pack holds item {unknown}")));
                }
                None
            }
            Goal::CollectRarity {
                rarity, league_id, ..
            } => {
                if !rarities.contains(rarity.as_str()) {
                    return Err(refuse(id, format!("goal: no pack has rarity {rarity}")));
                }
                league_id.clone()
            }
        };
        quest.league_packs = match league {
            Some(league) => {
                if catalog.league(&league).is_none() {
                    return Err(refuse(id, format!("goal: no league {league}")));
                }
                let of_league: Vec<&Pack> = packs
                    .iter()
                    .filter(|pack| pack.league_id.as_deref() == Some(league.as_str()))
                    .collect();
                check_within_league(&quest.goal, &of_league).map_err(|problem| {
                    refuse(&id, format!("goal: {problem} of league {league}"))
                })?;
                Some(
                    of_league
                        .iter()
                        .filter_map(|pack| crate::ids::PackId::parse(pack.id.as_str()).ok())
                        .collect(),
                )
            }
            None => None,
        };
    }
    Ok(())
}

/// A pack a reward may give: one sold without a door. A reward takes a unit with no entry, no
/// draw and no human check, so a queued pack's unit would skip its line (and count in its report
/// as sold through it), and a `humanCheck` pack's would skip the check that guards its supply.
fn check_reward_pack(pack: &Pack) -> Result<(), &'static str> {
    if pack.queue.is_some() {
        return Err("has a waiting room: a reward would skip its line");
    }
    if pack.human_check {
        return Err("asks for a human check: a reward would skip it");
    }
    Ok(())
}

/// A goal held to one league can be met with that league's packs (`of_league`): a quest no fan
/// could ever complete is refused with the file, not shown for ever at 0.
fn check_within_league(goal: &Goal, of_league: &[&Pack]) -> Result<(), String> {
    if of_league.is_empty() {
        return Err("no pack".into());
    }
    match goal {
        Goal::OpenPacks {
            pack_id: Some(pack_id),
            ..
        } if !of_league.iter().any(|pack| pack.id == pack_id.as_str()) => {
            Err(format!("pack {pack_id} is not a pack"))
        }
        Goal::CollectRarity { rarity, .. }
            if !of_league
                .iter()
                .any(|pack| pack.odds.iter().any(|odds| odds.rarity == *rarity)) =>
        {
            Err(format!("no pack has rarity {rarity}"))
        }
        _ => Ok(()),
    }
}
