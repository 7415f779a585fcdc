//! Leagues (`LEAGUE#<leagueId>` / `LEAGUE`) and teams (`TEAM#<teamId>` / `TEAM`) as records:
//! their API fields under their own attribute names, each mapped explicitly, so that a field
//! renamed in the domain renames no stored attribute.

use serde::{Deserialize, Serialize};

use super::{CATALOG_VERSION, readable};
use crate::StoreError;
use domain::catalog::{League, Team};
use domain::ids::{LeagueId, TeamId};

/// A league item's attributes (besides its keys, index keys and `entity`).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LeagueRecord {
    schema_version: u32,
    id: LeagueId,
    name: String,
    sport: String,
    logo_url: String,
}

mirrored_record!(LeagueRecord <=> League, "league", CATALOG_VERSION, {
    id, name, sport, logo_url,
});

/// A team item's attributes (besides its keys, index keys and `entity`).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TeamRecord {
    schema_version: u32,
    id: TeamId,
    league_id: LeagueId,
    name: String,
    city: String,
    abbreviation: String,
    logo_url: String,
    primary_color: String,
}

mirrored_record!(TeamRecord <=> Team, "team", CATALOG_VERSION, {
    id, league_id, name, city, abbreviation, logo_url, primary_color,
});

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use aws_sdk_dynamodb::types::AttributeValue;

    use super::*;
    use crate::dynamo::records::read_record;
    use crate::dynamo::records::tests::{newer, refused, s};

    fn lakers() -> Team {
        Team {
            id: TeamId::parse("nba-lal").unwrap(),
            league_id: LeagueId::parse("nba").unwrap(),
            name: "Lakers".into(),
            city: "Los Angeles".into(),
            abbreviation: "LAL".into(),
            logo_url: "https://cdn.fan-api.example/teams/nba-lal.png".into(),
            primary_color: "#552583".into(),
        }
    }

    #[test]
    fn a_team_is_stored_under_its_own_attribute_names_and_reads_back() {
        let item: HashMap<String, AttributeValue> =
            serde_dynamo::to_item(TeamRecord::from(&lakers())).unwrap();
        assert_eq!(item.get("leagueId"), Some(&s("nba")));
        assert_eq!(item.get("primaryColor"), Some(&s("#552583")));
        assert_eq!(
            item.get("schemaVersion"),
            Some(&AttributeValue::N("1".into()))
        );
        assert_eq!(
            read_record::<TeamRecord, Team>(item.clone(), "team").unwrap(),
            lakers()
        );
        refused(read_record::<TeamRecord, Team>(newer(item), "team"));
    }

    #[test]
    fn a_league_reads_back_and_a_newer_or_malformed_one_is_refused() {
        let league = League {
            id: LeagueId::parse("nba").unwrap(),
            name: "NBA".into(),
            sport: "basketball".into(),
            logo_url: "https://cdn.fan-api.example/leagues/nba.png".into(),
        };
        let item: HashMap<String, AttributeValue> =
            serde_dynamo::to_item(LeagueRecord::from(&league)).unwrap();
        assert_eq!(
            read_record::<LeagueRecord, League>(item.clone(), "league").unwrap(),
            league
        );
        let mut bad_id = item.clone();
        bad_id.insert("id".into(), s("not an id"));
        assert!(read_record::<LeagueRecord, League>(bad_id, "league").is_err());
        refused(read_record::<LeagueRecord, League>(newer(item), "league"));
    }
}
