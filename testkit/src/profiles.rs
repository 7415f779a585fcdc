//! What the profile's tests share: a team of the catalogue to pick as a favourite.

use domain::catalog::Team;
use domain::ids::{LeagueId, TeamId};

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

/// Gives `fan` the display name `display_name` (and `avatar_url`, when given) through the
/// profile's own patch; panics when refused.
pub async fn name(
    store: &impl store::profile::PatchProfile,
    fan: &str,
    display_name: &str,
    avatar_url: Option<&str>,
) {
    let body = serde_json::json!({"displayName": display_name, "avatarUrl": avatar_url});
    let patch = serde_json::from_value::<domain::profile::patch::ProfilePatchBody>(body)
        .expect("a patch body")
        .check()
        .expect("a valid patch");
    store
        .patch_profile(
            &crate::ids::user(fan),
            None,
            &patch,
            domain::timestamp::Timestamp::now(),
        )
        .await
        .expect("the patch");
}
