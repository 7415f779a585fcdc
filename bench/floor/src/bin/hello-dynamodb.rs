//! The second floor of the Lambda benchmarks: the hello-world function plus the one DynamoDB
//! exchange that `GET /api/packs` cannot do without. Each invocation POSTs the list's Query
//! (same index, key condition, filter, projection and limit) over a kept-alive HTTP/1.1
//! connection and answers with DynamoDB's JSON as it came. No SDK, no signing, no parsing: a
//! lower bound for any DynamoDB client, so that what a function spends beyond it is the
//! client's and the function's own.

use api::http::response::json_text_response;
use http_body_util::BodyExt;
use lambda_http::http::StatusCode;
use lambda_http::{Request, service_fn};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    let endpoint = std::env::var("AWS_ENDPOINT_URL_DYNAMODB")?;
    let table = std::env::var("TABLE_NAME")?;
    let client = floor::http_client();
    let (client, endpoint, table) = (&client, endpoint.as_str(), table.as_str());
    lambda_http::run(service_fn(move |_request: Request| async move {
        let mut request = floor::dynamodb_request(endpoint, "Query", floor::list_query(table));
        request.headers_mut().insert(
            "authorization",
            "AWS4-HMAC-SHA256 Credential=floor/20260101/us-east-1/dynamodb/aws4_request, \
             SignedHeaders=host, Signature=0"
                .parse()?,
        );
        let answer = client.request(request).await?.into_body().collect().await?;
        let text = String::from_utf8(answer.to_bytes().into())?;
        Ok::<_, lambda_http::Error>(json_text_response(StatusCode::OK, text))
    }))
    .await
}
