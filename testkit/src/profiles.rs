//! What the profile's tests share: a team of the catalogue to pick as a favourite.

use shared::catalog::Team;
use shared::ids::{LeagueId, TeamId};

/// A team of the NBA with id `id`.
pub fn team(id: &str) -> Team {
    Team {
        id: TeamId::parse(id).expect("a team id"),
        league_id: LeagueId::parse("nba").expect("a league id"),
        name: "Lakers".into(),
        city: "Los Angeles".into(),
        abbreviation: "LAL".into(),
        logo_url: "https://cdn.example.com/lal.png".into(),
        primary_color: "#552583".into(),
    }
}
