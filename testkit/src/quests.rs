//! The shipped quests (`infra/seed/quests.json`, resolved against the shipped packs and
//! catalogue as `seed-packs` resolves them) and a fan's opening that counts for them.

use domain::quests::Quest;
use domain::quests::seed::{parse_quests, resolve};
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

/// One opened purchase of `fan`'s, a day ago or so (of a test pack: `first-pack` counts it).
pub async fn open_one(store: &impl SeedPurchases, fan: &str) {
    let opened = crate::mine::purchase(fan, 4, 0, true, Timestamp::now());
    store.seed_purchases(&[opened]).await.unwrap();
}
