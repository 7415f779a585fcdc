//! `POST /api/products/{productId}/orders`, `GET /api/me/orders` and
//! `GET /api/me/orders/{orderId}`. Wiring only: the handlers are `api::handlers::orders`.

use std::sync::Arc;

use api::handlers::orders::OrdersState;
use api::http::routes::product_orders_routes;
use lambda::runtime::serve;
use lambda::states::FromEnv;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    lambda::runtime::cold_start();
    let state = Arc::new(OrdersState::from_env().await);
    let store = state.store.clone();
    serve(product_orders_routes().function_app(state), &store).await
}
