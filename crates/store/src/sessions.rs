//! What was ended of each fan's sessions (`domain::sessions`, docs/sessions.md): one small item
//! per fan, `SESSIONS#<userId>` / `REVOKED`, read by every signed-in request (one eventually
//! consistent `GetItem`) and written by a logout, an operator, the identity provider's events and
//! an account's deletion (a read, then a `PutItem` on the revision read: two writers never
//! overwrite each other). Both stores' implementations side by side, running the same condition.

use std::future::Future;

use crate::StoreError;
use crate::condition::Condition;
use domain::ids::UserId;
use domain::sessions::Revocations;

/// The key prefix of the items (every signed-in function's policy reads `SESSIONS#*`).
pub const SESSIONS_PREFIX: &str = "SESSIONS#";
pub const SESSIONS_SK: &str = "REVOKED";
/// The attribute counting the item's writes.
pub const SESSIONS_REVISION: &str = "revision";

pub fn sessions_pk(user_id: &UserId) -> String {
    format!("{SESSIONS_PREFIX}{user_id}")
}

/// The write's condition, both stores': the item is still at the revision read (0: none yet).
pub(crate) fn as_read(revision: u64) -> Condition {
    Condition::version_as_read(SESSIONS_REVISION, revision)
}

/// Writes tried before a contended revision is a 503 (the client retries).
const ATTEMPTS: u32 = 8;

/// The fan's revocations (none: nothing ended), as every signed-in request reads them:
/// eventually consistent on DynamoDB (a revocation is seen within about a second).
pub trait GetRevocations: Send + Sync {
    fn revocations(
        &self,
        user_id: &UserId,
    ) -> impl Future<Output = Result<Revocations, StoreError>> + Send;
}

/// Changes the fan's revocations by `change` (of what is stored, read strongly), on the
/// revision read, again from a fresh read when another writer came first; returns what was
/// stored.
pub trait ReviseRevocations: Send + Sync {
    fn revise_revocations(
        &self,
        user_id: &UserId,
        change: impl Fn(Revocations) -> Revocations + Send + Sync,
    ) -> impl Future<Output = Result<Revocations, StoreError>> + Send;
}

/// Every operation on sessions.
pub trait SessionStore: GetRevocations + ReviseRevocations {}
impl<S: GetRevocations + ReviseRevocations> SessionStore for S {}

pub(crate) mod dynamo {
    use aws_sdk_dynamodb::types::ReturnValuesOnConditionCheckFailure;
    use serde::{Deserialize, Serialize};

    use super::{ATTEMPTS, GetRevocations, ReviseRevocations, SESSIONS_SK, as_read, sessions_pk};
    use crate::StoreError;
    use crate::dynamo::condition::{put_under, written};
    use crate::dynamo::records::{read_record, readable};
    use crate::dynamo::{DynamoStore, Item, key, s};
    use crate::schema::{ENTITY, PK, SK};
    use domain::ids::UserId;
    use domain::sessions::Revocations;

    /// The version of the item this release writes, and the newest it reads.
    const SESSIONS_VERSION: u32 = 1;

    /// The item's attributes besides its keys and `entity`: the revocations as JSON text.
    #[derive(Debug, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct SessionsRecord {
        schema_version: u32,
        revision: u64,
        revocations: String,
    }

    impl TryFrom<SessionsRecord> for (Revocations, u64) {
        type Error = StoreError;

        fn try_from(record: SessionsRecord) -> Result<Self, StoreError> {
            readable("sessions", record.schema_version, SESSIONS_VERSION)?;
            let revocations = serde_json::from_str(&record.revocations)
                .map_err(|e| StoreError::internal_from("sessions item", e))?;
            Ok((revocations, record.revision))
        }
    }

    /// The item of `revocations` at `revision`.
    pub(crate) fn sessions_item(
        user_id: &UserId,
        revocations: &Revocations,
        revision: u64,
    ) -> Result<Item, StoreError> {
        let text = serde_json::to_string(revocations)
            .map_err(|e| StoreError::internal_from("sessions", e))?;
        let mut item: Item = serde_dynamo::to_item(SessionsRecord {
            schema_version: SESSIONS_VERSION,
            revision,
            revocations: text,
        })
        .map_err(|e| StoreError::internal_from("sessions item", e))?;
        item.insert(PK.into(), s(sessions_pk(user_id)));
        item.insert(SK.into(), s(SESSIONS_SK));
        item.insert(ENTITY.into(), s("sessions"));
        Ok(item)
    }

    impl DynamoStore {
        pub(crate) async fn read_revocations(
            &self,
            user_id: &UserId,
            consistent: bool,
        ) -> Result<(Revocations, u64), StoreError> {
            let item = self
                .get_item(key(sessions_pk(user_id), SESSIONS_SK), consistent)
                .await?;
            item.map_or(Ok((Revocations::default(), 0)), |item| {
                read_record::<SessionsRecord, _>(item, "sessions")
            })
        }
    }

    impl GetRevocations for DynamoStore {
        async fn revocations(&self, user_id: &UserId) -> Result<Revocations, StoreError> {
            Ok(self.read_revocations(user_id, false).await?.0)
        }
    }

    impl ReviseRevocations for DynamoStore {
        async fn revise_revocations(
            &self,
            user_id: &UserId,
            change: impl Fn(Revocations) -> Revocations + Send + Sync,
        ) -> Result<Revocations, StoreError> {
            for _ in 0..ATTEMPTS {
                let (current, revision) = self.read_revocations(user_id, true).await?;
                let revised = change(current);
                let item = sessions_item(user_id, &revised, revision + 1)?;
                let put = self
                    .client
                    .put_item()
                    .table_name(&self.table)
                    .set_item(Some(item))
                    .return_values_on_condition_check_failure(
                        ReturnValuesOnConditionCheckFailure::None,
                    );
                let result = put_under(put, &as_read(revision)).send().await;
                if written("PutItem", result)?.is_some() {
                    return Ok(revised);
                }
            }
            Err(StoreError::unavailable("sessions: still contended"))
        }
    }
}

pub(crate) mod memory {
    use super::{GetRevocations, ReviseRevocations, SESSIONS_REVISION, as_read};
    use crate::StoreError;
    use crate::condition::{Attributes, Value};
    use crate::memory::MemoryStore;
    use domain::ids::UserId;
    use domain::sessions::Revocations;
    use std::collections::HashMap;

    /// Each fan's revocations and their revision.
    #[derive(Default)]
    pub(crate) struct SessionsTable(HashMap<UserId, (Revocations, u64)>);

    impl SessionsTable {
        /// Every token of `user_id` refused from now on (its account deleted).
        pub(crate) fn refuse_all(&mut self, user_id: &UserId) {
            let (mut revocations, revision) = self.0.get(user_id).cloned().unwrap_or_default();
            revocations.deleted = true;
            self.0.insert(user_id.clone(), (revocations, revision + 1));
        }
    }

    struct Revision(u64);

    impl Attributes for Revision {
        fn attribute(&self, path: &[&str]) -> Option<Value> {
            (path == [SESSIONS_REVISION]).then(|| self.0.into())
        }
    }

    impl GetRevocations for MemoryStore {
        async fn revocations(&self, user_id: &UserId) -> Result<Revocations, StoreError> {
            Ok(self
                .read()
                .table::<SessionsTable>()
                .and_then(|table| table.0.get(user_id))
                .map(|(revocations, _)| revocations.clone())
                .unwrap_or_default())
        }
    }

    impl ReviseRevocations for MemoryStore {
        async fn revise_revocations(
            &self,
            user_id: &UserId,
            change: impl Fn(Revocations) -> Revocations + Send + Sync,
        ) -> Result<Revocations, StoreError> {
            let mut tables = self.write();
            let table = tables.table_mut::<SessionsTable>();
            let (current, revision) = table.0.get(user_id).cloned().unwrap_or_default();
            let stored = (revision > 0).then_some(Revision(revision));
            crate::condition::require(
                "sessions",
                &as_read(revision),
                stored.as_ref().map(|r| r as &dyn Attributes),
            )?;
            let revised = change(current);
            table
                .0
                .insert(user_id.clone(), (revised.clone(), revision + 1));
            Ok(revised)
        }
    }
}
