//! Profiles in memory: each operation decides and applies under one write lock, checking the
//! conditions DynamoDB's transaction carries ([`crate::profile::conditions`]).

use super::MemoryStore;
use super::items::{NameItem, Present, ProfileItem};
use crate::StoreError;
use crate::condition::{Attributes, require};
use crate::profile::{
    FindProfile, GetProfile, PatchProfile, PatchProfileError, Patching, patch_write,
};
use domain::ids::UserId;
use domain::profile::Profile;
use domain::profile::patch::ProfilePatch;
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

impl FindProfile for MemoryStore {
    async fn find_profile(&self, user_id: &UserId) -> Result<Option<Profile>, StoreError> {
        Ok(self
            .read()
            .profiles
            .get(user_id)
            .map(|stored| stored.profile.clone()))
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
        let stored = tables.profiles.get(user_id);
        let rev = stored.map(|stored| stored.rev);
        let read = stored.map(|stored| (stored.profile.clone(), stored.rev));
        let write = match patch_write(user_id, email, read, patch, now) {
            Patching::Unchanged(current) => return Ok(current),
            Patching::Write(write) => write,
        };
        let profile_item = rev.map(ProfileItem);
        require(
            "patch profile",
            &write.as_read,
            profile_item.as_ref().map(|item| item as &dyn Attributes),
        )?;
        let holder = |tables: &super::Tables, key| tables.names.get(key).cloned().map(NameItem);
        if let Some((claim, claimable)) = &write.claim {
            let held = holder(&tables, claim);
            if !claimable.holds(held.as_ref().map(|held| held as &dyn Attributes)) {
                return Err(PatchProfileError::NameTaken);
            }
        }
        if let Some((team, exists)) = &write.team {
            let team = tables.teams.contains_key(team).then_some(&Present);
            if !exists.holds(team.map(|team| team as &dyn Attributes)) {
                return Err(PatchProfileError::TeamNotFound);
            }
        }
        if let Some((release, held_by)) = &write.release {
            let held = holder(&tables, release);
            require(
                "free a display name",
                held_by,
                held.as_ref().map(|held| held as &dyn Attributes),
            )?;
            tables.names.remove(release);
        }
        if let Some((claim, _)) = write.claim {
            tables.names.insert(claim, user_id.clone());
        }
        tables.profiles.insert(
            user_id.clone(),
            StoredProfile {
                profile: write.profile.clone(),
                rev: write.rev,
            },
        );
        tables.emit(write.events, now);
        Ok(write.profile)
    }
}
