//! The Products routes through their handlers, on both stores (DynamoDB on moto behind the
//! one-request-at-a-time proxy, and in memory) and the Stripe stub: the public list and product,
//! a Cash order (debited, granted, in the ledger naming it, once per key), its refusals, a card
//! order (pending with its Checkout page), the fan's orders, and equipping what they own (shown
//! on the profile and the public locker room).

use std::sync::Arc;

use api::config::{Secret, StripeApi};
use api::handlers::locker_room::LockerRoomsState;
use api::handlers::orders::OrdersState;
use api::handlers::products::ProductsState;
use api::http::routes::{
    locker_rooms_routes, me_profile_routes, product_orders_routes, products_routes,
};
use api::state::ProfileState;
use clients::stripe::{ReturnUrls, StripeClient};
use domain::products::seed::parse_products;
use serde_json::Value;
use store::Store;
use testkit::events::{ApiEvent, call, parts};
use testkit::stripe::{SECRET_KEY, StripeStub};
use testkit::tokens::token;

testkit::store_contract!(
    by_value:
    the_shipped_products_list_publicly_in_pages_and_by_type,
    a_cash_order_is_granted_once_per_key_and_named_in_the_ledger,
    orders_refused_write_nothing_and_say_why,
    a_card_order_is_pending_with_its_checkout_page,
    a_fan_equips_what_they_own_and_their_profile_shows_it,
);

struct Api<S> {
    products: Arc<ProductsState<S>>,
    orders: Arc<OrdersState<S>>,
    profile: Arc<ProfileState<S>>,
    stub: StripeStub,
}

/// The routes over `store`, seeded with the shipped products (infra/seed/products.json).
async fn api<S: Store + Clone + 'static>(store: S) -> Api<S> {
    let products = parse_products(include_bytes!("../../../infra/seed/products.json")).unwrap();
    store.seed_products(&products).await.unwrap();
    let stub = StripeStub::start().await;
    Api {
        products: Arc::new(ProductsState {
            store: store.clone(),
            cursors: testkit::cursor_signer(),
        }),
        orders: Arc::new(OrdersState {
            store: store.clone(),
            verifier: testkit::tokens::verifier(),
            max_body_bytes: 65536,
            cursors: testkit::cursor_signer(),
            stripe: StripeClient::new(&StripeApi {
                base: stub.base(),
                secret_key: Secret::new(SECRET_KEY),
            }),
            return_urls: ReturnUrls {
                success: "https://fan.example/done".into(),
                cancel: "https://fan.example/cancelled".into(),
            },
        }),
        profile: Arc::new(ProfileState {
            store,
            verifier: testkit::tokens::verifier(),
            max_body_bytes: 65536,
        }),
        stub,
    }
}

struct Answer {
    status: u16,
    body: Value,
    headers: lambda_http::http::HeaderMap,
}

impl Answer {
    fn code(&self) -> &str {
        self.body["error"]["code"].as_str().unwrap_or_default()
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

fn answer(response: lambda_http::Response<lambda_http::Body>) -> Answer {
    let (status, body) = parts(&response);
    Answer {
        status,
        body,
        headers: response.headers().clone(),
    }
}

impl<S: Store + Clone + 'static> Api<S> {
    async fn public(&self, path: &str, query: &str) -> Answer {
        let event = ApiEvent::get(path).query(query);
        answer(call(products_routes(), &self.products, event.request()).await)
    }

    async fn order(&self, fan: &str, key: &str, product: &str, body: &str) -> Answer {
        let event = ApiEvent::post(&format!("/api/products/{product}/orders"))
            .bearer(&token(fan, None))
            .header("idempotency-key", key)
            .json(body);
        answer(call(product_orders_routes(), &self.orders, event.request()).await)
    }

    async fn mine(&self, fan: &str, path: &str, query: &str) -> Answer {
        let event = ApiEvent::get(path).query(query).bearer(&token(fan, None));
        answer(call(product_orders_routes(), &self.orders, event.request()).await)
    }

    async fn profile(&self, fan: &str, method: &str, path: &str, body: Option<&str>) -> Answer {
        let mut event = ApiEvent::new(method, path).bearer(&token(fan, None));
        if let Some(body) = body {
            event = event.json(body);
        }
        answer(call(me_profile_routes(), &self.profile, event.request()).await)
    }
}

const CASH_USD: &str = r#"{"pay": "cash", "currency": "USD"}"#;
const CARD_USD: &str = r#"{"pay": "card", "currency": "USD"}"#;

fn ids(list: &Value) -> Vec<&str> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["id"].as_str().unwrap())
        .collect()
}

async fn fund(store: &impl Store, fan: &str, amount: u64) {
    testkit::purchases::credit(store, fan, amount, "USD", &format!("grant-{fan}")).await;
}

async fn the_shipped_products_list_publicly_in_pages_and_by_type(
    store: impl Store + Clone + 'static,
) {
    let api = api(store).await;
    let first = api.public("/api/products", "limit=4").await;
    assert_eq!(first.status, 200, "{}", first.body);
    assert!(first.header("cache-control").unwrap().starts_with("public"));
    assert_eq!(
        ids(&first.body["products"]),
        [
            "badge-founder",
            "cash-fan-pack",
            "cash-launch-week",
            "cash-starter"
        ]
    );
    let cursor = first.body["nextCursor"].as_str().unwrap();
    let second = api
        .public("/api/products", &format!("limit=4&cursor={cursor}"))
        .await;
    assert_eq!(
        ids(&second.body["products"]),
        ["frame-gold", "theme-hardwood"]
    );
    assert_eq!(second.body["nextCursor"], Value::Null);

    let cosmetics = api.public("/api/products", "type=cosmetic").await;
    assert_eq!(
        ids(&cosmetics.body["products"]),
        ["badge-founder", "frame-gold", "theme-hardwood"]
    );
    // A cursor is bound to its filter.
    let crossed = api
        .public(
            "/api/products",
            &format!("type=cosmetic&limit=4&cursor={cursor}"),
        )
        .await;
    assert_eq!((crossed.status, crossed.code()), (400, "invalid_cursor"));
    let bad = api.public("/api/products", "type=hat").await;
    assert_eq!((bad.status, bad.code()), (400, "invalid_query"));

    let one = api.public("/api/products/cash-fan-pack", "").await;
    assert_eq!(one.status, 200);
    assert_eq!(
        one.body["product"]["grants"],
        serde_json::json!({"kind": "cash", "amount": 2000, "bonus": 200, "currency": "USD"})
    );
    assert_eq!(one.body["product"]["pay"], serde_json::json!(["card"]));
    let none = api.public("/api/products/no-such", "").await;
    assert_eq!((none.status, none.code()), (404, "product_not_found"));
}

async fn a_cash_order_is_granted_once_per_key_and_named_in_the_ledger(
    store: impl Store + Clone + 'static,
) {
    let api = api(store.clone()).await;
    fund(&store, "fan", 1000).await;
    let placed = api.order("fan", "k1", "frame-gold", CASH_USD).await;
    assert_eq!(placed.status, 201, "{}", placed.body);
    let order = &placed.body["order"];
    assert_eq!(order["status"], "completed");
    assert_eq!(
        order["price"],
        serde_json::json!({"amount": 299, "currency": "USD"})
    );
    assert_eq!(order["productName"], "Gold Avatar Frame");
    assert_eq!(order["checkoutUrl"], Value::Null);
    let id = order["id"].as_str().unwrap().to_owned();
    assert_eq!(
        placed.header("location"),
        Some(format!("/api/me/orders/{id}").as_str())
    );
    assert_eq!(placed.header("idempotent-replayed"), None);
    assert_eq!(
        store
            .get_balance(&testkit::ids::user("fan"), "USD")
            .await
            .unwrap(),
        701
    );

    // A retry of the key: the same order, nothing paid twice.
    let again = api.order("fan", "k1", "frame-gold", CASH_USD).await;
    assert_eq!(
        (again.status, again.header("idempotent-replayed")),
        (201, Some("true"))
    );
    assert_eq!(again.body["order"]["id"], id.as_str());
    assert_eq!(
        store
            .get_balance(&testkit::ids::user("fan"), "USD")
            .await
            .unwrap(),
        701
    );
    let reused = api.order("fan", "k1", "badge-founder", CASH_USD).await;
    assert_eq!(
        (reused.status, reused.code()),
        (422, "idempotency_key_reused")
    );

    // The fan's orders, and one of them; another fan's is a 404.
    let list = api.mine("fan", "/api/me/orders", "").await;
    assert_eq!(list.status, 200, "{}", list.body);
    assert_eq!(ids(&list.body["orders"]), [id.as_str()]);
    let one = api.mine("fan", &format!("/api/me/orders/{id}"), "").await;
    assert_eq!(one.body["order"]["grants"]["slot"], "avatar_frame");
    let theirs = api.mine("other", &format!("/api/me/orders/{id}"), "").await;
    assert_eq!((theirs.status, theirs.code()), (404, "order_not_found"));
}

async fn orders_refused_write_nothing_and_say_why(store: impl Store + Clone + 'static) {
    let api = api(store.clone()).await;
    fund(&store, "fan", 300).await;
    let cases = [
        ("cash-starter", CASH_USD, 400, "unsupported_payment_method"),
        (
            "frame-gold",
            r#"{"pay": "cash", "currency": "EUR"}"#,
            400,
            "unsupported_currency",
        ),
        ("no-such", CASH_USD, 404, "product_not_found"),
        (
            "frame-gold",
            r#"{"pay": "cheque", "currency": "USD"}"#,
            400,
            "invalid_body",
        ),
        ("frame-gold", r#"{"pay": "cash"}"#, 400, "invalid_body"),
    ];
    for (k, (product, body, status, code)) in cases.into_iter().enumerate() {
        let refused = api.order("fan", &format!("r{k}"), product, body).await;
        assert_eq!(
            (refused.status, refused.code()),
            (status, code),
            "{product} {body}"
        );
    }
    // 299 of 300: one frame; the limit (one per fan) refuses a second.
    assert_eq!(
        api.order("fan", "a", "frame-gold", CASH_USD).await.status,
        201
    );
    let second = api.order("fan", "b", "frame-gold", CASH_USD).await;
    assert_eq!(
        (second.status, second.code()),
        (409, "purchase_limit_reached")
    );
    let poor = api.order("fan", "c", "theme-hardwood", CASH_USD).await;
    assert_eq!((poor.status, poor.code()), (402, "insufficient_funds"));
    assert_eq!(
        store
            .get_balance(&testkit::ids::user("fan"), "USD")
            .await
            .unwrap(),
        1
    );
    let list = api.mine("fan", "/api/me/orders", "").await;
    assert_eq!(list.body["orders"].as_array().unwrap().len(), 1);
}

async fn a_card_order_is_pending_with_its_checkout_page(store: impl Store + Clone + 'static) {
    let api = api(store).await;
    let placed = api.order("fan", "card-1", "cash-fan-pack", CARD_USD).await;
    assert_eq!(placed.status, 201, "{}", placed.body);
    let order = &placed.body["order"];
    assert_eq!(order["status"], "pending");
    assert!(order["checkoutUrl"].as_str().unwrap().starts_with("http"));
    assert_eq!(api.stub.sessions(), 1);
    let form = &api.stub.received()[0].form;
    let field = |name: &str| {
        form.iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    assert_eq!(
        field("line_items[0][price_data][unit_amount]"),
        Some("1999")
    );
    assert_eq!(
        field("line_items[0][price_data][product_data][name]"),
        Some("Fan Cash Bundle")
    );
    // A retry opens no second session.
    let again = api.order("fan", "card-1", "cash-fan-pack", CARD_USD).await;
    assert_eq!(again.body["order"]["checkoutUrl"], order["checkoutUrl"]);
    assert_eq!(api.stub.sessions(), 1);
}

async fn a_fan_equips_what_they_own_and_their_profile_shows_it(
    store: impl Store + Clone + 'static,
) {
    let api = api(store.clone()).await;
    let body = r#"{"avatarFrame": "frame-gold"}"#;
    let refused = api
        .profile("fan", "PUT", "/api/me/cosmetics", Some(body))
        .await;
    assert_eq!(
        (refused.status, refused.code()),
        (422, "cosmetic_not_owned")
    );
    fund(&store, "fan", 299).await;
    assert_eq!(
        api.order("fan", "k", "frame-gold", CASH_USD).await.status,
        201
    );
    let wrong_slot = r#"{"badge": "frame-gold"}"#;
    let refused = api
        .profile("fan", "PUT", "/api/me/cosmetics", Some(wrong_slot))
        .await;
    assert_eq!(
        (refused.status, refused.code()),
        (422, "cosmetic_not_owned")
    );
    let equipped = api
        .profile("fan", "PUT", "/api/me/cosmetics", Some(body))
        .await;
    assert_eq!(equipped.status, 200, "{}", equipped.body);
    let shown =
        serde_json::json!({"avatarFrame": "frame-gold", "lockerTheme": null, "badge": null});
    assert_eq!(equipped.body["cosmetics"], shown);
    let me = api.profile("fan", "GET", "/api/me", None).await;
    assert_eq!(me.body["cosmetics"], shown, "{}", me.body);
    // The public locker room shows them (read with the face, no second request).
    testkit::profiles::name(&store, "fan", "Framed", None).await;
    let state = Arc::new(LockerRoomsState { store });
    let room = call(
        locker_rooms_routes(),
        &state,
        ApiEvent::get("/api/locker-rooms/Framed").request(),
    )
    .await;
    let (status, room) = parts(&room);
    assert_eq!(
        (status, &room["lockerRoom"]["cosmetics"]),
        (200, &shown),
        "{room}"
    );
    let bare = api
        .profile("fan", "PUT", "/api/me/cosmetics", Some("{}"))
        .await;
    assert_eq!(bare.body["cosmetics"]["avatarFrame"], Value::Null);
}
