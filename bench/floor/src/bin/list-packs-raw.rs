//! An experiment beside the floors, not a floor: list-packs' warm path on a purpose-built
//! DynamoDB client instead of `aws-sdk-dynamodb`, to measure what replacing the SDK would buy
//! (BENCHMARKS.md). Each invocation signs the list's Query with SigV4 (`aws-sigv4`, as the SDK
//! does), POSTs it on a kept-alive HTTP/1.1 connection, parses the answer with serde straight
//! into pack documents (checked by `shared` as list-packs checks them) and writes the page with
//! `shared`'s `page_json`. Left out, as they cost nothing while nothing fails: retries,
//! timeouts, error classification, paging cursors.

use std::time::SystemTime;

use aws_credential_types::Credentials;
use aws_sigv4::http_request::{SignableBody, SignableRequest, SigningSettings, sign};
use aws_sigv4::sign::v4;
use aws_smithy_runtime_api::client::identity::Identity;
use http_body_util::BodyExt;
use lambda_http::http::StatusCode;
use lambda_http::{Request, service_fn};
use serde::Deserialize;
use shared::handlers::list_packs::page_json;
use shared::http::response::json_text_response;
use shared::packs::document::PackDocument;
use shared::packs::listing::DEFAULT_LIMIT;

#[derive(Deserialize)]
struct QueryOutput {
    #[serde(rename = "Items")]
    items: Vec<Item>,
}

#[derive(Deserialize)]
struct Item {
    doc: Text,
    remaining: Number,
}

#[derive(Deserialize)]
struct Text {
    #[serde(rename = "S")]
    s: String,
}

#[derive(Deserialize)]
struct Number {
    #[serde(rename = "N")]
    n: String,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    let var = std::env::var;
    let (endpoint, table, region) = (
        var("AWS_ENDPOINT_URL_DYNAMODB")?,
        var("TABLE_NAME")?,
        var("AWS_REGION")?,
    );
    let identity: Identity = Credentials::new(
        var("AWS_ACCESS_KEY_ID")?,
        var("AWS_SECRET_ACCESS_KEY")?,
        var("AWS_SESSION_TOKEN").ok(),
        None,
        "environment",
    )
    .into();
    let client = floor::http_client();
    let (client, endpoint, table, region, identity) = (
        &client,
        endpoint.as_str(),
        table.as_str(),
        region.as_str(),
        &identity,
    );
    lambda_http::run(service_fn(move |_request: Request| async move {
        let body = floor::list_query(table);
        let mut request = floor::dynamodb_request(endpoint, "Query", body.clone());
        let params = v4::SigningParams::builder()
            .identity(identity)
            .region(region)
            .name("dynamodb")
            .time(SystemTime::now())
            .settings(SigningSettings::default())
            .build()?
            .into();
        let headers = request.headers().iter();
        let signable = SignableRequest::new(
            "POST",
            endpoint,
            headers.map(|(name, value)| (name.as_str(), value.to_str().unwrap_or_default())),
            SignableBody::Bytes(&body),
        )?;
        let (instructions, _signature) = sign(signable, &params)?.into_parts();
        instructions.apply_to_request_http1x(&mut request);

        let answer = client.request(request).await?;
        if !answer.status().is_success() {
            return Err(format!("DynamoDB answered {}", answer.status()).into());
        }
        let bytes = answer.into_body().collect().await?.to_bytes();
        let output: QueryOutput = serde_json::from_slice(&bytes)?;
        let packs: Vec<PackDocument> = output
            .items
            .into_iter()
            .take(DEFAULT_LIMIT)
            .filter_map(|item| {
                let remaining = item.remaining.n.parse().ok()?;
                PackDocument::from_stored(item.doc.s, remaining).ok()
            })
            .collect();
        Ok::<_, lambda_http::Error>(json_text_response(StatusCode::OK, page_json(&packs, None)))
    }))
    .await
}
