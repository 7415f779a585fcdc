//! AWS clients, built once per cold start.
//!
//! The endpoint, region and credentials come from the SDK's own standard variables
//! (`AWS_ENDPOINT_URL_DYNAMODB`, `AWS_ENDPOINT_URL`, `AWS_REGION`, ...). Every call is bounded:
//! a failing DynamoDB answers within [`OPERATION_TIMEOUT`], after at most [`MAX_ATTEMPTS`] tries.
//!
//! - [`lambda_dynamodb_client`], for the functions: Lambda puts region and credentials in the
//!   environment, so the client is built from those variables alone, at once: no provider
//!   chain, no profile files, no instance metadata, nothing the first request has to wait for.
//! - [`dynamodb_client`], for tools run by people (`seed-packs`, `local-api --dynamodb`): the
//!   SDK's whole default chain (profiles, SSO, ...).

use std::time::Duration;

use aws_config::retry::RetryConfig;
use aws_config::timeout::TimeoutConfig;
use aws_config::{BehaviorVersion, SdkConfig};
use aws_sdk_dynamodb::config::{Credentials, Region};

use api::config::{ConfigError, Source, is_loopback};
use clients::http_client::{Roots, Warmer, sdk_http_client, warmable_sdk_http_client};

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
        .http_client(sdk_http_client(Roots::WebPki))
        .timeout_config(timeouts())
        .retry_config(RetryConfig::standard().with_max_attempts(MAX_ATTEMPTS))
        .load()
        .await
}

pub async fn dynamodb_client() -> aws_sdk_dynamodb::Client {
    aws_sdk_dynamodb::Client::new(&sdk_config().await)
}

fn timeouts() -> TimeoutConfig {
    TimeoutConfig::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .operation_attempt_timeout(ATTEMPT_TIMEOUT)
        .operation_timeout(OPERATION_TIMEOUT)
        .build()
}

fn variable(source: &dyn Source, names: &[&'static str]) -> Option<String> {
    names
        .iter()
        .filter_map(|name| source.get(name))
        .find(|value| !value.trim().is_empty())
}

/// `AWS_ENDPOINT_URL_DYNAMODB`, else `AWS_ENDPOINT_URL`, as the SDK reads them.
pub fn dynamodb_endpoint(source: &dyn Source) -> Option<String> {
    variable(source, &["AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL"])
}

/// The DynamoDB endpoint of a tool that must only reach a table on this machine (moto):
/// `AWS_ENDPOINT_URL_DYNAMODB` (or `AWS_ENDPOINT_URL`), on a loopback host.
pub fn local_dynamodb_endpoint(source: &dyn Source) -> Result<String, ConfigError> {
    const NAME: &str = "AWS_ENDPOINT_URL_DYNAMODB";
    let endpoint = dynamodb_endpoint(source).ok_or(ConfigError::Missing {
        name: NAME,
        purpose: "a DynamoDB on this machine (moto_server), as http://127.0.0.1:PORT",
    })?;
    match url::Url::parse(&endpoint) {
        Ok(url) if is_loopback(&url) => Ok(endpoint),
        _ => Err(ConfigError::Invalid {
            name: NAME,
            problem: "must be a loopback address: this tool signs tokens for any user, so it \
                      never serves a table beyond this machine"
                .into(),
        }),
    }
}

/// A Lambda function's DynamoDB client, and what opens its connection before the first request.
#[derive(Debug)]
pub struct LambdaDynamoDb {
    pub client: aws_sdk_dynamodb::Client,
    warmer: Warmer,
    /// The endpoint it connects to (the region's, or the one configured).
    pub endpoint: String,
}

impl LambdaDynamoDb {
    /// Opens the client's connection to DynamoDB (TCP and TLS) ahead of the first request; a
    /// failure is logged and the first request connects as it would have.
    pub async fn warm(&self) {
        self.warmer.warm(&self.endpoint, CONNECT_TIMEOUT).await;
    }
}

/// The DynamoDB client of a Lambda function, from `AWS_REGION`, `AWS_ACCESS_KEY_ID`,
/// `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN` and `AWS_ENDPOINT_URL_DYNAMODB` (or
/// `AWS_ENDPOINT_URL`), which Lambda (or `cargo lambda watch`) sets.
pub fn lambda_dynamodb_client(source: &dyn Source) -> Result<LambdaDynamoDb, ConfigError> {
    let (region, credentials) = lambda_identity(source)?;
    // Trusting Amazon's roots only: nothing is read from disk to build it (the SDK's default
    // client parses the whole system certificate store at every cold start).
    let (http_client, warmer) = warmable_sdk_http_client(Roots::Amazon);
    let endpoint = dynamodb_endpoint(source);
    let mut config = aws_sdk_dynamodb::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .http_client(http_client)
        .region(Region::new(region.clone()))
        .credentials_provider(credentials)
        .timeout_config(timeouts())
        .retry_config(RetryConfig::standard().with_max_attempts(MAX_ATTEMPTS));
    if let Some(endpoint) = &endpoint {
        config = config.endpoint_url(endpoint);
    }
    Ok(LambdaDynamoDb {
        client: aws_sdk_dynamodb::Client::from_conf(config.build()),
        warmer,
        // The SDK's endpoint for a standard region, when none is set.
        endpoint: endpoint.unwrap_or_else(|| format!("https://dynamodb.{region}.amazonaws.com")),
    })
}

/// The region and credentials Lambda (or `cargo lambda watch`) puts in the environment:
/// `AWS_REGION`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`.
fn lambda_identity(source: &dyn Source) -> Result<(String, Credentials), ConfigError> {
    let missing = |name, purpose| ConfigError::Missing { name, purpose };
    let region = variable(source, &["AWS_REGION", "AWS_DEFAULT_REGION"])
        .ok_or(missing("AWS_REGION", "the AWS region (Lambda sets it)"))?;
    let key_id = variable(source, &["AWS_ACCESS_KEY_ID"]).ok_or(missing(
        "AWS_ACCESS_KEY_ID",
        "the function's credentials (Lambda sets them)",
    ))?;
    let secret = variable(source, &["AWS_SECRET_ACCESS_KEY"]).ok_or(missing(
        "AWS_SECRET_ACCESS_KEY",
        "the function's credentials (Lambda sets them)",
    ))?;
    let session = variable(source, &["AWS_SESSION_TOKEN"]);
    Ok((
        region,
        Credentials::new(key_id, secret, session, None, "lambda-environment"),
    ))
}

/// The SQS client of a Lambda function (the webhook deliveries queue), from the same variables
/// as [`lambda_dynamodb_client`] and `AWS_ENDPOINT_URL_SQS` (or `AWS_ENDPOINT_URL`).
pub fn lambda_sqs_client(source: &dyn Source) -> Result<aws_sdk_sqs::Client, ConfigError> {
    let (region, credentials) = lambda_identity(source)?;
    let mut config = aws_sdk_sqs::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .http_client(sdk_http_client(Roots::Amazon))
        .region(Region::new(region))
        .credentials_provider(credentials)
        .timeout_config(timeouts())
        .retry_config(RetryConfig::standard().with_max_attempts(MAX_ATTEMPTS));
    if let Some(endpoint) = variable(source, &["AWS_ENDPOINT_URL_SQS", "AWS_ENDPOINT_URL"]) {
        config = config.endpoint_url(endpoint);
    }
    Ok(aws_sdk_sqs::Client::from_conf(config.build()))
}
