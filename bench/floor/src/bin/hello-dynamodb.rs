//! The second floor of the Lambda benchmarks: the hello-world function plus the one DynamoDB
//! exchange that `GET /api/packs` cannot do without. Each invocation POSTs the list's Query
//! (same index, key condition, filter, projection and limit) over a kept-alive HTTP/1.1
//! connection and answers with DynamoDB's JSON as it came. No SDK, no signing, no parsing: a
//! lower bound for any DynamoDB client, so that what a function spends beyond it is the
//! client's and the function's own.

use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use lambda_http::{Body, Request, Response, service_fn};

/// The latest second the listing keys can hold, as in `shared::packs::listing`.
const MAX_SECONDS: u64 = 253_402_300_799;

fn query(table: &str) -> Bytes {
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

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    let endpoint = std::env::var("AWS_ENDPOINT_URL_DYNAMODB")?;
    let table = std::env::var("TABLE_NAME")?;
    let client: Client<HttpConnector, Full<Bytes>> =
        Client::builder(TokioExecutor::new()).build_http();
    let (client, endpoint, table) = (&client, endpoint.as_str(), table.as_str());
    lambda_http::run(service_fn(move |_request: Request| async move {
        let request = hyper::Request::post(endpoint)
            .header("content-type", "application/x-amz-json-1.0")
            .header("x-amz-target", "DynamoDB_20120810.Query")
            .header(
                "authorization",
                "AWS4-HMAC-SHA256 Credential=floor/20260101/us-east-1/dynamodb/aws4_request, \
                 SignedHeaders=host, Signature=0",
            )
            .body(Full::new(query(table)))?;
        let answer = client.request(request).await?.into_body().collect().await?;
        let mut response = Response::new(Body::Text(String::from_utf8(answer.to_bytes().into())?));
        response
            .headers_mut()
            .insert("content-type", "application/json".parse()?);
        Ok::<_, lambda_http::Error>(response)
    }))
    .await
}
