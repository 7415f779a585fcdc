use super::*;
use crate::packs::fixtures::sample_pack;

#[test]
fn supply_splits_exactly_and_shares_follow_the_supply() {
    assert_eq!(split_supply(10, 4), [3, 3, 2, 2]);
    assert_eq!(split_supply(2, 4), [1, 1, 0, 0]);
    assert_eq!(split_supply(0, 1), [0]);
    for (remaining, shards) in [(1000, 10), (30, 10), (7, 100), (40_000, 16)] {
        let split = split_supply(remaining, shards);
        assert_eq!(split.len(), shards as usize);
        assert_eq!(split.iter().sum::<u64>(), remaining);
        assert!(split.iter().max().unwrap() - split.iter().min().unwrap() <= 1);
    }
    let mut pack = sample_pack("p");
    assert_eq!(pack.shard_count(), DEFAULT_SUPPLY_SHARDS);
    pack.total_supply = 3;
    assert_eq!(pack.shard_count(), 3);
    pack.supply_shards = Some(7);
    assert_eq!(pack.shard_count(), 7);
    pack.total_supply = 1000;
    for bad in [0, MAX_SUPPLY_SHARDS + 1] {
        pack.supply_shards = Some(bad);
        assert_eq!(pack.validate().unwrap_err().field, "supplyShards");
    }
}

fn ts(text: &str) -> Timestamp {
    Timestamp::parse(text).unwrap()
}

#[test]
fn activeness_follows_status_and_sale_window() {
    let now = ts("2026-06-01T12:00:00Z");
    let mut pack = sample_pack("p");
    assert!(pack.is_active_at(now));
    pack.sale_starts_at = Some(now);
    assert!(pack.is_active_at(now), "starts exactly now: active");
    pack.sale_starts_at = Some(ts("2026-06-01T12:00:01Z"));
    assert!(!pack.is_active_at(now), "starts in the future");
    pack.sale_starts_at = Some(ts("2026-01-01T00:00:00Z"));
    pack.sale_ends_at = Some(now);
    assert!(!pack.is_active_at(now), "ends exactly now: inactive");
    pack.sale_ends_at = Some(ts("2026-06-01T12:00:00.000000001Z"));
    assert!(pack.is_active_at(now), "ends a nanosecond later");
    pack.remaining = 0;
    assert!(pack.is_active_at(now), "sold out stays active");
    for status in [PackStatus::Draft, PackStatus::Archived] {
        pack.status = status;
        assert!(!pack.is_active_at(now), "{status:?}");
    }
    pack.status = PackStatus::Active;
    pack.sale_starts_at = None;
    assert!(!pack.is_active_at(now), "never scheduled");
}

#[test]
fn the_seed_is_revealed_an_hour_after_the_sale_ends_and_not_a_nanosecond_before() {
    let ends = ts("2026-06-01T12:00:00Z");
    assert!(!seed_revealed(None, ts("9999-01-01T00:00:00Z")));
    assert!(!seed_revealed(
        Some(ends),
        ts("2026-06-01T12:59:59.999999999Z")
    ));
    assert!(seed_revealed(Some(ends), ts("2026-06-01T13:00:00Z")));
}

#[test]
fn validation_names_the_field() {
    type Breaker = fn(&mut Pack);
    let cases: Vec<(&str, Breaker)> = vec![
        ("id", |p| p.id = "has space".into()),
        ("id", |p| p.id = "x".repeat(65)),
        ("name", |p| p.name = " ".into()),
        ("imageUrl", |p| {
            p.image_url = Some("javascript:alert(1)".into())
        }),
        ("price.currency", |p| p.price.currency = "usd".into()),
        ("saleStartsAt", |p| p.sale_starts_at = None),
        ("saleEndsAt", |p| p.sale_ends_at = p.sale_starts_at),
        ("remaining", |p| p.remaining = p.total_supply + 1),
        ("itemsPerPack", |p| p.items_per_pack = 0),
        ("maxPerUser", |p| p.max_per_user = Some(0)),
        ("lineFinished", |p| p.line_finished = true),
        // Issue 42, G1: a queued pack without an allowance would admit one fan per window.
        ("maxPerUser", |p| {
            p.queue = Some(crate::queue::terms::QueueTerms {
                opens_at: Timestamp::parse("2025-12-31T20:00:00Z").unwrap(),
                closes_at: p.sale_starts_at.unwrap(),
                pass_seconds: 600,
            });
            p.max_per_user = None;
        }),
        ("odds", |p| p.odds.clear()),
        ("odds", |p| p.odds[0].chance_bps = 8999),
        ("odds[1].rarity", |p| p.odds[1].rarity = "common".into()),
        ("odds[0].chanceBps", |p| p.odds[0].chance_bps = 0),
        ("teamId", |p| p.team_id = Some("a/b".into())),
        ("leagueId", |p| p.league_id = Some(String::new())),
        ("items", |p| p.items.retain(|i| i.rarity != "rare")),
        ("items[1].id", |p| p.items[1].id = p.items[0].id.clone()),
        ("items[0].id", |p| p.items[0].id = "a b".into()),
        ("items[0].name", |p| p.items[0].name = String::new()),
        ("items[0].rarity", |p| p.items[0].rarity = "mythic".into()),
        ("items[1].imageUrl", |p| {
            p.items[1].image_url = Some("http://cdn.example.com/x.png".into())
        }),
        ("items", |p| {
            let item = p.items[0].clone();
            p.items = (0..=MAX_ITEMS)
                .map(|i| PackItem {
                    id: format!("i{i}"),
                    ..item.clone()
                })
                .collect();
        }),
    ];
    assert_eq!(sample_pack("ok").validate(), Ok(()));
    // The shipped queued drop admits by its units: it has an allowance, and validates.
    let shipped =
        crate::packs::seed::parse_seed(include_bytes!("../../../../infra/seed/packs.json"));
    let drop = shipped
        .unwrap()
        .into_iter()
        .find(|pack| pack.id == "nba-all-star-2027")
        .expect("the demo drop");
    assert!(drop.queue.is_some() && drop.max_per_user == Some(4));
    for (field, break_it) in cases {
        let mut pack = sample_pack("p");
        break_it(&mut pack);
        assert_eq!(pack.validate().map_err(|e| e.field), Err(field.to_owned()));
    }
}

#[test]
fn json_shape_is_camel_case_with_explicit_nulls() {
    let json = serde_json::to_value(sample_pack("p1")).unwrap();
    let mut keys: Vec<&str> = json
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    let mut expected = [
        "id",
        "name",
        "description",
        "imageUrl",
        "price",
        "status",
        "saleStartsAt",
        "saleEndsAt",
        "totalSupply",
        "remaining",
        "itemsPerPack",
        "maxPerUser",
        "odds",
        "teamId",
        "leagueId",
        "items",
    ];
    expected.sort_unstable();
    assert_eq!(keys, expected);
    assert_eq!(json["saleEndsAt"], serde_json::Value::Null);
    assert_eq!(
        json["odds"][0],
        serde_json::json!({"rarity": "common", "chanceBps": 9000})
    );
    let back: Pack = serde_json::from_value(json).unwrap();
    assert_eq!(back, sample_pack("p1"));
}

#[test]
fn unknown_fields_are_refused() {
    let mut json = serde_json::to_value(sample_pack("p1")).unwrap();
    json["colour"] = "red".into();
    assert!(serde_json::from_value::<Pack>(json).is_err());
}
