//! A fan's orders of products (issue 48), in the `product-orders` function:
//! `POST /api/products/{productId}/orders` places one (with Cash: debited, taken from the stock
//! and granted in one transaction; by card: pending, with a Stripe Checkout Session that the
//! signed webhook completes), `GET /api/me/orders` and `GET /api/me/orders/{orderId}` read them.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::auth::TokenVerifier;
use crate::http::error::{ApiError, ErrorBody, ErrorCode};
use crate::http::extract::{
    Fan, FromJsonBody, IdempotencyKey, Json, Path, ProductPath, handler_state,
};
use crate::http::paging::{ListLimit, ListQuery, MeCursor, PageJson, list_key_after, next_cursor};
use crate::http::refusals::{
    PRODUCT_NOT_FOUND, TOO_MANY_PENDING, stripe_failure, too_many_pending,
};
use crate::http::request::json_object;
use crate::http::response::{json_response, mark_replayed};
use crate::http::routes::{LocalProcess, LocalState, fill};
use crate::openapi::headers::{OrderLocation, Replayed};
use crate::openapi::schemas::Currency;
use crate::openapi::{examples, responses as doc};
use crate::views::products::OrderJson;
use clients::stripe::{ReturnUrls, StripeClient};
use domain::ids::OrderId;
use domain::packs::listing::CursorSigner;
use domain::products::PayMethod;
use domain::products::order::{Order, OrderRefusal, OrderStatus, check_order, order_id};
use domain::timestamp::Timestamp;
use store::products::{GetOrders, GetProduct, OrderError, PlaceOrder, Placed, SetOrderCheckout};

/// What the orders' handlers need.
pub struct OrdersState<S> {
    pub store: S,
    pub verifier: TokenVerifier,
    pub max_body_bytes: usize,
    pub cursors: CursorSigner,
    pub stripe: StripeClient,
    pub return_urls: ReturnUrls,
}

handler_state!(OrdersState: verifier, max_body_bytes);

impl<S: Send + Sync + Clone + 'static> LocalState<S> for OrdersState<S> {
    fn local(store: &S, process: &LocalProcess) -> Self {
        Self {
            store: store.clone(),
            verifier: process.verifier(),
            max_body_bytes: process.max_body_bytes,
            cursors: CursorSigner::random(),
            stripe: StripeClient::new(&process.stripe),
            return_urls: process.return_urls.clone(),
        }
    }
}

/// An order asked for: how it is paid and in which of the product's currencies.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = OrderRequest)]
pub struct OrderBody {
    /// `cash` (from the balance in `currency`) or `card` (Stripe Checkout); one the product's
    /// `pay` names.
    pay: PayMethod,
    /// One of the product's prices' currencies.
    #[schema(value_type = Currency)]
    currency: String,
}

impl FromJsonBody for OrderBody {
    fn from_json(body: &[u8]) -> Result<Self, ApiError> {
        json_object(
            body,
            "The body must be a JSON object of 'pay' (cash or card) and 'currency'.",
        )
    }
}

/// `/api/me/orders/{orderId}`
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(rename_all = "camelCase", parameter_in = Path)]
pub struct OrderPath {
    /// The order's `id` (from the order's `Location` or body).
    #[param(value_type = String, pattern = "^[A-Za-z0-9_-]{1,64}$", example = json!(examples::ORDER_ID))]
    pub order_id: OrderId,
}

/// `{"order": ...}`.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct OrderAnswer<'a> {
    order: OrderJson<'a>,
}

/// A page of the fan's orders.
#[derive(Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = MyOrderPage)]
struct Orders<'a> {
    orders: Vec<OrderJson<'a>>,
}

type MyOrderPage<'a> = PageJson<Orders<'a>>;

pub const ORDER_NOT_FOUND: &str = "You have no order with this id.";
const KEY_REUSED: &str =
    "This Idempotency-Key was used for another order (another product, payment or currency).";
/// How many times an order reads the product again when it changed between read and write.
const PRODUCT_READS: usize = 3;

/// Checks, in order: route (404/405), token (401), `Idempotency-Key` (400), body (415, 413,
/// 400), the product (404), its sale, payment method and currency (409, 400); places the order
/// (one transaction) and, by card, opens its Checkout Session. 201 with `Location`; a repeat of
/// the key answers the same order as it is now, with `Idempotent-Replayed: true`.
#[utoipa::path(
    post,
    path = "/api/products/{productId}/orders",
    operation_id = "createOrder",
    tag = "Products",
    summary = "Order a product, paid with Cash or a card",
    description = "Orders one unit of the product at its price in `currency`.

With `\"pay\": \"cash\"`, one transaction debits the fan's Cash in that currency (402 \
`insufficient_funds` otherwise), takes a unit of the stock (409 `sold_out`), counts the order \
against the product's `maxPerFan` (409 `purchase_limit_reached`), grants the product and records \
the debit in the ledger naming the order: 201, the order `completed`. A `cash_bundle` cannot be \
paid with Cash (400 `unsupported_payment_method`).

With `\"pay\": \"card\"`, the order is placed `pending` (its unit of stock and its count against \
the limit held), and a Stripe Checkout Session for its price is opened: send the fan to \
`checkoutUrl`. Stripe's signed webhook completes the order and grants it exactly once; a failed \
or expired payment closes it and gives its unit and count back.

Either way the order keeps the product's name, price and grant as they were when it was placed: a \
later price change never changes it. `Idempotency-Key` names the order: the same key answers the \
same order, as it is now, with `Idempotent-Replayed: true`, and pays nothing twice; the same key \
for another product, payment method or currency is 422 `idempotency_key_reused`.",
    security(("sessionToken" = [])),
    params(
        ProductPath,
        ("Idempotency-Key" = String, Header,
            description = "A unique string per order the client means to place: 1-255 visible \
ASCII characters (`!` to `~`), sent once. Retrying with the same key is safe.",
            min_length = 1, max_length = 255, pattern = "^[!-~]{1,255}$",
            example = "3f1e9c2a-5b7d-4e8f-9a0b-1c2d3e4f5a6b"),
    ),
    request_body(
        content = OrderBody,
        description = "At most 64 KiB (`MAX_BODY_BYTES`).",
        example = json!({"pay": "cash", "currency": "USD"}),
    ),
    responses(
        (status = 201, description = "The order: `completed` when paid with Cash, `pending` with \
its Checkout page by card.",
            body = OrderAnswer,
            headers(
                ("Location" = inline(OrderLocation)),
                ("Idempotent-Replayed" = inline(Replayed)),
            ),
            example = json!(examples::completed_order())),
        (status = 400, description = "No `Idempotency-Key` (`missing_idempotency_key`) or a bad \
one (`invalid_idempotency_key`); malformed JSON (`invalid_json`); a body that is not an object of \
exactly `pay` and `currency` (`invalid_body`); a payment method the product does not take \
(`unsupported_payment_method`); a currency it has no price in (`unsupported_currency`).",
            body = ErrorBody),
        (status = 402, description = "The fan's Cash in `currency` does not cover the price \
(`insufficient_funds`); nothing was written.",
            body = ErrorBody),
        (status = 404, description = "No listed product has this id (`product_not_found`), or \
no route (`not_found`).",
            body = ErrorBody),
        (status = 409, description = "The product's sale has not started (`not_on_sale`); its \
stock is sold (`sold_out`); the fan reached its `maxPerFan` (`purchase_limit_reached`); by card, \
the fan holds 5 unpaid Checkout Sessions (`too_many_pending_top_ups`).",
            body = ErrorBody,
            example = json!(doc::error_example(ErrorCode::TooManyPendingTopUps, TOO_MANY_PENDING))),
        (status = 413, response = doc::PayloadTooLarge),
        (status = 415, response = doc::UnsupportedMediaType),
        (status = 422, description = "This `Idempotency-Key` placed another order \
(`idempotency_key_reused`).",
            body = ErrorBody,
            example = json!(doc::error_example(ErrorCode::IdempotencyKeyReused, KEY_REUSED))),
        (status = 502, description = "Stripe refused to open the Checkout Session \
(`payment_provider_error`).",
            body = ErrorBody),
        doc::SignedIn,
    ),
)]
pub async fn create_order<S>(
    State(state): State<Arc<OrdersState<S>>>,
    Path(ProductPath { product_id }): Path<ProductPath>,
    Fan(identity): Fan,
    IdempotencyKey(key): IdempotencyKey,
    Json(body): Json<OrderBody>,
) -> Result<Response, ApiError>
where
    S: GetProduct + PlaceOrder + GetOrders + SetOrderCheckout,
{
    let id = order_id(&identity.user_id, &key);
    let mut placed = None;
    for _ in 0..PRODUCT_READS {
        let now = Timestamp::now();
        let product = state.store.get_product(&product_id).await?;
        let price = match check_order(product.as_ref(), body.pay, &body.currency, now) {
            Ok(price) => price.clone(),
            // A repeat of a key whose order exists is answered it, whatever the product is now.
            Err(refusal) => return repeat_or(&state, &id, &identity.user_id, refusal).await,
        };
        let product = product.expect("a product passed check_order");
        let asked = Order::place(
            id.clone(),
            identity.user_id.clone(),
            &product,
            price,
            body.pay,
            now,
        );
        match state.store.place_order(&asked, &product).await {
            Ok(Placed::Created(order)) => {
                // The one place an order is placed.
                tracing::info!(order_id = %order.id, pay = order.pay.as_str(), "order placed");
                placed = Some((order, false));
            }
            Ok(Placed::Repeated(order)) => placed = Some((order, true)),
            Err(OrderError::ProductChanged) => continue,
            Err(error) => return Err(order_refused(error)),
        }
        break;
    }
    let Some((mut order, replayed)) = placed else {
        return Err(ApiError::Unavailable {
            what: "product",
            detail: format!("product {product_id} changed {PRODUCT_READS} times during an order"),
        });
    };
    if order.status == OrderStatus::Pending && order.checkout.is_none() {
        let checkout = state
            .stripe
            .create_order_checkout_session(&order, &state.return_urls)
            .await
            .map_err(|error| {
                stripe_failure(
                    error,
                    &format!("order {}", order.id),
                    "The payment provider refused this order.",
                )
            })?;
        order = state
            .store
            .set_order_checkout(&order.user_id, &order.id, &checkout)
            .await?;
    }
    let mut response = answer(StatusCode::CREATED, &order);
    let location = fill(
        &<__path_get_my_order as utoipa::Path>::path(),
        &[order.id.as_str()],
    );
    if let Ok(location) = HeaderValue::from_str(&location) {
        response.headers_mut().insert(header::LOCATION, location);
    }
    if replayed {
        mark_replayed(&mut response);
    }
    Ok(response)
}

fn answer(status: StatusCode, order: &Order) -> Response {
    json_response(
        status,
        &OrderAnswer {
            order: OrderJson::of(order),
        },
    )
}

/// An order refused before its write: the key's order when it exists (a repeat), else the
/// refusal.
async fn repeat_or<S: GetOrders>(
    state: &OrdersState<S>,
    id: &OrderId,
    user_id: &domain::ids::UserId,
    refusal: OrderRefusal,
) -> Result<Response, ApiError> {
    if let Some(order) = state.store.get_order(user_id, id).await? {
        let mut response = answer(StatusCode::CREATED, &order);
        mark_replayed(&mut response);
        return Ok(response);
    }
    Err(match refusal {
        OrderRefusal::ProductNotFound => {
            ApiError::refused(ErrorCode::ProductNotFound, PRODUCT_NOT_FOUND)
        }
        OrderRefusal::NotOnSale => {
            ApiError::refused(ErrorCode::NotOnSale, "This product is not on sale now.")
        }
        OrderRefusal::PayNotAccepted => ApiError::refused(
            ErrorCode::UnsupportedPaymentMethod,
            "This product cannot be paid this way: see its 'pay'.",
        ),
        OrderRefusal::CurrencyNotOffered => ApiError::refused(
            ErrorCode::UnsupportedCurrency,
            "This product has no price in this currency: see its 'prices'.",
        ),
    })
}

fn order_refused(error: OrderError) -> ApiError {
    match error {
        OrderError::KeyReused => ApiError::refused(ErrorCode::IdempotencyKeyReused, KEY_REUSED),
        OrderError::SoldOut => {
            ApiError::refused(ErrorCode::SoldOut, "This product's stock is sold.")
        }
        OrderError::LimitReached => ApiError::refused(
            ErrorCode::PurchaseLimitReached,
            "You have ordered this product as many times as a fan may.",
        ),
        OrderError::InsufficientFunds => ApiError::refused(
            ErrorCode::InsufficientFunds,
            "Your Cash in this currency does not cover the price.",
        ),
        OrderError::TooManyPending(_) => too_many_pending(),
        OrderError::ProductChanged => ApiError::Unavailable {
            what: "product",
            detail: "the product changed during an order".into(),
        },
        OrderError::Store(error) => error.into(),
    }
}

/// `GET /api/me/orders?limit=&cursor=`: newest first.
#[utoipa::path(
    get,
    path = "/api/me/orders",
    operation_id = "listMyOrders",
    tag = "Products",
    summary = "The signed-in user's orders",
    description = "The caller's orders of products, newest first (then id, descending), each as \
it was sold (name, price, grant) and as it is now (`pending`, `completed`, `failed`, `expired`). \
Pages work as for `/api/me/purchases`.",
    security(("sessionToken" = [])),
    params(ListLimit, MeCursor),
    responses(
        (status = 200, description = "A page of the caller's orders.", body = MyOrderPage),
        (status = 400, response = doc::BadRequest),
        doc::SignedIn,
    ),
)]
pub async fn list_my_orders<S: GetOrders>(
    State(state): State<Arc<OrdersState<S>>>,
    Fan(identity): Fan,
    query: ListQuery,
) -> Result<Response, ApiError> {
    let scope = ["orders", identity.user_id.as_str()];
    let after = list_key_after(&state.cursors, query.cursor.as_deref(), &scope)?;
    let page = state
        .store
        .list_orders(&identity.user_id, query.limit, after.as_deref())
        .await?;
    Ok(json_response(
        StatusCode::OK,
        &PageJson {
            entries: Orders {
                orders: page.entries.iter().map(OrderJson::of).collect(),
            },
            next_cursor: next_cursor(&state.cursors, &scope, page.next.as_deref()),
        },
    ))
}

/// The caller's order; anybody else's, or none, is the same 404. One read.
#[utoipa::path(
    get,
    path = "/api/me/orders/{orderId}",
    operation_id = "getMyOrder",
    tag = "Products",
    summary = "Get one of the signed-in user's orders",
    description = "The order as it is now. Another user's order, or none, is the same 404 \
`order_not_found`.",
    security(("sessionToken" = [])),
    params(OrderPath),
    responses(
        (status = 200, description = "The order.", body = OrderAnswer,
            example = json!(examples::completed_order())),
        (status = 404, description = "The user has no order with this id (`order_not_found`), \
or the id is not an id (`not_found`).",
            body = ErrorBody,
            examples(
                ("unknown" = (value = json!(doc::error_example(ErrorCode::OrderNotFound, ORDER_NOT_FOUND)))),
                ("notAnId" = (value = json!(doc::not_an_id()))),
            )),
        doc::SignedIn,
    ),
)]
pub async fn get_my_order<S: GetOrders>(
    State(state): State<Arc<OrdersState<S>>>,
    Path(OrderPath { order_id }): Path<OrderPath>,
    Fan(identity): Fan,
) -> Result<Response, ApiError> {
    let order = state
        .store
        .get_order(&identity.user_id, &order_id)
        .await?
        .ok_or_else(|| ApiError::refused(ErrorCode::OrderNotFound, ORDER_NOT_FOUND))?;
    Ok(answer(StatusCode::OK, &order))
}
