//! The app's configuration (`domain::app_config`): one item, `CONFIG#APP` / `CONFIG`, read by every
//! function at most once per `CONFIG_MAX_AGE_SECONDS` per instance and written by an operator
//! (`app-config`). A small aggregate's store is one file: its key, its record, its one
//! condition and both stores' implementations side by side (README's checklist), so that a
//! reader sees both run the same condition; a larger one is a directory of the same parts.

use std::future::Future;

use crate::StoreError;
use crate::condition::Condition;
use domain::app_config::AppConfig;
use domain::timestamp::Timestamp;

/// The item's partition and sort key.
pub const CONFIG_PK: &str = "CONFIG#APP";
pub const CONFIG_SK: &str = "CONFIG";
/// The key prefix of configuration items (the functions' policies read `CONFIG#*`).
pub const CONFIG_PREFIX: &str = "CONFIG#";
/// The attribute counting the item's writes.
pub const CONFIG_REVISION: &str = "revision";

/// The configuration as stored: what the operator set, its revision (1 for the first write,
/// each write one more) and when it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredAppConfig {
    pub config: AppConfig,
    pub revision: u64,
    pub updated_at: Timestamp,
}

impl StoredAppConfig {
    /// What a write of `config` from revision `expected` stores: the next revision, both stores'.
    fn written(config: &AppConfig, expected: u64, now: Timestamp) -> Self {
        Self {
            config: config.clone(),
            revision: expected + 1,
            updated_at: now,
        }
    }
}

/// Why a write was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PutAppConfigError {
    /// Another operator wrote since `expected` was read: read again, then write.
    #[error("the configuration is at revision {current}, not the one read")]
    Conflict { current: u64 },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The write's one condition, run by both stores: the item is still at the revision the
/// operator read (0: there is none yet), so that two operators never overwrite each other.
fn as_read(expected: u64) -> Condition {
    Condition::version_as_read(CONFIG_REVISION, expected)
}

/// The configuration, or `None` when none was ever set (the app then runs on the defaults:
/// no minimum, no flags, no maintenance).
pub trait GetAppConfig: Send + Sync {
    fn app_config(
        &self,
    ) -> impl Future<Output = Result<Option<StoredAppConfig>, StoreError>> + Send;
}

/// Replaces the configuration if it is still at revision `expected`; returns what was stored.
pub trait PutAppConfig: Send + Sync {
    fn put_app_config(
        &self,
        config: &AppConfig,
        expected: u64,
        now: Timestamp,
    ) -> impl Future<Output = Result<StoredAppConfig, PutAppConfigError>> + Send;
}

/// Every operation on the configuration.
pub trait AppConfigStore: GetAppConfig + PutAppConfig {}
impl<S: GetAppConfig + PutAppConfig> AppConfigStore for S {}

/// The configuration on DynamoDB: one `GetItem` (eventually consistent: an instance reads it at
/// most every few seconds, and a second's lag is within that) and one conditional `PutItem`.
mod dynamo {
    use serde::{Deserialize, Serialize};

    use super::{
        CONFIG_PK, CONFIG_SK, GetAppConfig, PutAppConfig, PutAppConfigError, StoredAppConfig,
        as_read,
    };
    use crate::StoreError;
    use crate::dynamo::condition::{render, written};
    use crate::dynamo::records::{read_record, readable};
    use crate::dynamo::{DynamoStore, Item, classify, key, s};
    use crate::schema::{ENTITY, PK, SK};
    use domain::app_config::AppConfig;
    use domain::timestamp::Timestamp;

    /// The version of the configuration item this release writes, and the newest it reads.
    const CONFIG_VERSION: u32 = 1;

    /// The item's attributes besides its keys and `entity`: the configuration as JSON text, so that
    /// a field the operator's tool adds later is one more key in it, not a new attribute.
    #[derive(Debug, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct ConfigRecord {
        schema_version: u32,
        revision: u64,
        updated_at: Timestamp,
        config: String,
    }

    impl TryFrom<ConfigRecord> for StoredAppConfig {
        type Error = StoreError;

        fn try_from(record: ConfigRecord) -> Result<Self, StoreError> {
            readable("configuration", record.schema_version, CONFIG_VERSION)?;
            let config = AppConfig::parse(&record.config)
                .map_err(|e| StoreError::internal_from("configuration item", e))?;
            Ok(Self {
                config,
                revision: record.revision,
                updated_at: record.updated_at,
            })
        }
    }

    impl GetAppConfig for DynamoStore {
        async fn app_config(&self) -> Result<Option<StoredAppConfig>, StoreError> {
            let output = self
                .client
                .get_item()
                .table_name(&self.table)
                .set_key(Some(key(CONFIG_PK.to_owned(), CONFIG_SK)))
                .send()
                .await
                .map_err(|e| classify("GetItem", e))?;
            output
                .item
                .map(|item| read_record::<ConfigRecord, _>(item, "configuration"))
                .transpose()
        }
    }

    impl PutAppConfig for DynamoStore {
        async fn put_app_config(
            &self,
            config: &AppConfig,
            expected: u64,
            now: Timestamp,
        ) -> Result<StoredAppConfig, PutAppConfigError> {
            let stored = StoredAppConfig::written(config, expected, now);
            let text = serde_json::to_string(config)
                .map_err(|e| StoreError::internal_from("configuration", e))?;
            let mut item: Item = serde_dynamo::to_item(ConfigRecord {
                schema_version: CONFIG_VERSION,
                revision: stored.revision,
                updated_at: now,
                config: text,
            })
            .map_err(|e| StoreError::internal_from("configuration item", e))?;
            item.insert(PK.into(), s(CONFIG_PK));
            item.insert(SK.into(), s(CONFIG_SK));
            item.insert(ENTITY.into(), s("appConfig"));
            let condition = render(&as_read(expected));
            let result = self
                .client
                .put_item()
                .table_name(&self.table)
                .set_item(Some(item))
                .condition_expression(condition.expression)
                .set_expression_attribute_names(Some(condition.names.into_iter().collect()))
                // None for `attribute_not_exists` (the first write): DynamoDB refuses an empty map.
                .set_expression_attribute_values(
                    (!condition.values.is_empty()).then(|| condition.values.into_iter().collect()),
                )
                .return_values_on_condition_check_failure(
                    aws_sdk_dynamodb::types::ReturnValuesOnConditionCheckFailure::AllOld,
                )
                .send()
                .await;
            match written("PutItem", result) {
                Ok(Some(_)) => Ok(stored),
                Ok(None) => {
                    let current = self.app_config().await?.map_or(0, |c| c.revision);
                    Err(PutAppConfigError::Conflict { current })
                }
                Err(error) => Err(error.into()),
            }
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn a_record_of_a_newer_release_is_refused() {
            let record = ConfigRecord {
                schema_version: CONFIG_VERSION + 1,
                revision: 1,
                updated_at: Timestamp::parse("2026-01-01T00:00:00Z").unwrap(),
                config: "{}".into(),
            };
            assert!(StoredAppConfig::try_from(record).is_err());
        }

        #[test]
        fn the_revision_is_the_attribute_the_condition_names() {
            let item = serde_dynamo::to_item::<_, Item>(ConfigRecord {
                schema_version: CONFIG_VERSION,
                revision: 7,
                updated_at: Timestamp::parse("2026-01-01T00:00:00Z").unwrap(),
                config: "{}".into(),
            })
            .unwrap();
            assert_eq!(item[super::super::CONFIG_REVISION].as_n().unwrap(), "7");
        }
    }
}

/// The configuration in memory: the one item, in a table of its own in the store's type map
/// (nothing to add to the store's tables), under the same condition as on DynamoDB.
mod memory {
    use super::{
        CONFIG_REVISION, GetAppConfig, PutAppConfig, PutAppConfigError, StoredAppConfig, as_read,
    };
    use crate::StoreError;
    use crate::condition::{Attributes, Value};
    use crate::memory::MemoryStore;
    use domain::app_config::AppConfig;
    use domain::timestamp::Timestamp;

    /// The item, when one was written.
    #[derive(Default)]
    struct ConfigTable(Option<StoredAppConfig>);

    impl Attributes for StoredAppConfig {
        fn attribute(&self, path: &[&str]) -> Option<Value> {
            (path == [CONFIG_REVISION]).then(|| self.revision.into())
        }
    }

    impl GetAppConfig for MemoryStore {
        async fn app_config(&self) -> Result<Option<StoredAppConfig>, StoreError> {
            Ok(self.read().table::<ConfigTable>().and_then(|t| t.0.clone()))
        }
    }

    impl PutAppConfig for MemoryStore {
        async fn put_app_config(
            &self,
            config: &AppConfig,
            expected: u64,
            now: Timestamp,
        ) -> Result<StoredAppConfig, PutAppConfigError> {
            let mut tables = self.write();
            let table = tables.table_mut::<ConfigTable>();
            let current = table.0.as_ref();
            if !as_read(expected).holds(current.map(|c| c as &dyn Attributes)) {
                return Err(PutAppConfigError::Conflict {
                    current: current.map_or(0, |c| c.revision),
                });
            }
            let stored = StoredAppConfig::written(config, expected, now);
            table.0 = Some(stored.clone());
            Ok(stored)
        }
    }
}
