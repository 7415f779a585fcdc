//! The order of the catalogue's lists: leagues by name, teams by league then name (both case
//! folded, the id breaking ties), and for each entry a text key whose byte order is that order,
//! so that a sort key in the table, a cursor's position and the in-memory store agree without a
//! second comparison to keep in step.
//!
//! A key is its components, each followed by `#`. An id's characters (`[A-Za-z0-9_-]`) all sort
//! after `#`, so a shorter id that is a prefix of a longer one sorts first, as in a tuple. A
//! name may hold any character, some of them before `#` (a space), so it is written as the
//! hexadecimal of its lowercase UTF-8 bytes: byte order is kept, and every digit sorts after `#`.

use std::cmp::Ordering;

use crate::catalog::{League, Team};
use crate::ids::{LeagueId, TeamId};

/// The key of a league in the leagues list: `<hex of folded name>#<leagueId>`.
pub fn league_key(league: &League) -> String {
    let mut key = name_component(&league.name);
    key.push_str(league.id.as_str());
    key
}

/// The key of a team in the teams list: `<leagueId>#<hex of folded name>#<teamId>`; the teams
/// of one league are the keys that start with `<leagueId>#` ([`league_prefix`]).
pub fn team_key(team: &Team) -> String {
    let mut key = league_prefix(team.league_id.as_str());
    key.push_str(&name_component(&team.name));
    key.push_str(team.id.as_str());
    key
}

/// The start of the keys of one league's teams.
pub fn league_prefix(league_id: &str) -> String {
    format!("{league_id}#")
}

/// Leagues in list order.
pub fn cmp_leagues(a: &League, b: &League) -> Ordering {
    (a.name.to_lowercase(), &a.id).cmp(&(b.name.to_lowercase(), &b.id))
}

/// Teams in list order.
pub fn cmp_teams(a: &Team, b: &Team) -> Ordering {
    (&a.league_id, a.name.to_lowercase(), &a.id).cmp(&(&b.league_id, b.name.to_lowercase(), &b.id))
}

/// The id of a league key, when `key` is one as [`league_key`] writes it (a cursor's position
/// is checked with it, and gives the item's key back).
pub fn parse_league_key(key: &str) -> Option<LeagueId> {
    let (name, id) = key.split_once('#')?;
    is_name_hex(name).then(|| LeagueId::parse(id).ok())?
}

/// The league and id of a team key, when `key` is one as [`team_key`] writes it.
pub fn parse_team_key(key: &str) -> Option<(LeagueId, TeamId)> {
    let mut parts = key.splitn(3, '#');
    let (league, name, id) = (parts.next()?, parts.next()?, parts.next()?);
    if !is_name_hex(name) {
        return None;
    }
    Some((LeagueId::parse(league).ok()?, TeamId::parse(id).ok()?))
}

/// The hexadecimal of a folded name (even length, lowercase digits).
fn is_name_hex(text: &str) -> bool {
    text.len().is_multiple_of(2)
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn name_component(name: &str) -> String {
    use std::fmt::Write;
    let folded = name.to_lowercase();
    let mut out = String::with_capacity(folded.len() * 2 + 1);
    for byte in folded.bytes() {
        let _ = write!(out, "{byte:02x}");
    }
    out.push('#');
    out
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn team(league: &str, id: &str, name: &str) -> Team {
        Team {
            id: TeamId::parse(id).unwrap(),
            league_id: LeagueId::parse(league).unwrap(),
            name: name.into(),
            city: "City".into(),
            abbreviation: "AB".into(),
            logo_url: "https://cdn.fan-api.example/teams/x.png".into(),
            primary_color: "#000000".into(),
        }
    }

    fn league(id: &str, name: &str) -> League {
        League {
            id: LeagueId::parse(id).unwrap(),
            name: name.into(),
            sport: "basketball".into(),
            logo_url: "https://cdn.fan-api.example/leagues/x.png".into(),
        }
    }

    #[test]
    fn teams_go_by_league_then_folded_name_then_id() {
        let mut teams = [
            team("nfl", "nfl-lac", "Chargers"),
            team("nba", "nba-sac", "Kings X"),
            team("nba", "nba-lal", "Lakers"),
            team("nba", "nba-kin", "Kings"),
            team("nba", "nba-phi", "76ers"),
            team("nba", "nba-b", "bucks"),
            team("nba-g", "nba-g-a", "Aces"),
        ];
        teams.sort_by(cmp_teams);
        let order: Vec<&str> = teams.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(
            order,
            [
                "nba-phi", "nba-b", "nba-kin", "nba-sac", "nba-lal", "nba-g-a", "nfl-lac"
            ]
        );
        let mut keys: Vec<String> = teams.iter().map(team_key).collect();
        let in_order = keys.clone();
        keys.sort();
        assert_eq!(keys, in_order, "keys sort as the teams do");
        assert_eq!(team_key(&teams[1]), "nba#6275636b73#nba-b");
        assert!(team_key(&teams[0]).starts_with(&league_prefix("nba")));
        assert!(!team_key(&teams[5]).starts_with(&league_prefix("nba")));
    }

    #[test]
    fn leagues_go_by_folded_name_then_id() {
        let mut leagues = [
            league("nfl", "NFL"),
            league("premier-league", "Premier League"),
            league("nba", "NBA"),
            league("f1", "Formula 1"),
            league("nba-2", "nba"),
        ];
        leagues.sort_by(cmp_leagues);
        let order: Vec<&str> = leagues.iter().map(|l| l.id.as_str()).collect();
        assert_eq!(order, ["f1", "nba", "nba-2", "nfl", "premier-league"]);
        let keys: Vec<String> = leagues.iter().map(league_key).collect();
        assert!(keys.is_sorted());
    }

    #[test]
    fn keys_parse_back_to_their_ids_and_nothing_else_parses() {
        let lakers = team("nba", "nba-lal", "Lakers");
        let parsed = parse_team_key(&team_key(&lakers)).unwrap();
        assert_eq!((parsed.0.as_str(), parsed.1.as_str()), ("nba", "nba-lal"));
        let nba = league("nba", "NBA");
        assert_eq!(parse_league_key(&league_key(&nba)).unwrap().as_str(), "nba");
        for bad in [
            "",
            "nba",
            "6e6261#",
            "6e6#nba",
            "6E6261#nba",
            "zz#nba",
            "6e6261#a b",
        ] {
            assert!(parse_league_key(bad).is_none(), "{bad:?}");
        }
        for bad in [
            "",
            "nba#6c616b657273",
            "nba#6c61#",
            "a b#6c61#nba-lal",
            "nba#xy#nba-lal",
        ] {
            assert!(parse_team_key(bad).is_none(), "{bad:?}");
        }
    }

    proptest! {
        #[test]
        fn a_key_sorts_as_its_team(
            a in ("[a-z0-9_-]{1,6}", "[a-zA-Z0-9_-]{1,6}", "\\PC{0,12}"),
            b in ("[a-z0-9_-]{1,6}", "[a-zA-Z0-9_-]{1,6}", "\\PC{0,12}"),
        ) {
            let make = |(league, own, name): &(String, String, String)| {
                team(league, &format!("{league}-{own}"), name)
            };
            let (a, b) = (make(&a), make(&b));
            prop_assert_eq!(team_key(&a).cmp(&team_key(&b)), cmp_teams(&a, &b));
        }
    }
}
