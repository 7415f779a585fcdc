//! `GET /api/me/purchases` and `GET /api/me/items`. Wiring only: the handlers are
//! `shared::handlers::my_purchases`.

use shared::handlers::me::MeState;
use shared::handlers::my_purchases::me_purchases;
use shared::runtime::serve;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    shared::telemetry::init_json();
    serve(MeState::from_env().await, me_purchases).await
}
