//! Packs for tests, timed relative to now.

use domain::ids::PackId;
use domain::packs::{Odds, Pack, PackItem, PackStatus, Price};
use domain::timestamp::Timestamp;
use store::packs::{GetPack, ReadSupply, SeedPack};

/// `now` moved by `seconds` (negative: the past).
pub fn at(seconds_from_now: i64) -> Timestamp {
    let now = Timestamp::now().datetime();
    Timestamp::from_datetime(now + time::Duration::seconds(seconds_from_now)).expect("in range")
}

/// An active pack on sale since `started_seconds_ago`, with no end.
pub fn active(id: &str, started_seconds_ago: i64) -> Pack {
    Pack {
        id: id.into(),
        name: format!("Pack {id}"),
        description: "A test pack.".into(),
        image_url: None,
        price: Price {
            amount: 499,
            currency: "USD".into(),
        },
        status: PackStatus::Active,
        sale_starts_at: Some(at(-started_seconds_ago)),
        sale_ends_at: None,
        total_supply: 100,
        remaining: 100,
        items_per_pack: 5,
        max_per_user: None,
        odds: vec![Odds {
            rarity: "common".into(),
            chance_bps: 10_000,
        }],
        team_id: None,
        league_id: Some("nba".into()),
        items: vec![PackItem {
            id: format!("{id}-card"),
            name: "A common card".into(),
            rarity: "common".into(),
            image_url: None,
        }],
        supply_shards: None,
        human_check: false,
        line_finished: false,
        queue: None,
    }
}

/// `pack` with another status.
/// An active pack with a waiting room that opens `opens_in` seconds from now (negative: in the
/// past) and closes `closes_in` seconds from now, as its sale starts; windows of 600 seconds, one unit a
/// fan.
pub fn queued(id: &str, opens_in: i64, closes_in: i64) -> Pack {
    let mut pack = active(id, -closes_in);
    pack.max_per_user = Some(1);
    pack.queue = Some(domain::queue::terms::QueueTerms {
        opens_at: at(opens_in),
        closes_at: pack.sale_starts_at.expect("an active pack starts"),
        pass_seconds: 600,
    });
    pack
}

pub fn with_status(mut pack: Pack, status: PackStatus) -> Pack {
    pack.status = status;
    pack
}

/// `pack` whose sale ends `seconds_from_now` (negative: already ended).
pub fn ending(mut pack: Pack, seconds_from_now: i64) -> Pack {
    pack.sale_ends_at = Some(at(seconds_from_now));
    pack
}

/// Writes `pack` as `seed-packs` does (a new pack gets its server seed); panics when refused.
pub async fn save<S: GetPack + SeedPack>(store: &S, pack: &Pack) {
    store::packs::seed(store, pack, Timestamp::now())
        .await
        .unwrap_or_else(|e| panic!("seeding pack {}: {e}", pack.id));
}

/// `pack`'s JSON as a list page shows it now: every field but `items`, with the countdowns
/// (exact for instants past, 0, or null; a future one's counts down as the test runs).
pub fn listed_json(pack: &Pack) -> serde_json::Value {
    let now = Timestamp::now();
    let until = |at: Option<Timestamp>| at.map(|at| now.millis_until(at));
    let mut json = serde_json::to_value(pack).expect("a pack serialises");
    let object = json.as_object_mut().expect("an object");
    object.remove("items");
    object.insert("saleStartsInMs".into(), until(pack.sale_starts_at).into());
    object.insert("saleEndsInMs".into(), until(pack.sale_ends_at).into());
    if let (Some(terms), Some(queue)) = (pack.queue, object.get_mut("queue")) {
        queue["opensInMs"] = now.millis_until(terms.opens_at).into();
        queue["closesInMs"] = now.millis_until(terms.closes_at).into();
    }
    json
}

/// A pack's exact `remaining`: the units in its shares, read strongly consistent (the pack's own
/// `remaining` is a summary the sweep refreshes).
pub async fn remaining<S: ReadSupply>(store: &S, pack_id: impl AsRef<str>) -> u64 {
    let pack_id = PackId::parse(pack_id.as_ref()).expect("a pack id");
    store
        .read_supply(&pack_id)
        .await
        .unwrap_or_else(|e| panic!("reading the supply of {pack_id}: {e}"))
        .unwrap_or_else(|| panic!("no pack {pack_id}"))
        .remaining()
}

/// The leagues and teams of the shipped catalogue whose ids are among `ids`, written as
/// seed-packs writes them: the entries a test names, not the whole file (moto copies every table
/// in each transaction, and 89 more items slow a test's transactions past the SDK's timeout).
pub async fn seed_catalog_entries(store: &impl store::catalog::SeedCatalog, ids: &[&str]) {
    let mut catalog =
        domain::catalog::parse_catalog(include_str!("../../infra/seed/catalog.json")).unwrap();
    catalog
        .leagues
        .retain(|league| ids.contains(&league.id.as_str()));
    catalog.teams.retain(|team| ids.contains(&team.id.as_str()));
    store::catalog::seed_catalog(store, &catalog).await.unwrap();
}
