//! The shipped quests (`infra/seed/quests.json`, resolved against the shipped packs and
//! catalogue as `seed-packs` resolves them) and a fan's opening that counts for them.

use domain::ids::QuestId;
use domain::quests::seed::{parse_quests, resolve};
use domain::quests::{Goal, Quest, Reward};
use domain::timestamp::Timestamp;
use store::purchases::SeedPurchases;

pub fn shipped() -> Vec<Quest> {
    let mut quests = parse_quests(include_bytes!("../../infra/seed/quests.json")).unwrap();
    let packs =
        domain::packs::seed::parse_seed(include_bytes!("../../infra/seed/packs.json")).unwrap();
    let catalog =
        domain::catalog::parse_catalog(include_str!("../../infra/seed/catalog.json")).unwrap();
    resolve(&mut quests, &packs, &catalog).unwrap();
    quests
}

/// A quest `id` giving `reward` for one opening, running from 2026 to 2030.
pub fn quest(id: &str, reward: Reward) -> Quest {
    Quest {
        id: QuestId::parse(id).unwrap(),
        name: format!("Quest {id}"),
        description: String::new(),
        starts_at: Timestamp::parse("2026-01-01T00:00:00Z").unwrap(),
        ends_at: Timestamp::parse("2030-01-01T00:00:00Z").unwrap(),
        goal: Goal::OpenPacks {
            count: 1,
            league_id: None,
            pack_id: None,
        },
        reward,
        league_packs: None,
    }
}

/// One opened purchase of `fan`'s, a day ago or so (of a test pack: `first-pack` counts it).
pub async fn open_one(store: &impl SeedPurchases, fan: &str) {
    let opened = crate::mine::purchase(fan, 4, 0, true, Timestamp::now());
    store.seed_purchases(&[opened]).await.unwrap();
}
