//! `GET /api/packs/{packId}/purchases/{purchaseId}`. Wiring only: the handler is
//! `shared::handlers::get_purchase`.

use shared::auth::TokenVerifier;
use shared::config::{self, AuthConfig, Env};
use shared::handlers::get_purchase::get_purchase;
use shared::handlers::purchase_json::PurchaseState;
use shared::runtime::{require, serve};
use shared::store::DynamoStore;
use shared::{aws, telemetry};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    telemetry::init_json();
    let table = require(config::table_name(&Env));
    let hold = require(config::purchase_hold(&Env));
    let max_body_bytes = require(config::max_body_bytes(&Env));
    let verifier =
        require(AuthConfig::from_source(&Env).and_then(|auth| TokenVerifier::from_config(&auth)));
    let store = DynamoStore::new(require(aws::lambda_dynamodb_client(&Env)), table);
    serve(
        PurchaseState {
            store,
            verifier,
            hold,
            max_body_bytes,
        },
        get_purchase,
    )
    .await
}
