//! The fan's profile (`GET` / `PATCH /api/me`): created from the session token on the first
//! call, then changed by patches.
//!
//! - [`name`]: display names, their uniqueness key and what a rename frees.
//! - [`patch`]: the `PATCH /api/me` body and its checks.
//!
//! The e-mail comes from the token and is the fan's own: a public view (the locker room) never
//! carries it.

pub mod name;
pub mod patch;

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize};

use crate::ids::{TeamId, UserId};
use crate::profile::name::DisplayName;
use crate::profile::patch::ProfilePatch;
use crate::timestamp::Timestamp;
use crate::urls::normalised_https_url;

/// An avatar's URL as stored and served: the normal form of what the fan sent, https, on a
/// public domain name, at most 2,048 bytes ([`crate::urls`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct AvatarUrl(String);

impl AvatarUrl {
    /// `text` in its normal form, or `None` when the rules refuse it.
    pub fn parse(text: &str) -> Option<Self> {
        normalised_https_url(text).map(Self)
    }

    /// A stored avatar, normalised again as it is read: an item written before avatars were
    /// stored normalised holds the text as sent, and is served in its normal form, or not at
    /// all when today's rules refuse it (never as it was sent).
    pub fn read_stored<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Self>, D::Error> {
        Ok(Option::<String>::deserialize(deserializer)?.and_then(|text| Self::parse(&text)))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for AvatarUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A fan's profile, as `GET /api/me` answers it (`{"user": ...}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = User)]
pub struct Profile {
    /// The session token's `sub`.
    #[schema(value_type = String, min_length = 1)]
    pub id: UserId,
    /// The token's e-mail claim when the profile was created; shown to nobody else.
    #[schema(required)]
    pub email: Option<String>,
    #[schema(value_type = Option<String>, pattern = "^[A-Za-z0-9_.-]{3,24}$", required)]
    pub display_name: Option<DisplayName>,
    #[schema(value_type = Option<String>, format = "uri", pattern = "^https://", max_length = 2048, required)]
    pub avatar_url: Option<AvatarUrl>,
    #[schema(value_type = Option<String>, pattern = "^[A-Za-z0-9_-]{1,64}$", required)]
    pub favorite_team_id: Option<TeamId>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

impl Profile {
    /// The profile a fan's first call creates: what the token says, the rest null.
    pub fn new(id: UserId, email: Option<String>, now: Timestamp) -> Self {
        Self {
            id,
            email,
            display_name: None,
            avatar_url: None,
            favorite_team_id: None,
            created_at: now,
            updated_at: now,
        }
    }

    /// The profile after `patch` at `now` (`updatedAt` moves only when a field changes).
    pub fn patched(&self, patch: ProfilePatch, now: Timestamp) -> Self {
        let next = Self {
            display_name: patch.display_name.apply(self.display_name.clone()),
            avatar_url: patch.avatar_url.apply(self.avatar_url.clone()),
            favorite_team_id: patch.favorite_team_id.apply(self.favorite_team_id.clone()),
            ..self.clone()
        };
        if next == *self {
            next
        } else {
            Self {
                updated_at: now,
                ..next
            }
        }
    }

    /// The events of the fan's change of `self` to `next`: `profile.updated` naming the public
    /// fields that changed (as the API writes them), or none when none did.
    pub fn update_events(&self, next: &Profile) -> Vec<crate::events::NewEvent> {
        let fields: Vec<String> = [
            ("displayName", self.display_name != next.display_name),
            ("avatarUrl", self.avatar_url != next.avatar_url),
            (
                "favoriteTeamId",
                self.favorite_team_id != next.favorite_team_id,
            ),
        ]
        .into_iter()
        .filter(|(_, changed)| *changed)
        .map(|(field, _)| field.to_owned())
        .collect();
        if fields.is_empty() {
            return Vec::new();
        }
        vec![crate::events::NewEvent::fan(
            &self.id,
            crate::events::ProfileUpdated { fields },
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::patch::ProfilePatchBody;
    use super::*;

    fn at(text: &str) -> Timestamp {
        Timestamp::parse(text).unwrap()
    }

    fn patch(json: &str) -> ProfilePatch {
        serde_json::from_str::<ProfilePatchBody>(json)
            .unwrap()
            .check()
            .unwrap()
    }

    #[test]
    fn a_new_profile_holds_the_token_and_nulls() {
        let created = at("2026-11-25T21:00:00Z");
        let profile = Profile::new(
            UserId::parse("auth0|fan").unwrap(),
            Some("fan@example.com".into()),
            created,
        );
        assert_eq!(
            serde_json::to_value(&profile).unwrap(),
            serde_json::json!({
                "id": "auth0|fan", "email": "fan@example.com", "displayName": null,
                "avatarUrl": null, "favoriteTeamId": null,
                "createdAt": "2026-11-25T21:00:00Z", "updatedAt": "2026-11-25T21:00:00Z"
            })
        );
    }

    #[test]
    fn a_patch_sets_clears_and_keeps_and_moves_updated_at_only_on_a_change() {
        let created = at("2026-11-25T21:00:00Z");
        let later = at("2026-11-25T22:00:00Z");
        let profile = Profile::new(UserId::parse("fan").unwrap(), None, created);
        let named = profile.patched(
            patch(r#"{"displayName": "Alice", "avatarUrl": "https://a.example/a.png"}"#),
            later,
        );
        assert_eq!(named.display_name.as_ref().unwrap().as_str(), "Alice");
        assert_eq!(
            named.avatar_url.as_ref().unwrap().as_str(),
            "https://a.example/a.png"
        );
        assert_eq!((named.created_at, named.updated_at), (created, later));
        let cleared = named.patched(patch(r#"{"avatarUrl": null}"#), at("2026-11-26T00:00:00Z"));
        assert_eq!(cleared.display_name, named.display_name);
        assert_eq!(cleared.avatar_url, None);
        assert_eq!(cleared.updated_at, at("2026-11-26T00:00:00Z"));
        let same = cleared.patched(
            patch(r#"{"displayName": "Alice"}"#),
            at("2027-01-01T00:00:00Z"),
        );
        assert_eq!(same, cleared);
    }

    #[test]
    fn a_stored_avatar_is_read_normalised_or_not_at_all() {
        #[derive(Deserialize)]
        struct Stored {
            #[serde(default, deserialize_with = "AvatarUrl::read_stored")]
            avatar_url: Option<AvatarUrl>,
        }
        let read = |json: &str| {
            serde_json::from_str::<Stored>(json)
                .unwrap()
                .avatar_url
                .map(|url| url.as_str().to_owned())
        };
        assert_eq!(
            read(r#"{"avatar_url": " HTTPS:cdn.example/a.png?\"><img src=x>"}"#).as_deref(),
            Some("https://cdn.example/a.png?%22%3E%3Cimg%20src=x%3E")
        );
        assert_eq!(read(r#"{"avatar_url": "https://127.0.0.1/a.png"}"#), None);
        assert_eq!(read(r#"{"avatar_url": "ftp://a.example/a.png"}"#), None);
        assert_eq!(read(r#"{"avatar_url": null}"#), None);
        assert_eq!(read("{}"), None);
    }
}
