//! `GET /api/packs/{packId}`. Wiring only: the handler is `shared::handlers::get_pack`.

use shared::handlers::get_pack::{GetPackState, get_pack};
use shared::runtime::{require, serve};
use shared::store::DynamoStore;
use shared::{aws, config, telemetry};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    telemetry::init_json();
    let table = require(config::table_name(&config::Env));
    let store = DynamoStore::new(require(aws::lambda_dynamodb_client(&config::Env)), table);
    serve(GetPackState { store }, get_pack).await
}
