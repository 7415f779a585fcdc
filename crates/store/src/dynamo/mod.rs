//! [`DynamoStore`]: the storage traits on the app's DynamoDB table, one module per aggregate.

mod account;
mod cache;
mod card_orders;
mod cash;
mod catalog;
pub(crate) mod condition;
mod events;
mod fan_view;
mod leaderboards;
mod line_cache;
mod links;
mod locker_room;
mod packs;
mod products;
mod profile;
mod purchases;
mod quests;
pub(crate) mod queue;
mod queue_admission;
mod queue_excluded;
mod queue_keeper;
mod ratelimit;
pub(crate) mod records;
mod topups;
mod transaction;
mod wallets;
mod webhooks;

use std::collections::HashMap;

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::types::AttributeValue;
use aws_smithy_runtime_api::client::orchestrator::HttpResponse;

use crate::StoreError;
use crate::metrics::{self, Metric};

pub use cache::{SOLD_OUT_MEMORY_SECONDS, SOLD_OUT_RECHECK_SECONDS};
pub use events::{EVENT_ENTITY, event_from_item};
pub use records::{document_from_item, pack_item};

pub(crate) type Item = HashMap<String, AttributeValue>;

/// The app's table, through a client built once per cold start.
#[derive(Clone, Debug)]
pub struct DynamoStore {
    pub(crate) client: Client,
    pub(crate) table: String,
    /// Shared by the clones of one store: what a warm instance keeps of packs.
    cache: std::sync::Arc<cache::PackCache>,
    /// Shared likewise: which packs' lines this instance knows to have finished.
    lines: std::sync::Arc<line_cache::LineCache>,
    /// What each rarity adds to a collector score (read once per cold start).
    weights: std::sync::Arc<domain::leaderboards::ScoreWeights>,
}

pub(crate) fn s(value: impl Into<String>) -> AttributeValue {
    AttributeValue::S(value.into())
}

/// Sorts an SDK failure into "unavailable" (throttling, a transaction on the item, timeouts,
/// unreachable, 5xx: a 503) and anything else (a 500), keeping the full detail for the logs.
/// Throttling (after the SDK's retries) counts `DynamoDbThrottled`.
pub(crate) fn classify<E>(operation: &str, error: SdkError<E, HttpResponse>) -> StoreError
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
{
    let unavailable = match &error {
        SdkError::TimeoutError(_) | SdkError::DispatchFailure(_) | SdkError::ResponseError(_) => {
            true
        }
        SdkError::ServiceError(service) => {
            let code = service.err().code();
            if matches!(
                code,
                Some(
                    "ThrottlingException"
                        | "ProvisionedThroughputExceededException"
                        | "RequestLimitExceeded"
                )
            ) {
                metrics::count(Metric::DynamoDbThrottled);
                true
            } else {
                matches!(
                    code,
                    Some(
                        "TransactionConflictException"
                            | "InternalServerError"
                            | "ServiceUnavailable"
                    )
                ) || service.raw().status().is_server_error()
            }
        }
        _ => false,
    };
    // The error's chain (service error, its code and message) is walked by `detail()`.
    let context = operation.to_owned();
    let source: Option<crate::ErrorSource> = Some(std::sync::Arc::new(error));
    if unavailable {
        StoreError::Unavailable { context, source }
    } else {
        StoreError::Internal { context, source }
    }
}

impl DynamoStore {
    pub fn new(client: Client, table: impl Into<String>) -> Self {
        Self {
            client,
            table: table.into(),
            cache: std::sync::Arc::default(),
            lines: std::sync::Arc::default(),
            weights: std::sync::Arc::default(),
        }
    }

    /// The store, its openings scoring with `weights`.
    pub fn with_score_weights(mut self, weights: domain::leaderboards::ScoreWeights) -> Self {
        self.weights = std::sync::Arc::new(weights);
        self
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    pub fn table(&self) -> &str {
        &self.table
    }
}

pub(crate) fn number(value: impl ToString) -> AttributeValue {
    AttributeValue::N(value.to_string())
}

/// The key of an item.
pub(crate) fn key(pk: String, sk: &str) -> Item {
    HashMap::from([
        (crate::schema::PK.to_owned(), s(pk)),
        (crate::schema::SK.to_owned(), s(sk)),
    ])
}

/// Whether `item` has the key `key`.
fn has_key(item: &Item, key: &Item) -> bool {
    key.iter()
        .all(|(name, value)| item.get(name) == Some(value))
}

impl DynamoStore {
    /// The items of `keys` that exist, in the order of `keys`, in one `BatchGetItem`
    /// (`consistent`: strongly consistent reads). Keys left unprocessed (throttling) are a 503.
    pub(crate) async fn batch_get<const N: usize>(
        &self,
        keys: [Item; N],
        consistent: bool,
    ) -> Result<[Option<Item>; N], StoreError> {
        let found = self.batch_get_slice(&keys, consistent).await?;
        Ok(found
            .try_into()
            .unwrap_or_else(|_| unreachable!("one answer per key")))
    }

    /// The items of `keys` (at most 100) that exist, in the order of `keys`.
    pub(crate) async fn batch_get_slice(
        &self,
        keys: &[Item],
        consistent: bool,
    ) -> Result<Vec<Option<Item>>, StoreError> {
        let request = aws_sdk_dynamodb::types::KeysAndAttributes::builder()
            .set_keys(Some(keys.to_vec()))
            .consistent_read(consistent)
            .build()
            .map_err(|e| StoreError::internal_from("BatchGetItem", e))?;
        let output = self
            .client
            .batch_get_item()
            .request_items(&self.table, request)
            .send()
            .await
            .map_err(|e| classify("BatchGetItem", e))?;
        if output
            .unprocessed_keys
            .as_ref()
            .is_some_and(|keys| !keys.is_empty())
        {
            metrics::count(Metric::DynamoDbThrottled);
            return Err(StoreError::unavailable(
                "BatchGetItem: keys left unprocessed (throttled)",
            ));
        }
        let mut found = output
            .responses
            .and_then(|mut tables| tables.remove(&self.table))
            .unwrap_or_default();
        Ok(keys
            .iter()
            .map(|key| {
                let at = found.iter().position(|item| has_key(item, key))?;
                Some(found.swap_remove(at))
            })
            .collect())
    }
}

/// How one action of a cancelled transaction fared.
#[derive(Debug, Clone, Default)]
pub(crate) struct Cancellation {
    code: Option<String>,
    /// The item as it was, when the action's condition failed and asked for it (`ALL_OLD`).
    pub(crate) item: Option<Item>,
}

impl Cancellation {
    /// The action's condition did not hold.
    pub(crate) fn condition_failed(&self) -> bool {
        self.code.as_deref() == Some("ConditionalCheckFailed")
    }

    /// Another transaction was writing the same item at once (real DynamoDB; retry shortly).
    pub(crate) fn conflicted(&self) -> bool {
        self.code.as_deref() == Some("TransactionConflict")
    }

    /// The table or an index had no capacity for the action.
    fn throttled(&self) -> bool {
        matches!(
            self.code.as_deref(),
            Some("ThrottlingError" | "ProvisionedThroughputExceeded" | "RequestLimitExceeded")
        )
    }

    /// What a caller decides on: the action passed (`None`), its condition failed, or it met a
    /// conflict.
    fn decidable(&self) -> bool {
        matches!(self.code.as_deref(), None | Some("None"))
            || self.condition_failed()
            || self.conflicted()
    }
}

/// Transactions (or conditional writes) tried per request before answering 503: a race lost on
/// fresh state is decided again at once; a transaction conflict (another transaction on the same
/// item) waits a little first.
pub(crate) const MAX_ATTEMPTS: u32 = 8;

/// Transactions a change may lose only on its events' sequences before answering 503: each such
/// loss is another change of the same subject written meanwhile (progress, not a livelock), so
/// a fan's concurrent changes (20 credits at once, say) all get through, one after another.
pub(crate) const MAX_SEQUENCE_ATTEMPTS: u32 = 32;

/// The attempts of one decide/write/retry loop. Every conditional write that may be tried again
/// counts its tries here, so that a lost race and a conflict are handled alike everywhere: the
/// decision is taken again on fresh state, after a jittered back-off when another transaction
/// held the item, and a write still contended after [`MAX_ATTEMPTS`] answers 503.
pub(crate) struct Attempts {
    operation: &'static str,
    made: u32,
    max: u32,
}

impl Attempts {
    pub(crate) fn new(operation: &'static str) -> Self {
        Self::up_to(operation, MAX_ATTEMPTS)
    }

    /// Attempts of `operation`, at most `max`.
    pub(crate) fn up_to(operation: &'static str, max: u32) -> Self {
        Self {
            operation,
            made: 0,
            max,
        }
    }

    /// The error of a write still contended: the client is told to retry (its key makes it safe).
    pub(crate) fn exhausted(&self) -> StoreError {
        StoreError::unavailable(format!(
            "{}: still contended after {} attempts",
            self.operation, self.made
        ))
    }

    /// Another attempt, at once (a race lost on fresh state).
    pub(crate) fn again(&mut self) -> Result<(), StoreError> {
        self.made += 1;
        if self.made >= self.max {
            return Err(self.exhausted());
        }
        Ok(())
    }

    /// Another attempt after a short, growing, jittered pause (a transaction conflict). Every
    /// conflict-retry loop comes here, so each retried conflict counts `TransactionConflicts`
    /// here (one given up on is a 503 instead).
    pub(crate) async fn after_conflict(&mut self) -> Result<(), StoreError> {
        let mut jitter = [0u8; 1];
        getrandom::fill(&mut jitter).expect("the system random source works");
        let millis = 5 * u64::from(self.made + 1) + u64::from(jitter[0] % 16);
        tokio::time::sleep(std::time::Duration::from_millis(millis)).await;
        self.again()?;
        metrics::count(Metric::TransactionConflicts);
        Ok(())
    }

    /// Another attempt after a cancelled transaction: after a pause when it conflicted, at once
    /// when its conditions failed.
    pub(crate) async fn after(&mut self, reasons: &[Cancellation]) -> Result<(), StoreError> {
        if reasons.iter().any(Cancellation::conflicted) {
            self.after_conflict().await
        } else {
            self.again()
        }
    }
}

impl DynamoStore {
    /// Runs `actions` as one transaction: `Ok(None)` when applied, `Ok(Some(reasons))` (one per
    /// action, in order) when cancelled by conditions or conflicts only, an error otherwise
    /// (`Unavailable` when throttled).
    pub(crate) async fn transact(
        &self,
        actions: Vec<aws_sdk_dynamodb::types::TransactWriteItem>,
    ) -> Result<Option<Vec<Cancellation>>, StoreError> {
        use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
        let error = match self
            .client
            .transact_write_items()
            .set_transact_items(Some(actions))
            .send()
            .await
        {
            Ok(_) => return Ok(None),
            Err(error) => error,
        };
        let Some(TransactWriteItemsError::TransactionCanceledException(cancelled)) =
            error.as_service_error()
        else {
            return Err(classify("TransactWriteItems", error));
        };
        let reasons: Vec<Cancellation> = cancelled
            .cancellation_reasons()
            .iter()
            .map(|reason| Cancellation {
                code: reason.code().map(str::to_owned),
                item: reason.item().cloned(),
            })
            .collect();
        let codes = || {
            let codes: Vec<&str> = reasons.iter().filter_map(|r| r.code.as_deref()).collect();
            format!("TransactWriteItems: cancelled [{}]", codes.join(", "))
        };
        // Throttled: trying again at once would only add to the load that throttled it; the
        // client is told to retry (503, `Retry-After`), which its Idempotency-Key makes safe.
        if reasons.iter().any(Cancellation::throttled) {
            metrics::count(Metric::DynamoDbThrottled);
            return Err(StoreError::unavailable(codes()));
        }
        // Anything else (a validation error, an item collection full) would fail again.
        if !reasons.iter().all(Cancellation::decidable) {
            return Err(StoreError::internal(codes()));
        }
        Ok(Some(reasons))
    }
}

impl DynamoStore {
    /// Every item of `pk` whose sort key begins with `prefix`, strongly consistent or not.
    pub(crate) async fn query_prefix(
        &self,
        pk: String,
        prefix: &str,
        consistent: bool,
    ) -> Result<Vec<Item>, StoreError> {
        let query = self
            .client
            .query()
            .table_name(&self.table)
            .key_condition_expression("#pk = :pk AND begins_with(#sk, :prefix)")
            .expression_attribute_names("#pk", crate::schema::PK)
            .expression_attribute_names("#sk", crate::schema::SK)
            .expression_attribute_values(":pk", s(pk))
            .expression_attribute_values(":prefix", s(prefix))
            .consistent_read(consistent);
        self.query_pages(query).await
    }

    /// Every item `query` finds, page after page (the request is sent again from where the last
    /// page stopped).
    pub(crate) async fn query_pages(
        &self,
        query: aws_sdk_dynamodb::operation::query::builders::QueryFluentBuilder,
    ) -> Result<Vec<Item>, StoreError> {
        let mut items = Vec::new();
        let mut start = None;
        loop {
            let output = query
                .clone()
                .set_exclusive_start_key(start)
                .send()
                .await
                .map_err(|e| classify("Query", e))?;
            items.extend(output.items.unwrap_or_default());
            start = output.last_evaluated_key.filter(|key| !key.is_empty());
            if start.is_none() {
                return Ok(items);
            }
        }
    }

    /// The item of `key`, or `None`.
    pub(crate) async fn get_item(
        &self,
        key: Item,
        consistent: bool,
    ) -> Result<Option<Item>, StoreError> {
        let output = self
            .client
            .get_item()
            .table_name(&self.table)
            .set_key(Some(key))
            .consistent_read(consistent)
            .send()
            .await
            .map_err(|e| classify("GetItem", e))?;
        Ok(output.item)
    }
}
