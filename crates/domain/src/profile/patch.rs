//! The body of `PATCH /api/me`: each of `displayName`, `avatarUrl` and `favoriteTeamId` absent
//! (kept), `null` (cleared) or a value (set); any other member refused.
//!
//! The body is read as text first ([`ProfilePatchBody`]: a member of the wrong JSON type or an
//! unknown one is a malformed body), then checked member by member ([`ProfilePatchBody::check`])
//! so that a bad value is reported with the field it is in. That the body is an object is the
//! HTTP layer's check, as for every body.

use serde::{Deserialize, Deserializer};

use crate::ids::TeamId;
use crate::profile::AvatarUrl;
use crate::profile::name::DisplayName;

/// One member of a patch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Patch<T> {
    /// Not in the body: the field is kept.
    #[default]
    Absent,
    /// `null`: the field is cleared.
    Clear,
    Set(T),
}

impl<T> Patch<T> {
    /// `None` when absent, else what the field becomes.
    pub fn as_change(&self) -> Option<Option<&T>> {
        match self {
            Patch::Absent => None,
            Patch::Clear => Some(None),
            Patch::Set(value) => Some(Some(value)),
        }
    }

    /// The field after the patch.
    pub fn apply(self, current: Option<T>) -> Option<T> {
        match self {
            Patch::Absent => current,
            Patch::Clear => None,
            Patch::Set(value) => Some(value),
        }
    }

    fn try_map<U, E>(self, f: impl FnOnce(T) -> Result<U, E>) -> Result<Patch<U>, E> {
        Ok(match self {
            Patch::Absent => Patch::Absent,
            Patch::Clear => Patch::Clear,
            Patch::Set(value) => Patch::Set(f(value)?),
        })
    }
}

// Absence is the `#[serde(default)]` of the member; only a present member reaches this.
impl<'de, T: Deserialize<'de>> Deserialize<'de> for Patch<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Option::<T>::deserialize(deserializer)?.map_or(Patch::Clear, Patch::Set))
    }
}

/// The body of `PATCH /api/me`, as sent: each member absent (kept), `null` (cleared) or a
/// value (set).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = ProfilePatch)]
pub struct ProfilePatchBody {
    /// Your name as others see it, unique by how it looks (without regard to case, `0`/`O`,
    /// `1`/`l`/`I`, `m`/`rn`, `w`/`vv`, and the separators `_`, `.` and `-`), not a staff or system
    /// name; `null` clears it (and frees it for others).
    #[serde(default)]
    #[schema(value_type = Option<String>, pattern = "^[A-Za-z0-9_.-]{3,24}$", example = "Zoe.Hoops")]
    pub display_name: Patch<String>,
    /// An https URL of at most 2,048 bytes on a domain name (no user, password, port, IP address
    /// or internationalised host), stored and served in its normal form (`https://CDN.example/a b`
    /// is kept as `https://cdn.example/a%20b`); `null` clears it.
    #[serde(default)]
    #[schema(value_type = Option<String>, format = "uri", pattern = "^https://", max_length = 2048)]
    pub avatar_url: Patch<String>,
    /// A team of the catalogue (`GET /api/teams`); `null` clears it.
    #[serde(default)]
    #[schema(value_type = Option<String>, pattern = "^[A-Za-z0-9_-]{1,64}$", example = "nba-lal")]
    pub favorite_team_id: Patch<String>,
}

/// A checked patch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProfilePatch {
    pub display_name: Patch<DisplayName>,
    pub avatar_url: Patch<AvatarUrl>,
    /// A team id of the right grammar; whether the team exists is the store's to say.
    pub favorite_team_id: Patch<TeamId>,
}

/// The field of a patch that is bad.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PatchError {
    #[error("displayName must be 3-24 characters of A-Z, a-z, 0-9, _, . and -, or null")]
    DisplayName,
    /// Of the grammar, but no fan may take it ([`DisplayName::is_claimable`]).
    #[error(
        "displayName is reserved: it reads as a staff or system name, or has no letter or digit"
    )]
    DisplayNameReserved,
    #[error(
        "avatarUrl must be an https URL of at most 2048 bytes on a domain name, without a user, \
         password or port, or null"
    )]
    AvatarUrl,
    /// Not a team id: no team has it, as for an id of the grammar that names none.
    #[error("favoriteTeamId names no team")]
    FavoriteTeamId,
}

impl PatchError {
    /// The member, as the body names it.
    pub const fn field(self) -> &'static str {
        match self {
            PatchError::DisplayName | PatchError::DisplayNameReserved => "displayName",
            PatchError::AvatarUrl => "avatarUrl",
            PatchError::FavoriteTeamId => "favoriteTeamId",
        }
    }
}

impl ProfilePatchBody {
    /// Checks each member present, in the body's order of fields; the first bad one is named.
    pub fn check(self) -> Result<ProfilePatch, PatchError> {
        Ok(ProfilePatch {
            display_name: self.display_name.try_map(|name| {
                let name = DisplayName::parse(name).map_err(|_| PatchError::DisplayName)?;
                if name.is_claimable() {
                    Ok(name)
                } else {
                    Err(PatchError::DisplayNameReserved)
                }
            })?,
            avatar_url: self
                .avatar_url
                .try_map(|url| AvatarUrl::parse(&url).ok_or(PatchError::AvatarUrl))?,
            favorite_team_id: self
                .favorite_team_id
                .try_map(|id| TeamId::parse(id).map_err(|_| PatchError::FavoriteTeamId))?,
        })
    }
}

impl ProfilePatch {
    /// Whether the patch changes nothing (`{}`).
    pub fn is_empty(&self) -> bool {
        self.display_name == Patch::Absent
            && self.avatar_url == Patch::Absent
            && self.favorite_team_id == Patch::Absent
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(json: &str) -> Result<ProfilePatchBody, serde_json::Error> {
        serde_json::from_str(json)
    }

    #[test]
    fn each_member_is_absent_null_or_a_value() {
        let patch = body(r#"{"displayName": "Alice", "avatarUrl": null}"#)
            .unwrap()
            .check()
            .unwrap();
        assert_eq!(
            patch.display_name,
            Patch::Set(DisplayName::parse("Alice").unwrap())
        );
        assert_eq!(patch.avatar_url, Patch::Clear);
        assert_eq!(patch.favorite_team_id, Patch::Absent);
        assert!(!patch.is_empty());
        assert!(body("{}").unwrap().check().unwrap().is_empty());
        let team = body(r#"{"favoriteTeamId": "nba-lal"}"#)
            .unwrap()
            .check()
            .unwrap();
        assert_eq!(
            team.favorite_team_id,
            Patch::Set(TeamId::parse("nba-lal").unwrap())
        );
    }

    #[test]
    fn unknown_members_and_wrong_types_are_malformed_bodies() {
        for bad in [
            r#"{"email": "x@example.com"}"#,
            r#"{"displayname": "Alice"}"#,
            r#"{"displayName": 5}"#,
            r#"{"avatarUrl": ["https://a.example/x.png"]}"#,
            r#"{"displayName": "Alice", "displayName": "Bob"}"#,
        ] {
            assert!(body(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_bad_value_names_its_field() {
        let long_url = format!("https://a.example/{}", "x".repeat(2048));
        let cases = [
            (
                r#"{"displayName": "ab"}"#.to_owned(),
                PatchError::DisplayName,
            ),
            (r#"{"displayName": ""}"#.to_owned(), PatchError::DisplayName),
            (
                r#"{"displayName": "Adm1n"}"#.to_owned(),
                PatchError::DisplayNameReserved,
            ),
            (
                r#"{"displayName": "..."}"#.to_owned(),
                PatchError::DisplayNameReserved,
            ),
            (
                r#"{"avatarUrl": "https://user:pass@a.example/x.png"}"#.to_owned(),
                PatchError::AvatarUrl,
            ),
            (
                r#"{"avatarUrl": "http://a.example/x.png"}"#.to_owned(),
                PatchError::AvatarUrl,
            ),
            (
                format!(r#"{{"avatarUrl": "{long_url}"}}"#),
                PatchError::AvatarUrl,
            ),
            (
                r#"{"favoriteTeamId": "no such/team"}"#.to_owned(),
                PatchError::FavoriteTeamId,
            ),
            (
                r#"{"displayName": "ok_name", "favoriteTeamId": ""}"#.to_owned(),
                PatchError::FavoriteTeamId,
            ),
        ];
        for (json, expected) in cases {
            assert_eq!(body(&json).unwrap().check(), Err(expected), "{json}");
        }
        assert_eq!(PatchError::AvatarUrl.field(), "avatarUrl");
        assert_eq!(PatchError::DisplayNameReserved.field(), "displayName");
    }

    #[test]
    fn a_patch_applies_field_by_field() {
        assert_eq!(Patch::Absent.apply(Some(1)), Some(1));
        assert_eq!(Patch::Clear.apply(Some(1)), None);
        assert_eq!(Patch::Set(2).apply(Some(1)), Some(2));
        assert_eq!(Patch::Set(2).apply(None), Some(2));
        assert_eq!(Patch::<u8>::Absent.as_change(), None);
        assert_eq!(Patch::<u8>::Clear.as_change(), Some(None));
        assert_eq!(Patch::Set(3).as_change(), Some(Some(&3)));
    }
}
