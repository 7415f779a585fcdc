//! Packs: the model (the same camelCase JSON in the API and in seed files), its validation,
//! which packs are active, and when a pack's sale has started (after which what buyers pay for
//! cannot change) and when its server seed may be revealed.
//!
//! - [`listing`]: the order of the active-pack list and the opaque cursor into it.
//! - [`document`]: a pack's JSON as stored and listed.
//! - [`seed`]: seed files, and what re-seeding may change.
//! - [`draw`]: the provably fair draw of an opened pack.

pub mod document;
pub mod draw;
pub mod listing;
pub mod seed;

pub use listing::MIN_CURSOR_SECRET_LEN;

use serde::{Deserialize, Serialize};
use strum::{EnumString, IntoStaticStr, VariantArray};
use utoipa::ToSchema;

use crate::ids::{InvalidId, PackId};
use crate::json_schema::{Hex32, Id};
use crate::queue::terms::QueueTerms;
use crate::timestamp::Timestamp;

/// A pack as listed (its detail adds `items` and `fairness`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Pack {
    #[schema(value_type = Id)]
    pub id: String,
    #[schema(min_length = 1, max_length = 200)]
    pub name: String,
    #[schema(max_length = 2000)]
    pub description: String,
    #[schema(format = "uri", required)]
    pub image_url: Option<String>,
    pub price: Price,
    pub status: PackStatus,
    #[schema(required)]
    pub sale_starts_at: Option<Timestamp>,
    /// RFC 3339, UTC; null when the sale never ends.
    #[schema(required)]
    pub sale_ends_at: Option<Timestamp>,
    pub total_supply: u64,
    pub remaining: u64,
    #[schema(minimum = 1)]
    pub items_per_pack: u32,
    #[schema(minimum = 1, required)]
    pub max_per_user: Option<u32>,
    /// The chance of each rarity; `chanceBps` add up to 10000.
    #[schema(min_items = 1)]
    pub odds: Vec<Odds>,
    #[schema(value_type = Option<Id>, required)]
    pub team_id: Option<String>,
    #[schema(value_type = Option<Id>, required)]
    pub league_id: Option<String>,
    /// The content pool: part of the pack's detail, never of list pages.
    #[serde(default)]
    #[schema(ignore)]
    pub items: Vec<PackItem>,
    /// How many shares its supply is split into (seed files only, never in the API): absent, a
    /// count from `totalSupply` ([`Pack::shard_count`]).
    #[serde(default, skip_serializing)]
    pub supply_shards: Option<u32>,
    /// The pack's waiting room, if it has one (absent otherwise): fans join between `opensAt`
    /// and `closesAt`, the line is drawn after, and only admitted fans may buy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<QueueTerms>,
    /// A pack without a waiting room whose operator asks for the human check on every start
    /// (`Human-Check`, docs/human-check.md); absent: no check. A queued pack's join is checked
    /// already, so a queued pack cannot ask for it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub human_check: bool,
    /// Present (true) once the pack's waiting room has finished: the units left (`remaining`)
    /// sell to the line's entrants (docs/api.md). Written by the queue keeper, never by a seed
    /// file.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[schema(read_only)]
    pub line_finished: bool,
}

/// The most shares a pack's supply may be split into.
pub const MAX_SUPPLY_SHARDS: u32 = 100;
/// The shares of a pack whose seed file does not say: each share takes at most about 500 starts
/// a second (a start writes its share inside a transaction: 2 write units, against DynamoDB's
/// 1,000 per key), so 16 shares carry about 8,000 starts a second on one pack, with no share
/// left without a unit while the pack has 16 or more.
pub const DEFAULT_SUPPLY_SHARDS: u32 = 16;

/// `remaining` split over `shards` shares as evenly as it goes: the first `remaining % shards`
/// get one more.
pub fn split_supply(remaining: u64, shards: u32) -> Vec<u64> {
    let shards = u64::from(shards.max(1));
    (0..shards)
        .map(|k| remaining / shards + u64::from(k < remaining % shards))
        .collect()
}

/// One item of a pack's content pool: what a slot of an opened pack can hold.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PackItem {
    /// Unique within the pack.
    #[schema(value_type = Id)]
    pub id: String,
    #[schema(min_length = 1, max_length = 200)]
    pub name: String,
    /// One of the pack's `odds` rarities.
    #[schema(min_length = 1, max_length = 32)]
    pub rarity: String,
    #[schema(format = "uri", pattern = "^https://", required)]
    pub image_url: Option<String>,
}

/// A price: integer minor units of an ISO 4217 currency (`{"amount": 499, "currency": "USD"}`).
pub use crate::cash::Money as Price;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
#[derive(IntoStaticStr, EnumString, VariantArray)]
#[strum(serialize_all = "lowercase")] // As `PurchaseStatus`'s.
pub enum PackStatus {
    Draft,
    Active,
    Archived,
}

impl PackStatus {
    /// As the API and the store write it.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// The chance of one rarity, in basis points (1/100 of a percent).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Odds {
    #[schema(min_length = 1, max_length = 32)]
    pub rarity: String,
    #[schema(minimum = 1, maximum = 10000)]
    pub chance_bps: u32,
}

/// All odds of a pack add up to this.
pub const TOTAL_BPS: u32 = 10_000;

/// The most items a pack's content pool holds.
pub const MAX_ITEMS: usize = 1_000;
/// The most characters of a pack's or an item's name.
pub const MAX_NAME_CHARS: usize = 200;
/// The most characters of a rarity's name.
pub const MAX_RARITY_CHARS: usize = 32;
/// The longest image URL.
pub const MAX_URL_LEN: usize = 2048;
/// The most bytes of a pack's items as stored JSON: they live in one DynamoDB item (400 KB).
pub const MAX_ITEMS_JSON_BYTES: usize = 300 * 1024;

/// How long after `saleEndsAt` a hold can still be paid: the longest hold. The server seed is
/// revealed only after it (docs/fairness.md).
pub const REVEAL_DELAY_SECONDS: i64 = 3600;

/// A rule a pack breaks, naming the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {problem}")]
pub struct FieldError {
    pub field: String,
    pub problem: String,
}

pub(crate) fn field_error(field: impl Into<String>, problem: impl Into<String>) -> FieldError {
    FieldError {
        field: field.into(),
        problem: problem.into(),
    }
}

/// Whether `id` is 1-64 characters of `[A-Za-z0-9_-]`: the rule for pack, team and league ids.
pub use crate::ids::is_valid_id;

pub(crate) fn check_text(field: &str, value: &str, max_chars: usize) -> Result<(), FieldError> {
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

pub(crate) fn check_image_url(
    field: &str,
    url: Option<&str>,
    schemes: &[&str],
) -> Result<(), FieldError> {
    let Some(url) = url else { return Ok(()) };
    let allowed = url::Url::parse(url).is_ok_and(|u| schemes.contains(&u.scheme()));
    if !allowed || url.len() > MAX_URL_LEN {
        return Err(field_error(
            field,
            format!(
                "must be an absolute {} URL of at most {MAX_URL_LEN} characters, or null",
                schemes.join("/")
            ),
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
    /// The leaderboards its items count for: the global one, and its league's and team's when
    /// it names them (ids checked by [`Pack::validate`]; one that is not an id names no board).
    pub fn boards(&self) -> Vec<crate::leaderboards::Board> {
        let league = self
            .league_id
            .as_deref()
            .and_then(|id| crate::ids::LeagueId::parse(id).ok());
        let team = self
            .team_id
            .as_deref()
            .and_then(|id| crate::ids::TeamId::parse(id).ok());
        crate::leaderboards::Board::of_pack(league.as_ref(), team.as_ref())
    }

    /// Its id, typed: what the store keys it by. The id stays text in the pack itself, so that
    /// [`Pack::validate`] can name a malformed one as a field of its seed file.
    pub fn pack_id(&self) -> Result<PackId, InvalidId> {
        PackId::parse(self.id.as_str())
    }

    /// Checks every rule of a pack; the first broken one is returned with its field.
    pub fn validate(&self) -> Result<(), FieldError> {
        if !is_valid_id(&self.id) {
            return Err(field_error(
                "id",
                "must be 1-64 characters of A-Z, a-z, 0-9, _ and -",
            ));
        }
        check_text("name", &self.name, MAX_NAME_CHARS)?;
        if self.description.chars().count() > 2000 {
            return Err(field_error(
                "description",
                "must be at most 2000 characters",
            ));
        }
        check_image_url("imageUrl", self.image_url.as_deref(), &["https", "http"])?;
        if !crate::cash::is_currency(&self.price.currency) {
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
        if self
            .supply_shards
            .is_some_and(|n| !(1..=MAX_SUPPLY_SHARDS).contains(&n))
        {
            return Err(field_error(
                "supplyShards",
                format!("must be 1-{MAX_SUPPLY_SHARDS}, or absent for a count from totalSupply"),
            ));
        }
        if self.max_per_user == Some(0) {
            return Err(field_error(
                "maxPerUser",
                "must be at least 1, or null for no limit",
            ));
        }
        if let Some(queue) = &self.queue {
            queue.validate(self.sale_starts_at)?;
            if self.max_per_user.is_none() {
                // Admission counts each admitted fan's allowance against the units left: without
                // one, a fan's demand is every unit, and a line admits one fan per window.
                return Err(field_error(
                    "maxPerUser",
                    "is required on a pack with a queue: it is each admitted fan's allowance, \
                     and the line admits as many fans at once as the units left cover",
                ));
            }
        }
        if self.line_finished {
            return Err(field_error(
                "lineFinished",
                "is the queue keeper's, not the file's",
            ));
        }
        if self.human_check && self.queue.is_some() {
            return Err(field_error(
                "humanCheck",
                "is for a pack without a queue (a queue's join is checked already)",
            ));
        }
        self.validate_odds()?;
        self.validate_items()?;
        check_optional_id("teamId", self.team_id.as_deref())?;
        check_optional_id("leagueId", self.league_id.as_deref())
    }

    /// Items: at most [`MAX_ITEMS`], ids unique, every item's rarity in `odds` and every rarity
    /// of `odds` with at least one item (so that every draw finds an item).
    fn validate_items(&self) -> Result<(), FieldError> {
        if self.items.len() > MAX_ITEMS {
            return Err(field_error(
                "items",
                format!("must hold at most {MAX_ITEMS} items"),
            ));
        }
        let mut ids = std::collections::HashSet::with_capacity(self.items.len());
        for (index, item) in self.items.iter().enumerate() {
            let field = |name: &str| format!("items[{index}].{name}");
            if !is_valid_id(&item.id) {
                return Err(field_error(
                    field("id"),
                    "must be 1-64 characters of A-Z, a-z, 0-9, _ and -",
                ));
            }
            if !ids.insert(item.id.as_str()) {
                return Err(field_error(field("id"), "must not repeat an item id"));
            }
            check_text(&field("name"), &item.name, MAX_NAME_CHARS)?;
            if !self.odds.iter().any(|odds| odds.rarity == item.rarity) {
                return Err(field_error(field("rarity"), "must be a rarity of odds"));
            }
            check_image_url(&field("imageUrl"), item.image_url.as_deref(), &["https"])?;
        }
        if let Some(odds) = self
            .odds
            .iter()
            .find(|odds| !self.items.iter().any(|item| item.rarity == odds.rarity))
        {
            return Err(field_error(
                "items",
                format!("must hold at least one item of rarity {:?}", odds.rarity),
            ));
        }
        let json_len = serde_json::to_string(&self.items).map_or(usize::MAX, |json| json.len());
        if json_len > MAX_ITEMS_JSON_BYTES {
            return Err(field_error(
                "items",
                format!("must take at most {MAX_ITEMS_JSON_BYTES} bytes as JSON"),
            ));
        }
        Ok(())
    }

    fn validate_odds(&self) -> Result<(), FieldError> {
        if self.odds.is_empty() {
            return Err(field_error("odds", "must list at least one rarity"));
        }
        let mut total: u32 = 0;
        for (index, odds) in self.odds.iter().enumerate() {
            check_text(
                &format!("odds[{index}].rarity"),
                &odds.rarity,
                MAX_RARITY_CHARS,
            )?;
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
                    format!("must be from 1 to {TOTAL_BPS}"),
                ));
            }
            total += odds.chance_bps;
        }
        if total != TOTAL_BPS {
            return Err(field_error(
                "odds",
                format!("chanceBps must add up to {TOTAL_BPS}, not {total}"),
            ));
        }
        Ok(())
    }

    /// Active: status `active`, the sale has started (`saleStartsAt <= now`) and has not ended
    /// (`saleEndsAt` is null or `now < saleEndsAt`). A sold-out pack can be active.
    /// How many shares the supply is split into: the seed file's `supplyShards`, else
    /// [`DEFAULT_SUPPLY_SHARDS`], fewer for a smaller supply (one unit a share at least).
    pub fn shard_count(&self) -> u32 {
        self.supply_shards.unwrap_or_else(|| {
            u32::try_from(self.total_supply.clamp(1, u64::from(DEFAULT_SUPPLY_SHARDS)))
                .unwrap_or(DEFAULT_SUPPLY_SHARDS)
        })
    }

    pub fn is_active_at(&self, now: Timestamp) -> bool {
        self.status == PackStatus::Active
            && self.sale_starts_at.is_some_and(|starts| starts <= now)
            && self.sale_ends_at.is_none_or(|ends| now < ends)
    }

    /// Whether the sale has started: `saleStartsAt` is set and not after `now`, whatever the
    /// status (a pack taken back to draft may still have buyers).
    pub fn sale_started_at(&self, now: Timestamp) -> bool {
        self.sale_starts_at.is_some_and(|starts| starts <= now)
    }

    /// Whether the sale has ended: `saleEndsAt` is set and not after `now`.
    pub fn sale_ended_at(&self, now: Timestamp) -> bool {
        self.sale_ends_at.is_some_and(|ends| ends <= now)
    }
}

/// A pack's commitment to its server seed, and the seed once it is public.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
// For the schema only (`additionalProperties: false`): the API writes no other field.
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PackFairness {
    /// Lowercase hex SHA-256 of the server seed's 32 bytes, published before the sale.
    #[schema(value_type = Hex32)]
    pub server_seed_hash: String,
    /// The server seed (32 bytes, lowercase hex) once revealed (`saleEndsAt` + 1 hour); null until then.
    #[schema(value_type = Option<Hex32>, required)]
    pub server_seed: Option<String>,
}

impl PackFairness {
    /// The fairness of a pack with `seed` whose sale ends at `sale_ends_at`, as shown at `now`.
    pub fn at(seed: &draw::ServerSeed, sale_ends_at: Option<Timestamp>, now: Timestamp) -> Self {
        Self {
            server_seed_hash: seed.commitment(),
            server_seed: seed_revealed(sale_ends_at, now).then(|| seed.to_hex()),
        }
    }
}

/// When a pack whose sale ends at `sale_ends_at` reveals its server seed: [`REVEAL_DELAY_SECONDS`]
/// later, when no hold can still be paid. A pack without a sale end never reveals.
pub fn reveal_at(sale_ends_at: Option<Timestamp>) -> Option<Timestamp> {
    sale_ends_at.and_then(|ends| ends.plus_seconds(REVEAL_DELAY_SECONDS))
}

/// Whether the server seed of a pack whose sale ends at `sale_ends_at` is public at `now`.
pub fn seed_revealed(sale_ends_at: Option<Timestamp>, now: Timestamp) -> bool {
    reveal_at(sale_ends_at).is_some_and(|at| at <= now)
}

#[cfg(any(test, feature = "fixtures"))]
pub mod fixtures;
#[cfg(test)]
pub(crate) mod tests;
