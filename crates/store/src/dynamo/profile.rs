//! Profiles on DynamoDB: a GetItem of `USER#<id>` / `PROFILE` (created by a conditional put on
//! the first call), and a patch as one transaction of 2-5 actions (docs/fan-app.md): the profile
//! (on the revision read), the public copies on `FAN#<id>` / `SHOW`, the new `NAME#` claimed
//! and the old one freed, the favourite `TEAM#` checked; and its `profile.updated` event.

use aws_sdk_dynamodb::operation::put_item::PutItemError;
use aws_sdk_dynamodb::types::AttributeValue;

use super::records::{
    NameHolder, NameRecord, PROFILE_VERSION, ProfileRecord, SCHEMA_VERSION, StoredProfile,
    read_record,
};
use super::transaction::{Transaction, check, delete, put, update_always};
use super::{Attempts, DynamoStore, Item, classify, key, number, s};
use crate::StoreError;
use crate::profile::{
    FindProfile, GetProfile, PatchProfile, PatchProfileError, Patching, conditions, patch_write,
};
use crate::schema::{
    ENTITY, NAME_SK, PROFILE_SK, SHOW_SK, TEAM_SK, fan_pk, name_pk, team_pk, user_pk,
};
use domain::ids::UserId;
use domain::profile::Profile;
use domain::profile::name::NameKey;
use domain::profile::patch::ProfilePatch;
use domain::timestamp::Timestamp;

fn profile_key(user_id: &UserId) -> Item {
    key(user_pk(user_id), PROFILE_SK)
}

fn name_key(name: &NameKey) -> Item {
    key(name_pk(name), NAME_SK)
}

/// The item of a stored profile.
fn profile_item(stored: &StoredProfile) -> Result<Item, StoreError> {
    let mut item: Item = serde_dynamo::to_item(ProfileRecord::from(stored))
        .map_err(|e| StoreError::internal_from("profile item", e))?;
    item.extend(profile_key(&stored.profile.id));
    item.insert(ENTITY.into(), s("profile"));
    Ok(item)
}

/// The item of a display name held by `user_id`.
fn name_item(name: &NameKey, user_id: &UserId) -> Result<Item, StoreError> {
    let mut item: Item = serde_dynamo::to_item(NameRecord::from(&NameHolder(user_id.clone())))
        .map_err(|e| StoreError::internal_from("name item", e))?;
    item.extend(name_key(name));
    item.insert(ENTITY.into(), s("name"));
    Ok(item)
}

fn text_or_null(text: Option<&str>) -> AttributeValue {
    text.map_or(AttributeValue::Null(true), s)
}

/// The update of the fan's public face with the public fields of `profile` (the rest of the item,
/// their locker room, is left as it is; the item is created if it is not there).
fn show_update(
    table: &str,
    profile: &Profile,
) -> Result<aws_sdk_dynamodb::types::TransactWriteItem, StoreError> {
    let name = profile.display_name.as_ref();
    update_always(
        table,
        key(fan_pk(&profile.id), SHOW_SK),
        "SET #entity = :entity, #sv = if_not_exists(#sv, :sv), nameKey = :key, \
         displayName = :name, avatarUrl = :avatar, favoriteTeamId = :team",
        &[("#entity", ENTITY), ("#sv", SCHEMA_VERSION)],
        vec![
            (":entity", s("show")),
            (":sv", number(PROFILE_VERSION)),
            (
                ":key",
                text_or_null(name.map(|n| n.key()).as_ref().map(NameKey::as_str)),
            ),
            (":name", text_or_null(name.map(|n| n.as_str()))),
            (
                ":avatar",
                text_or_null(profile.avatar_url.as_ref().map(|a| a.as_str())),
            ),
            (
                ":team",
                text_or_null(profile.favorite_team_id.as_ref().map(|t| t.as_str())),
            ),
        ],
    )
}

/// The actions of a patch's transaction, by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    Profile,
    Show,
    Claim,
    Release,
    Team,
}

impl DynamoStore {
    async fn read_profile(&self, user_id: &UserId) -> Result<Option<StoredProfile>, StoreError> {
        let output = self
            .client
            .get_item()
            .table_name(&self.table)
            .set_key(Some(profile_key(user_id)))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| classify("GetItem", e))?;
        output
            .item
            .map(|item| read_record::<ProfileRecord, StoredProfile>(item, "profile"))
            .transpose()
    }

    /// The profile of `stored`'s fan, written on condition that they have none.
    async fn create_profile(&self, stored: &StoredProfile) -> Result<bool, StoreError> {
        let condition = super::condition::render(&conditions::profile_as_read(None));
        let written = self
            .client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(profile_item(stored)?))
            .condition_expression(condition.expression)
            .set_expression_attribute_names(Some(condition.names.into_iter().collect()))
            .send()
            .await;
        match written {
            Ok(_) => Ok(true),
            Err(error)
                if matches!(
                    error.as_service_error(),
                    Some(PutItemError::ConditionalCheckFailedException(_))
                ) =>
            {
                Ok(false)
            }
            Err(error) => Err(classify("PutItem", error)),
        }
    }
}

impl GetProfile for DynamoStore {
    async fn get_profile(
        &self,
        user_id: &UserId,
        email: Option<&str>,
        now: Timestamp,
    ) -> Result<Profile, StoreError> {
        if let Some(stored) = self.read_profile(user_id).await? {
            return Ok(stored.profile);
        }
        let stored = StoredProfile {
            profile: Profile::new(user_id.clone(), email.map(str::to_owned), now),
            rev: 1,
        };
        if self.create_profile(&stored).await? {
            return Ok(stored.profile);
        }
        // A racing first call created it: answer theirs.
        self.read_profile(user_id)
            .await?
            .map(|stored| stored.profile)
            .ok_or_else(|| StoreError::internal("profile: created, then not found"))
    }
}

impl FindProfile for DynamoStore {
    async fn find_profile(&self, user_id: &UserId) -> Result<Option<Profile>, StoreError> {
        Ok(self
            .read_profile(user_id)
            .await?
            .map(|stored| stored.profile))
    }
}

impl PatchProfile for DynamoStore {
    async fn patch_profile(
        &self,
        user_id: &UserId,
        email: Option<&str>,
        patch: &ProfilePatch,
        now: Timestamp,
    ) -> Result<Profile, PatchProfileError> {
        let mut attempts = Attempts::new("patch profile");
        loop {
            let read = self.read_profile(user_id).await?;
            let read = read.map(|stored| (stored.profile, stored.rev));
            let write = match patch_write(user_id, email, read, patch, now) {
                Patching::Unchanged(current) => return Ok(current),
                Patching::Write(write) => write,
            };
            let table = self.table.as_str();
            let stored = StoredProfile {
                profile: write.profile,
                rev: write.rev,
            };
            let mut transaction = Transaction::new().with(
                Action::Profile,
                put(table, profile_item(&stored)?, &write.as_read)?,
            );
            if write.show {
                transaction.push(Action::Show, show_update(table, &stored.profile)?);
            }
            if let Some((claim, claimable)) = &write.claim {
                transaction.push(
                    Action::Claim,
                    put(table, name_item(claim, user_id)?, claimable)?,
                );
            }
            if let Some((release, held_by)) = &write.release {
                transaction.push(Action::Release, delete(table, name_key(release), held_by)?);
            }
            if let Some((team, exists)) = &write.team {
                transaction.push(
                    Action::Team,
                    check(table, key(team_pk(team), TEAM_SK), exists)?,
                );
            }
            let Some(reasons) = self.run(transaction.emit(write.events, now)).await? else {
                return Ok(stored.profile);
            };
            // The profile changed meanwhile (or another transaction held an item): decided again
            // on what it is now. Else a refusal of its own.
            if !reasons.failed(Action::Profile) && !reasons.conflicted() {
                if reasons.failed(Action::Claim) {
                    return Err(PatchProfileError::NameTaken);
                }
                if reasons.failed(Action::Team) {
                    return Err(PatchProfileError::TeamNotFound);
                }
                return Err(StoreError::internal(
                    "patch profile: the old name was not the fan's, as the profile said",
                )
                .into());
            }
            attempts.after(reasons.all()).await?;
        }
    }
}
