//! [`DynamoStore`]: the storage traits on the app's DynamoDB table, one module per aggregate.

mod links;
mod packs;

use std::collections::HashMap;

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::error::{DisplayErrorContext, ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::types::AttributeValue;
use aws_smithy_runtime_api::client::orchestrator::HttpResponse;

use crate::store::StoreError;

pub use packs::{document_from_item, pack_item};

type Item = HashMap<String, AttributeValue>;

/// The app's table, through a client built once per cold start.
#[derive(Clone, Debug)]
pub struct DynamoStore {
    client: Client,
    table: String,
}

pub(crate) fn s(value: impl Into<String>) -> AttributeValue {
    AttributeValue::S(value.into())
}

/// Sorts an SDK failure into "unavailable" (throttling, timeouts, unreachable, 5xx: a 503) and
/// anything else (a 500), keeping the full detail for the logs.
pub(crate) fn classify<E>(operation: &str, error: SdkError<E, HttpResponse>) -> StoreError
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
{
    let unavailable = match &error {
        SdkError::TimeoutError(_) | SdkError::DispatchFailure(_) | SdkError::ResponseError(_) => {
            true
        }
        SdkError::ServiceError(service) => {
            matches!(
                service.err().code(),
                Some(
                    "ThrottlingException"
                        | "ProvisionedThroughputExceededException"
                        | "RequestLimitExceeded"
                        | "InternalServerError"
                        | "ServiceUnavailable"
                )
            ) || service.raw().status().is_server_error()
        }
        _ => false,
    };
    let detail = format!("{operation}: {}", DisplayErrorContext(&error));
    if unavailable {
        StoreError::Unavailable(detail)
    } else {
        StoreError::Internal(detail)
    }
}

impl DynamoStore {
    pub fn new(client: Client, table: impl Into<String>) -> Self {
        Self {
            client,
            table: table.into(),
        }
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
