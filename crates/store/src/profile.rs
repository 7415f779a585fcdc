//! The operations on a fan's profile (`GET` / `PATCH /api/me`), and the conditions its writes
//! put on the items they touch, declared once for both stores.

use std::future::Future;

use crate::StoreError;
use crate::condition::Condition;
use crate::schema::{NAME_USER_ID, PK, PROFILE_REVISION};
use domain::ids::UserId;
use domain::profile::Profile;
use domain::profile::patch::ProfilePatch;
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
/// one freed; a favourite team on condition that it exists. Returns the profile as patched.
pub trait PatchProfile: Send + Sync {
    fn patch_profile(
        &self,
        user_id: &UserId,
        email: Option<&str>,
        patch: &ProfilePatch,
        now: Timestamp,
    ) -> impl Future<Output = Result<Profile, PatchProfileError>> + Send;
}

/// Every profile operation.
pub trait ProfileStore: GetProfile + PatchProfile {}
impl<S: GetProfile + PatchProfile> ProfileStore for S {}

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
