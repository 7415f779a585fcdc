//! What the DynamoDB floors share: the list's Query, as `GET /api/packs` sends it, built from
//! the same table design (`store::schema`) and listing keys (`domain::packs::listing`).

use bytes::Bytes;
use domain::packs::listing::{DEFAULT_LIMIT, ListingKey};
use domain::timestamp::Timestamp;
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use store::schema::{ENDS_AT, GSI1, GSI1_PK, GSI1_SK, LISTED_PACKS, PACK_DOC, PACK_REMAINING};

/// A kept-alive HTTP/1.1 client for the DynamoDB endpoint.
pub fn http_client() -> Client<HttpConnector, Full<Bytes>> {
    Client::builder(TokioExecutor::new()).build_http()
}

/// The JSON body of the list's Query at the current time: same index, key condition, filter,
/// projection and limit (a default page and one more) as list-packs.
pub fn list_query(table: &str) -> Bytes {
    let now = Timestamp::now();
    Bytes::from(format!(
        r##"{{"TableName":"{table}","IndexName":"{GSI1}","KeyConditionExpression":"#pk = :listed AND #sk >= :started","FilterExpression":"attribute_not_exists(#ends) OR #ends > :now","ProjectionExpression":"#doc, #remaining, #sk","ExpressionAttributeNames":{{"#pk":"{GSI1_PK}","#sk":"{GSI1_SK}","#ends":"{ENDS_AT}","#doc":"{PACK_DOC}","#remaining":"{PACK_REMAINING}"}},"ExpressionAttributeValues":{{":listed":{{"S":"{LISTED_PACKS}"}},":started":{{"S":"{started}"}},":now":{{"N":"{nanos}"}}}},"Limit":{limit}}}"##,
        started = ListingKey::started_bound(now),
        nanos = now.unix_nanos(),
        limit = DEFAULT_LIMIT + 1,
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
