//! Packs: the model (the same camelCase JSON in the API and in seed files), its validation, and
//! which packs are active.
//!
//! - [`listing`]: the order of the active-pack list and the opaque cursor into it.
//! - [`document`]: a pack's JSON as stored and listed.

pub mod document;
pub mod listing;
pub mod seed;

use serde::{Deserialize, Serialize};

use crate::timestamp::Timestamp;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Pack {
    pub id: String,
    pub name: String,
    pub description: String,
    pub image_url: Option<String>,
    pub price: Price,
    pub status: PackStatus,
    pub sale_starts_at: Option<Timestamp>,
    pub sale_ends_at: Option<Timestamp>,
    pub total_supply: u64,
    pub remaining: u64,
    pub items_per_pack: u32,
    pub max_per_user: Option<u32>,
    pub odds: Vec<Odds>,
    pub team_id: Option<String>,
    pub league_id: Option<String>,
}

/// A price in integer minor units of an ISO 4217 currency (`{"amount": 499, "currency": "USD"}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub amount: u64,
    pub currency: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PackStatus {
    Draft,
    Active,
    Archived,
}

/// The chance of one rarity, in basis points (1/100 of a percent).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Odds {
    pub rarity: String,
    pub chance_bps: u32,
}

/// All odds of a pack add up to this.
pub const TOTAL_BPS: u32 = 10_000;

/// A rule a pack breaks, naming the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {problem}")]
pub struct FieldError {
    pub field: String,
    pub problem: String,
}

fn field_error(field: impl Into<String>, problem: impl Into<String>) -> FieldError {
    FieldError {
        field: field.into(),
        problem: problem.into(),
    }
}

/// Whether `id` is 1-64 characters of `[A-Za-z0-9_-]`: the rule for pack, team and league ids.
pub fn is_valid_id(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn check_text(field: &str, value: &str, max_chars: usize) -> Result<(), FieldError> {
    if value.trim().is_empty() {
        return Err(field_error(field, "must not be empty"));
    }
    if value.chars().count() > max_chars {
        return Err(field_error(
            field,
            format!("must be at most {max_chars} characters"),
        ));
    }
    Ok(())
}

fn check_optional_id(field: &str, value: Option<&str>) -> Result<(), FieldError> {
    match value {
        Some(id) if !is_valid_id(id) => Err(field_error(
            field,
            "must be 1-64 characters of A-Z, a-z, 0-9, _ and -",
        )),
        _ => Ok(()),
    }
}

impl Pack {
    /// Checks every rule of a pack; the first broken one is returned with its field.
    pub fn validate(&self) -> Result<(), FieldError> {
        if !is_valid_id(&self.id) {
            return Err(field_error(
                "id",
                "must be 1-64 characters of A-Z, a-z, 0-9, _ and -",
            ));
        }
        check_text("name", &self.name, 200)?;
        if self.description.chars().count() > 2000 {
            return Err(field_error(
                "description",
                "must be at most 2000 characters",
            ));
        }
        if let Some(url) = &self.image_url {
            let is_web_url =
                url::Url::parse(url).is_ok_and(|u| matches!(u.scheme(), "https" | "http"));
            if !is_web_url || url.len() > 2048 {
                return Err(field_error(
                    "imageUrl",
                    "must be an absolute http(s) URL of at most 2048 characters, or null",
                ));
            }
        }
        let currency = &self.price.currency;
        if currency.len() != 3 || !currency.bytes().all(|b| b.is_ascii_uppercase()) {
            return Err(field_error(
                "price.currency",
                "must be an ISO 4217 code of 3 uppercase letters",
            ));
        }
        if self.status == PackStatus::Active && self.sale_starts_at.is_none() {
            return Err(field_error(
                "saleStartsAt",
                "is required when status is active",
            ));
        }
        if let (Some(starts), Some(ends)) = (self.sale_starts_at, self.sale_ends_at)
            && ends <= starts
        {
            return Err(field_error("saleEndsAt", "must be after saleStartsAt"));
        }
        if self.remaining > self.total_supply {
            return Err(field_error("remaining", "must not exceed totalSupply"));
        }
        if self.items_per_pack == 0 {
            return Err(field_error("itemsPerPack", "must be at least 1"));
        }
        if self.max_per_user == Some(0) {
            return Err(field_error(
                "maxPerUser",
                "must be at least 1, or null for no limit",
            ));
        }
        self.validate_odds()?;
        check_optional_id("teamId", self.team_id.as_deref())?;
        check_optional_id("leagueId", self.league_id.as_deref())
    }

    fn validate_odds(&self) -> Result<(), FieldError> {
        if self.odds.is_empty() {
            return Err(field_error("odds", "must list at least one rarity"));
        }
        let mut total: u32 = 0;
        for (index, odds) in self.odds.iter().enumerate() {
            check_text(&format!("odds[{index}].rarity"), &odds.rarity, 32)?;
            if self.odds[..index]
                .iter()
                .any(|earlier| earlier.rarity == odds.rarity)
            {
                return Err(field_error(
                    format!("odds[{index}].rarity"),
                    "must not repeat a rarity",
                ));
            }
            if !(1..=TOTAL_BPS).contains(&odds.chance_bps) {
                return Err(field_error(
                    format!("odds[{index}].chanceBps"),
                    "must be from 1 to 10000",
                ));
            }
            total += odds.chance_bps;
        }
        if total != TOTAL_BPS {
            return Err(field_error(
                "odds",
                format!("chanceBps must add up to 10000, not {total}"),
            ));
        }
        Ok(())
    }

    /// Active: status `active`, the sale has started (`saleStartsAt <= now`) and has not ended
    /// (`saleEndsAt` is null or `now < saleEndsAt`). A sold-out pack can be active.
    pub fn is_active_at(&self, now: Timestamp) -> bool {
        self.status == PackStatus::Active
            && self.sale_starts_at.is_some_and(|starts| starts <= now)
            && self.sale_ends_at.is_none_or(|ends| now < ends)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn sample_pack(id: &str) -> Pack {
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
            ("odds", |p| p.odds.clear()),
            ("odds", |p| p.odds[0].chance_bps = 8999),
            ("odds[1].rarity", |p| p.odds[1].rarity = "common".into()),
            ("odds[0].chanceBps", |p| p.odds[0].chance_bps = 0),
            ("teamId", |p| p.team_id = Some("a/b".into())),
            ("leagueId", |p| p.league_id = Some(String::new())),
        ];
        assert_eq!(sample_pack("ok").validate(), Ok(()));
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
}
