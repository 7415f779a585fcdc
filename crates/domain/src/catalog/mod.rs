//! The catalogue: the leagues and teams fans browse and packs name, seeded by the operator from
//! one file (`infra/seed/catalog.json`: `{"leagues": [...], "teams": [...]}`, the API's JSON).
//!
//! A team's id is its league's id, `-`, and a short name of its own (by convention its
//! abbreviation in lowercase when first seeded: `nba-lal`, `nfl-lac`, `premier-league-ars`).
//! Abbreviations repeat across leagues (the Clippers and the Chargers are both `LAC`), and a
//! team id must be unique in the whole catalogue, since `GET /api/teams/{teamId}` and a pack's
//! `teamId` name a team without its league; the league prefix makes that so by construction and
//! keeps an id readable. Only the prefix is checked: an id outlives an abbreviation (a team
//! that moves city keeps its id).
//!
//! - [`order`]: the order of the leagues and teams lists, as keys that sort the same way.

pub mod order;

use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::ids::{LeagueId, TeamId};
use crate::json_schema::Id;
use crate::packs::Pack;
use crate::text::hidden_char;
use crate::urls::is_normalised_https_url;

/// The most characters of a league's or team's name and of a team's city.
pub const MAX_NAME_CHARS: usize = 60;
/// The most characters of a sport (`basketball`, `american-football`).
pub const MAX_SPORT_CHARS: usize = 32;

/// A league of the catalogue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct League {
    #[schema(value_type = Id)]
    pub id: LeagueId,
    #[schema(min_length = 1, max_length = 60)]
    pub name: String,
    /// `basketball`, `american-football`, `soccer`, ...
    #[schema(pattern = "^[a-z0-9-]{1,32}$")]
    pub sport: String,
    #[schema(format = "uri", max_length = 2048)]
    pub logo_url: String,
}

/// A team of the catalogue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Team {
    /// Its league's id, `-`, and a short name of its own (`nba-lal`).
    #[schema(value_type = Id)]
    pub id: TeamId,
    #[schema(value_type = Id)]
    pub league_id: LeagueId,
    /// The name without the city (`Lakers`); a club known by one name has it whole (`Arsenal`).
    #[schema(min_length = 1, max_length = 60)]
    pub name: String,
    #[schema(min_length = 1, max_length = 60)]
    pub city: String,
    #[schema(pattern = "^[A-Z0-9]{2,4}$")]
    pub abbreviation: String,
    #[schema(format = "uri", max_length = 2048)]
    pub logo_url: String,
    /// `#RRGGBB`.
    #[schema(pattern = "^#[0-9A-Fa-f]{6}$")]
    pub primary_color: String,
}

/// A catalogue file, checked whole ([`parse_catalog`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Catalog {
    pub leagues: Vec<League>,
    pub teams: Vec<Team>,
}

/// Why a catalogue file cannot be seeded: the first problem, with where it is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CatalogError {
    /// Not JSON of the catalogue's shape (a missing or unknown member, a malformed id).
    #[error("not a catalogue: {0}")]
    Shape(String),
    /// An entry breaks a rule: `at` is `teams[3] (nba-lal)`, `field` its member.
    #[error("{at}: {field} {rule}")]
    Entry {
        at: String,
        field: &'static str,
        rule: Rule,
    },
}

/// A rule of a catalogue entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Rule {
    #[error("must not be blank")]
    Blank,
    #[error("must be at most {0} characters")]
    TooLong(usize),
    #[error(
        "must be an https URL of at most 2048 bytes on a domain name (no user, password, port, IP \
         address or internationalised host), written as it is served: in its normal form (host \
         in lowercase, special characters percent-encoded)"
    )]
    NotHttpsUrl,
    #[error("must not hold control, bidi, zero-width or other invisible characters")]
    Hidden,
    #[error("must be #RRGGBB (six hexadecimal digits)")]
    NotColor,
    #[error("must be 2-4 capital letters or digits")]
    NotAbbreviation,
    #[error("must be 1-32 lowercase letters, digits and -")]
    NotSport,
    #[error("repeats an id of the catalogue")]
    RepeatedId,
    #[error("repeats the abbreviation of another team of its league")]
    RepeatedAbbreviation,
    #[error("names no league of the catalogue")]
    UnknownLeague,
    #[error("must be its league's id, -, and 1 or more characters")]
    NotUnderLeague,
}

/// Reads and checks a catalogue file.
pub fn parse_catalog(json: &str) -> Result<Catalog, CatalogError> {
    let deserializer = &mut serde_json::Deserializer::from_str(json);
    let catalog: Catalog = serde_path_to_error::deserialize(deserializer)
        .map_err(|error| CatalogError::Shape(error.to_string()))?;
    catalog.validate()?;
    Ok(catalog)
}

impl Catalog {
    /// Checks every rule; the first broken one is returned with its entry and field.
    pub fn validate(&self) -> Result<(), CatalogError> {
        let mut league_ids = HashSet::with_capacity(self.leagues.len());
        for (index, league) in self.leagues.iter().enumerate() {
            let at = |field, rule| entry_error("leagues", index, league.id.as_str(), field, rule);
            if !league_ids.insert(league.id.as_str()) {
                return Err(at("id", Rule::RepeatedId));
            }
            check_name(&league.name).map_err(|rule| at("name", rule))?;
            if !is_sport(&league.sport) {
                return Err(at("sport", Rule::NotSport));
            }
            if !is_normalised_https_url(&league.logo_url) {
                return Err(at("logoUrl", Rule::NotHttpsUrl));
            }
        }
        let mut team_ids = HashSet::with_capacity(self.teams.len());
        let mut abbreviations = HashSet::with_capacity(self.teams.len());
        for (index, team) in self.teams.iter().enumerate() {
            let at = |field, rule| entry_error("teams", index, team.id.as_str(), field, rule);
            if !team_ids.insert(team.id.as_str()) {
                return Err(at("id", Rule::RepeatedId));
            }
            if !league_ids.contains(team.league_id.as_str()) {
                return Err(at("leagueId", Rule::UnknownLeague));
            }
            if !is_under_league(&team.id, &team.league_id) {
                return Err(at("id", Rule::NotUnderLeague));
            }
            check_name(&team.name).map_err(|rule| at("name", rule))?;
            check_name(&team.city).map_err(|rule| at("city", rule))?;
            if !is_abbreviation(&team.abbreviation) {
                return Err(at("abbreviation", Rule::NotAbbreviation));
            }
            if !abbreviations.insert((team.league_id.as_str(), team.abbreviation.as_str())) {
                return Err(at("abbreviation", Rule::RepeatedAbbreviation));
            }
            if !is_normalised_https_url(&team.logo_url) {
                return Err(at("logoUrl", Rule::NotHttpsUrl));
            }
            if !is_color(&team.primary_color) {
                return Err(at("primaryColor", Rule::NotColor));
            }
        }
        Ok(())
    }

    pub fn league(&self, id: &LeagueId) -> Option<&League> {
        self.leagues.iter().find(|league| league.id == *id)
    }

    pub fn team(&self, id: &TeamId) -> Option<&Team> {
        self.teams.iter().find(|team| team.id == *id)
    }

    /// Whether a pack may name `league` and `team` (seed-packs refuses one that names nothing
    /// of the catalogue, or a team of another league than its own).
    pub fn check_pack_refs(
        &self,
        league: Option<&LeagueId>,
        team: Option<&TeamId>,
    ) -> Result<(), PackRefError> {
        if let Some(league) = league
            && self.league(league).is_none()
        {
            return Err(PackRefError::UnknownLeague);
        }
        let Some(team) = team else { return Ok(()) };
        let team = self.team(team).ok_or(PackRefError::UnknownTeam)?;
        match league {
            Some(league) if team.league_id != *league => Err(PackRefError::TeamOfAnotherLeague),
            _ => Ok(()),
        }
    }
}

impl Catalog {
    /// The first of `packs` whose `leagueId` or `teamId` does not fit this catalogue
    /// ([`Catalog::check_pack_refs`]), with its id and why: what seeding refuses. A reference
    /// outside the id grammar names nothing.
    pub fn check_packs<'a>(&self, packs: &'a [Pack]) -> Result<(), (&'a str, PackRefError)> {
        for pack in packs {
            let league = pack.league_id.as_deref().map(LeagueId::parse).transpose();
            let team = pack.team_id.as_deref().map(TeamId::parse).transpose();
            let checked = match (league, team) {
                (Err(_), _) => Err(PackRefError::UnknownLeague),
                (_, Err(_)) => Err(PackRefError::UnknownTeam),
                (Ok(league), Ok(team)) => self.check_pack_refs(league.as_ref(), team.as_ref()),
            };
            checked.map_err(|problem| (pack.id.as_str(), problem))?;
        }
        Ok(())
    }
}

/// Why a pack's `leagueId` / `teamId` do not fit the catalogue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PackRefError {
    #[error("leagueId names no league of the catalogue")]
    UnknownLeague,
    #[error("teamId names no team of the catalogue")]
    UnknownTeam,
    #[error("teamId names a team of another league than leagueId")]
    TeamOfAnotherLeague,
}

fn entry_error(
    list: &str,
    index: usize,
    id: &str,
    field: &'static str,
    rule: Rule,
) -> CatalogError {
    CatalogError::Entry {
        at: format!("{list}[{index}] ({id})"),
        field,
        rule,
    }
}

fn check_name(name: &str) -> Result<(), Rule> {
    if name.trim().is_empty() {
        Err(Rule::Blank)
    } else if name.chars().count() > MAX_NAME_CHARS {
        Err(Rule::TooLong(MAX_NAME_CHARS))
    } else if hidden_char(name).is_some() {
        Err(Rule::Hidden)
    } else {
        Ok(())
    }
}

fn is_under_league(team: &TeamId, league: &LeagueId) -> bool {
    team.as_str()
        .strip_prefix(league.as_str())
        .and_then(|rest| rest.strip_prefix('-'))
        .is_some_and(|own| !own.is_empty())
}

fn is_sport(text: &str) -> bool {
    (1..=MAX_SPORT_CHARS).contains(&text.len())
        && text
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

fn is_abbreviation(text: &str) -> bool {
    (2..=4).contains(&text.len())
        && text
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
}

/// `#RRGGBB`, hexadecimal digits of either case.
pub fn is_color(text: &str) -> bool {
    text.len() == 7
        && text
            .strip_prefix('#')
            .is_some_and(|hex| hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

#[cfg(test)]
mod tests;
