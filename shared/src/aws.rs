//! AWS clients, built once per cold start.
//!
//! The endpoint, region and credentials come from the SDK's own standard variables
//! (`AWS_ENDPOINT_URL_DYNAMODB`, `AWS_ENDPOINT_URL`, `AWS_REGION`, ...). Every call is bounded:
//! a failing DynamoDB answers within [`OPERATION_TIMEOUT`], after at most [`MAX_ATTEMPTS`] tries.

use std::time::Duration;

use aws_config::retry::RetryConfig;
use aws_config::timeout::TimeoutConfig;
use aws_config::{BehaviorVersion, SdkConfig};

pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);
pub const ATTEMPT_TIMEOUT: Duration = Duration::from_millis(1500);
pub const OPERATION_TIMEOUT: Duration = Duration::from_secs(4);
pub const MAX_ATTEMPTS: u32 = 3;

/// The SDK configuration from the standard environment, with the timeouts and retries above.
pub async fn sdk_config() -> SdkConfig {
    sdk_config_with(aws_config::defaults(BehaviorVersion::latest())).await
}

/// `loader` (region, credentials, endpoint set by the caller) with the timeouts and retries above.
pub async fn sdk_config_with(loader: aws_config::ConfigLoader) -> SdkConfig {
    loader
        .timeout_config(
            TimeoutConfig::builder()
                .connect_timeout(CONNECT_TIMEOUT)
                .operation_attempt_timeout(ATTEMPT_TIMEOUT)
                .operation_timeout(OPERATION_TIMEOUT)
                .build(),
        )
        .retry_config(RetryConfig::standard().with_max_attempts(MAX_ATTEMPTS))
        .load()
        .await
}

pub async fn dynamodb_client() -> aws_sdk_dynamodb::Client {
    aws_sdk_dynamodb::Client::new(&sdk_config().await)
}
