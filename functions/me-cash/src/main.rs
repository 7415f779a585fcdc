//! `GET /api/me/cash` and `GET /api/me/cash/transactions`. Wiring only: the handlers are
//! `shared::handlers::my_cash`.

use shared::handlers::me::MeState;
use shared::handlers::my_cash::me_cash;
use shared::runtime::serve;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    shared::telemetry::init_json();
    serve(MeState::from_env().await, me_cash).await
}
