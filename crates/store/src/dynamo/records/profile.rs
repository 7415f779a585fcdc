//! A fan's profile (`USER#<userId>` / `PROFILE`) and the holder of a display name
//! (`NAME#<nameKey>` / `NAME`) as records.

use serde::{Deserialize, Serialize};

use super::{readable, version_one};
use crate::StoreError;
use domain::ids::{TeamId, UserId};
use domain::profile::name::DisplayName;
use domain::profile::{AvatarUrl, Profile};

/// The version of the profile items this release writes, and the newest it reads.
pub(crate) const PROFILE_VERSION: u32 = 1;

/// The version of the name items (`NAME#<key>`) this release writes, and the newest it reads.
/// Version 2 keys a name on its skeleton ([`domain::profile::name::skeleton`]); version 1 keyed
/// it on the lowercase name, and a release of version 1 would take a version-2 key for a name
/// (`hollovv`) and misread who holds it: it refuses the item instead. A version-1 item is not
/// found by this release's keys; none was deployed, so none is migrated (docs/fan-app.md).
pub(crate) const NAME_VERSION: u32 = 2;

/// A profile as stored, with its revision (moved on by every write, which a patch is
/// conditioned on).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StoredProfile {
    pub profile: Profile,
    pub rev: u64,
}

/// A profile item's attributes (besides its keys and `entity`).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ProfileRecord {
    #[serde(default = "version_one")]
    schema_version: u32,
    rev: u64,
    id: UserId,
    email: Option<String>,
    display_name: Option<DisplayName>,
    #[serde(default, deserialize_with = "AvatarUrl::read_stored")]
    avatar_url: Option<AvatarUrl>,
    favorite_team_id: Option<TeamId>,
    created_at: domain::timestamp::Timestamp,
    updated_at: domain::timestamp::Timestamp,
}

impl From<&StoredProfile> for ProfileRecord {
    fn from(stored: &StoredProfile) -> Self {
        let Profile {
            id,
            email,
            display_name,
            avatar_url,
            favorite_team_id,
            created_at,
            updated_at,
        } = stored.profile.clone();
        Self {
            schema_version: PROFILE_VERSION,
            rev: stored.rev,
            id,
            email,
            display_name,
            avatar_url,
            favorite_team_id,
            created_at,
            updated_at,
        }
    }
}

impl TryFrom<ProfileRecord> for StoredProfile {
    type Error = StoreError;

    fn try_from(record: ProfileRecord) -> Result<Self, StoreError> {
        readable("profile", record.schema_version, PROFILE_VERSION)?;
        Ok(Self {
            profile: Profile {
                id: record.id,
                email: record.email,
                display_name: record.display_name,
                avatar_url: record.avatar_url,
                favorite_team_id: record.favorite_team_id,
                created_at: record.created_at,
                updated_at: record.updated_at,
            },
            rev: record.rev,
        })
    }
}

/// A display name's item: who holds it.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct NameRecord {
    #[serde(default = "version_one")]
    schema_version: u32,
    user_id: UserId,
}

/// The holder of a name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NameHolder(pub UserId);

impl From<&NameHolder> for NameRecord {
    fn from(holder: &NameHolder) -> Self {
        Self {
            schema_version: NAME_VERSION,
            user_id: holder.0.clone(),
        }
    }
}

impl TryFrom<NameRecord> for NameHolder {
    type Error = StoreError;

    fn try_from(record: NameRecord) -> Result<Self, StoreError> {
        readable("name", record.schema_version, NAME_VERSION)?;
        Ok(Self(record.user_id))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::dynamo::records::read_record;
    use crate::dynamo::records::tests::{n, newer, refused, s};
    use domain::timestamp::Timestamp;

    #[test]
    fn a_profile_reads_back_as_written_and_a_newer_one_is_refused() {
        let at = Timestamp::parse("2026-11-26T00:00:00Z").unwrap();
        let mut profile = Profile::new(UserId::parse("auth0|fan").unwrap(), None, at);
        profile.display_name = Some(DisplayName::parse("Zoe.B").unwrap());
        let stored = StoredProfile { profile, rev: 3 };
        let item: HashMap<String, aws_sdk_dynamodb::types::AttributeValue> =
            serde_dynamo::to_item(ProfileRecord::from(&stored)).unwrap();
        assert_eq!(item.get("schemaVersion"), Some(&n(1)));
        assert_eq!(item.get("displayName"), Some(&s("Zoe.B")));
        assert_eq!(item.get("rev"), Some(&n(3)));
        let read: StoredProfile = read_record::<ProfileRecord, _>(item.clone(), "profile").unwrap();
        assert_eq!(read, stored);
        refused(read_record::<ProfileRecord, StoredProfile>(
            newer(item),
            "profile",
        ));
    }

    #[test]
    fn a_raw_avatar_of_an_older_item_is_read_normalised_or_dropped() {
        let item = |avatar: &str| {
            HashMap::from([
                ("rev".into(), n(1)),
                ("id".into(), s("fan")),
                ("avatarUrl".into(), s(avatar)),
                ("createdAt".into(), s("2026-11-26T00:00:00Z")),
                ("updatedAt".into(), s("2026-11-26T00:00:00Z")),
            ])
        };
        let avatar = |raw: &str| {
            read_record::<ProfileRecord, StoredProfile>(item(raw), "profile")
                .unwrap()
                .profile
                .avatar_url
                .map(|url| url.as_str().to_owned())
        };
        assert_eq!(
            avatar("https://cdn.ex\tample/\n<script>alert(1)</script>").as_deref(),
            Some("https://cdn.example/%3Cscript%3Ealert(1)%3C/script%3E")
        );
        assert_eq!(avatar("https://user:pass@cdn.example/a.png"), None);
    }

    #[test]
    fn a_name_item_is_written_at_version_2_and_a_newer_one_is_refused() {
        let item: HashMap<String, aws_sdk_dynamodb::types::AttributeValue> =
            serde_dynamo::to_item(NameRecord::from(&NameHolder(UserId::parse("fan").unwrap())))
                .unwrap();
        assert_eq!(item.get("schemaVersion"), Some(&n(2)));
        let read: NameHolder = read_record::<NameRecord, _>(item.clone(), "name").unwrap();
        assert_eq!(read, NameHolder(UserId::parse("fan").unwrap()));
        refused(read_record::<NameRecord, NameHolder>(newer(item), "name"));
    }

    #[test]
    fn a_name_outside_the_grammar_is_refused_where_it_is_read() {
        let item = HashMap::from([
            ("rev".into(), n(1)),
            ("id".into(), s("fan")),
            ("displayName".into(), s("no spaces allowed")),
            ("createdAt".into(), s("2026-11-26T00:00:00Z")),
            ("updatedAt".into(), s("2026-11-26T00:00:00Z")),
        ]);
        assert!(read_record::<ProfileRecord, StoredProfile>(item, "profile").is_err());
    }
}
