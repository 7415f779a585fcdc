//! The operations on a fan's profile (`GET` / `PATCH /api/me`), and the conditions its writes
//! put on the items they touch, declared once for both stores.

use std::future::Future;

use crate::StoreError;
use crate::condition::Condition;
use crate::schema::{NAME_USER_ID, PK, PROFILE_REVISION};
use domain::events::NewEvent;
use domain::ids::{TeamId, UserId};
use domain::profile::Profile;
use domain::profile::name::{NameChange, NameKey, name_change};
use domain::profile::patch::{Patch, ProfilePatch};
use domain::timestamp::Timestamp;

/// The fan's profile; their first call creates it from their token (`email`), the rest null. A
/// racing first call reads the profile the other created.
pub trait GetProfile: Send + Sync {
    fn get_profile(
        &self,
        user_id: &UserId,
        email: Option<&str>,
        now: Timestamp,
    ) -> impl Future<Output = Result<Profile, StoreError>> + Send;
}

/// Why a patch was not applied (nothing was written).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatchProfileError {
    /// Another fan holds the display name (in any case).
    #[error("the display name is another fan's")]
    NameTaken,
    /// `favoriteTeamId` names no team of the catalogue.
    #[error("no team has the favourite team's id")]
    TeamNotFound,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Applies `patch` to the fan's profile (created first, as [`GetProfile`] does, if they have
/// none) in one transaction: the profile on condition that it is as read; its public copies on
/// the fan's public face; a new name claimed on condition that nobody else holds it and the old
/// one freed; a favourite team on condition that it exists; `profile.updated` when a field
/// changed. Returns the profile as patched.
pub trait PatchProfile: Send + Sync {
    fn patch_profile(
        &self,
        user_id: &UserId,
        email: Option<&str>,
        patch: &ProfilePatch,
        now: Timestamp,
    ) -> impl Future<Output = Result<Profile, PatchProfileError>> + Send;
}

/// The fan's profile as stored, `None` while they have none: a read that never creates one
/// (the export reads it without writing).
pub trait FindProfile: Send + Sync {
    fn find_profile(
        &self,
        user_id: &UserId,
    ) -> impl Future<Output = Result<Option<Profile>, StoreError>> + Send;
}

/// Every profile operation.
pub trait ProfileStore: GetProfile + PatchProfile + FindProfile {}
impl<S: GetProfile + PatchProfile + FindProfile> ProfileStore for S {}

/// What a patch does, decided once for both stores on the profile as read.
#[derive(Debug, Clone)]
pub enum Patching {
    /// Nothing to write: the stored profile, as read, answers.
    Unchanged(Profile),
    Write(Box<PatchWrite>),
}

/// Every write of a patch, each with its condition.
#[derive(Debug, Clone)]
pub struct PatchWrite {
    /// The profile as patched, at revision `rev`, on [`conditions::profile_as_read`].
    pub profile: Profile,
    pub rev: u64,
    pub as_read: Condition,
    /// Whether its public copies change.
    pub show: bool,
    /// The display name claimed, on [`conditions::name_claimable`].
    pub claim: Option<(NameKey, Condition)>,
    /// The fan's old display name freed, on [`conditions::name_held_by`].
    pub release: Option<(NameKey, Condition)>,
    /// A new favourite team, checked on [`conditions::team_exists`].
    pub team: Option<(TeamId, Condition)>,
    /// The patch's events ([`Profile::update_events`]), written with it.
    pub events: Vec<NewEvent>,
}

/// What `patch` at `now` does to `user_id`'s profile as read with its revision (`None`: they
/// have none, and it is made as [`GetProfile`] makes it, from `email`).
pub fn patch_write(
    user_id: &UserId,
    email: Option<&str>,
    read: Option<(Profile, u64)>,
    patch: &ProfilePatch,
    now: Timestamp,
) -> Patching {
    let (current, rev) = match read {
        Some((profile, rev)) => (profile, Some(rev)),
        None => (
            Profile::new(user_id.clone(), email.map(str::to_owned), now),
            None,
        ),
    };
    let next = current.patched(patch.clone(), now);
    if next == current && rev.is_some() {
        return Patching::Unchanged(current);
    }
    let (claim, release) = match name_change(
        current.display_name.as_ref(),
        patch.display_name.as_change(),
    ) {
        NameChange::Unchanged => (None, None),
        NameChange::Claim { claim, release } => (Some(claim), release),
        NameChange::Release(old) => (None, Some(old)),
    };
    let team = match &patch.favorite_team_id {
        Patch::Set(team) if current.favorite_team_id.as_ref() != Some(team) => {
            Some((team.clone(), conditions::team_exists()))
        }
        _ => None,
    };
    Patching::Write(Box::new(PatchWrite {
        events: current.update_events(&next),
        show: next != current,
        profile: next,
        rev: rev.map_or(1, |rev| rev + 1),
        as_read: conditions::profile_as_read(rev),
        claim: claim.map(|name| (name, conditions::name_claimable(user_id))),
        release: release.map(|name| (name, conditions::name_held_by(user_id))),
        team,
    }))
}

/// The conditions of a profile's writes.
pub mod conditions {
    use super::*;

    /// The profile is as it was read: of revision `rev`, or absent (`None`). Two patches of one
    /// fan racing: the second is decided again on the first's result.
    pub fn profile_as_read(rev: Option<u64>) -> Condition {
        match rev {
            Some(rev) => Condition::eq(PROFILE_REVISION, rev),
            None => Condition::new_item(),
        }
    }

    /// A display name may be claimed by `user_id` when nobody holds it, or they do (a change of
    /// case): two fans racing for one name race for this one item, and exactly one passes.
    pub fn name_claimable(user_id: &UserId) -> Condition {
        Condition::new_item().or(Condition::eq(NAME_USER_ID, user_id.as_str()))
    }

    /// A display name is freed only by the fan who holds it.
    pub fn name_held_by(user_id: &UserId) -> Condition {
        Condition::eq(NAME_USER_ID, user_id.as_str())
    }

    /// The team exists (a favourite team removed meanwhile is refused, not left dangling).
    pub fn team_exists() -> Condition {
        Condition::exists(PK)
    }
}
