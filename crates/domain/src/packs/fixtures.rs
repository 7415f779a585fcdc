//! Test fixtures of the packs, for the tests of this crate and, through the `fixtures` feature, of
//! the crates above it (a `#[cfg(test)]` item is not compiled for another crate's tests).

use super::*;

/// A valid active pack with id `id`.
pub fn sample_pack(id: &str) -> Pack {
    Pack {
        id: id.into(),
        name: "Rookie Pack".into(),
        description: "Five cards from this season.".into(),
        image_url: Some("https://cdn.example.com/packs/rookie.png".into()),
        price: Price {
            amount: 499,
            currency: "USD".into(),
        },
        status: PackStatus::Active,
        sale_starts_at: Some(Timestamp::parse("2026-01-01T00:00:00Z").unwrap()),
        sale_ends_at: None,
        total_supply: 1000,
        remaining: 10,
        items_per_pack: 5,
        max_per_user: Some(3),
        odds: vec![
            Odds {
                rarity: "common".into(),
                chance_bps: 9000,
            },
            Odds {
                rarity: "rare".into(),
                chance_bps: 1000,
            },
        ],
        team_id: Some("team-1".into()),
        league_id: None,
        items: vec![
            PackItem {
                id: "c1".into(),
                name: "Common One".into(),
                rarity: "common".into(),
                image_url: None,
            },
            PackItem {
                id: "r1".into(),
                name: "Rare One".into(),
                rarity: "rare".into(),
                image_url: Some("https://cdn.example.com/r1.png".into()),
            },
        ],
        supply_shards: None,
        human_check: false,
        line_finished: false,
        queue: None,
    }
}
