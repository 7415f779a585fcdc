//! Profiles in memory: each operation decides and applies under one write lock, checking the
//! conditions DynamoDB's transaction carries ([`crate::profile::conditions`]).

use super::MemoryStore;
use super::items::{NameItem, Present, ProfileItem};
use crate::StoreError;
use crate::condition::{Attributes, require};
use crate::profile::{GetProfile, PatchProfile, PatchProfileError, conditions};
use domain::ids::UserId;
use domain::profile::Profile;
use domain::profile::name::{NameChange, name_change};
use domain::profile::patch::{Patch, ProfilePatch};
use domain::timestamp::Timestamp;

/// A profile and its revision, as stored.
#[derive(Debug, Clone)]
pub(super) struct StoredProfile {
    pub profile: Profile,
    pub rev: u64,
}

impl GetProfile for MemoryStore {
    async fn get_profile(
        &self,
        user_id: &UserId,
        email: Option<&str>,
        now: Timestamp,
    ) -> Result<Profile, StoreError> {
        let mut tables = self.write();
        let stored = tables
            .profiles
            .entry(user_id.clone())
            .or_insert_with(|| StoredProfile {
                profile: Profile::new(user_id.clone(), email.map(str::to_owned), now),
                rev: 1,
            });
        Ok(stored.profile.clone())
    }
}

impl PatchProfile for MemoryStore {
    async fn patch_profile(
        &self,
        user_id: &UserId,
        email: Option<&str>,
        patch: &ProfilePatch,
        now: Timestamp,
    ) -> Result<Profile, PatchProfileError> {
        let mut tables = self.write();
        let stored = tables.profiles.get(user_id).cloned();
        let rev = stored.as_ref().map(|stored| stored.rev);
        let current = stored.map_or_else(
            || Profile::new(user_id.clone(), email.map(str::to_owned), now),
            |stored| stored.profile,
        );
        let next = current.patched(patch.clone(), now);
        if next == current && rev.is_some() {
            return Ok(current);
        }
        let profile_item = rev.map(ProfileItem);
        require(
            "patch profile",
            &conditions::profile_as_read(rev),
            profile_item.as_ref().map(|item| item as &dyn Attributes),
        )?;
        let holder = |tables: &super::Tables, key| tables.names.get(key).cloned().map(NameItem);
        let (claim, release) = match name_change(
            current.display_name.as_ref(),
            patch.display_name.as_change(),
        ) {
            NameChange::Unchanged => (None, None),
            NameChange::Claim { claim, release } => (Some(claim), release),
            NameChange::Release(old) => (None, Some(old)),
        };
        if let Some(claim) = &claim {
            let held = holder(&tables, claim);
            if !conditions::name_claimable(user_id)
                .holds(held.as_ref().map(|held| held as &dyn Attributes))
            {
                return Err(PatchProfileError::NameTaken);
            }
        }
        if let Patch::Set(team) = &patch.favorite_team_id
            && current.favorite_team_id.as_ref() != Some(team)
            && !conditions::team_exists().holds(
                tables
                    .teams
                    .contains_key(team)
                    .then_some(&Present as &dyn Attributes),
            )
        {
            return Err(PatchProfileError::TeamNotFound);
        }
        if let Some(release) = &release {
            let held = holder(&tables, release);
            require(
                "free a display name",
                &conditions::name_held_by(user_id),
                held.as_ref().map(|held| held as &dyn Attributes),
            )?;
            tables.names.remove(release);
        }
        if let Some(claim) = claim {
            tables.names.insert(claim, user_id.clone());
        }
        tables.profiles.insert(
            user_id.clone(),
            StoredProfile {
                profile: next.clone(),
                rev: rev.map_or(1, |rev| rev + 1),
            },
        );
        Ok(next)
    }
}
