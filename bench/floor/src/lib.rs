//! What the DynamoDB floors share: the list's Query, as `GET /api/packs` sends it.

use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

/// The latest second the listing keys can hold, as in `shared::packs::listing`.
const MAX_SECONDS: u64 = 253_402_300_799;

/// A kept-alive HTTP/1.1 client for the DynamoDB endpoint.
pub fn http_client() -> Client<HttpConnector, Full<Bytes>> {
    Client::builder(TokioExecutor::new()).build_http()
}

/// The JSON body of the list's Query at the current time: same index, key condition, filter,
/// projection and limit (50 packs and one more) as list-packs.
pub fn list_query(table: &str) -> Bytes {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after 1970");
    let started = format!(
        "{:012}{:09}#",
        MAX_SECONDS - now.as_secs(),
        999_999_999 - now.subsec_nanos()
    );
    Bytes::from(format!(
        r##"{{"TableName":"{table}","IndexName":"GSI1","KeyConditionExpression":"#pk = :listed AND #sk >= :started","FilterExpression":"attribute_not_exists(#ends) OR #ends > :now","ProjectionExpression":"#doc, #remaining, #sk","ExpressionAttributeNames":{{"#pk":"GSI1PK","#sk":"GSI1SK","#ends":"listEndsAt","#doc":"doc","#remaining":"remaining"}},"ExpressionAttributeValues":{{":listed":{{"S":"PACKS#LISTED"}},":started":{{"S":"{started}"}},":now":{{"N":"{}"}}}},"Limit":51}}"##,
        now.as_nanos()
    ))
}

/// A POST of the JSON protocol's `operation` (e.g. `Query`) to `endpoint`, not yet signed.
pub fn dynamodb_request(
    endpoint: &str,
    operation: &str,
    body: Bytes,
) -> hyper::Request<Full<Bytes>> {
    hyper::Request::post(endpoint)
        .header("content-type", "application/x-amz-json-1.0")
        .header("x-amz-target", format!("DynamoDB_20120810.{operation}"))
        .body(Full::new(body))
        .expect("a valid request")
}
