//! `GET /api/packs` (and API Gateway's `$default` route, for JSON 404s). Wiring only: the handler
//! is `shared::handlers::list_packs`.

use shared::handlers::list_packs::{ListPacksState, list_packs};
use shared::packs::listing::CursorSigner;
use shared::runtime::{require, serve};
use shared::store::DynamoStore;
use shared::{aws, config, telemetry};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    telemetry::init_json();
    let table = require(config::table_name(&config::Env));
    let cursors = CursorSigner::new(&require(config::cursor_secret(&config::Env)));
    let store = DynamoStore::new(require(aws::lambda_dynamodb_client(&config::Env)), table);
    serve(ListPacksState { store, cursors }, list_packs).await
}
