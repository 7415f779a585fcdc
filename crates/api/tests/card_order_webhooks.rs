//! A card order's Checkout Session and Stripe's webhook through the handlers: the session made
//! against the Stripe stub (which checks the order's form), then events signed by Python
//! (`testkit::stripe`) posted to the webhook's router on a store: a paid order is granted once
//! whatever the redeliveries; an expired one gives its unit back once and a payment after that
//! grants nothing (counted); a session that does not match its order changes nothing; a store
//! failure is a 503 that Stripe's retry recovers from.

use crate::top_ups_api::{Api, COMPLETED, EXPIRED, FAILED, SUCCEEDED, api, behind_fault_proxy};

use domain::ids::ProductId;
use domain::products::order::{Order, OrderStatus};
use domain::products::{Grant, Product, Slot};
use store::MemoryStore;
use store::cash::GetBalance;
use store::metrics::{Metric, record};
use store::products::{FanCosmetics, OrderError, Placed, ProductStore, SeedProducts};
use testkit::ids::user;
use testkit::products::{self, by_card, card_order};
use testkit::stripe::order_session_event;

/// A bundle of 1,000 + 100 USD cents for 999 by card, 2 in stock, 1 per fan.
fn bundle() -> Product {
    let grants = Grant::Cash {
        amount: 1000,
        bonus: 100,
        currency: "USD".into(),
    };
    by_card("bundle", (999, grants), Some(2), Some(1))
}

/// An avatar frame for 999 by card, 1 in stock, 1 per fan.
fn frame() -> Product {
    by_card("frame", (999, products::frame()), Some(1), Some(1))
}

/// The webhook's router and the Stripe stub on a new in-memory store holding `products`.
async fn on_memory(products: &[Product]) -> (MemoryStore, Api<MemoryStore>) {
    let store = MemoryStore::default();
    store.seed_products(products).await.unwrap();
    (store.clone(), api(store).await)
}

/// A card order by `fan` with `key` of `product`, placed, its session made by Stripe (the stub)
/// and stored: as stored.
async fn placed<S: ProductStore>(api: &Api<S>, fan: &str, key: &str, product: &Product) -> Order {
    let store = &api.top_ups.store;
    let order = card_order(fan, key, product);
    assert_eq!(
        store.place_order(&order, product).await,
        Ok(Placed::Created(order.clone()))
    );
    let stripe = &api.top_ups.stripe;
    let checkout = stripe
        .create_order_checkout_session(&order, &api.top_ups.return_urls)
        .await
        .unwrap();
    store
        .set_order_checkout(&order.user_id, &order.id, &checkout)
        .await
        .unwrap()
}

/// A signed event of `kind` about `order`'s own session, paying `amount`.
fn event(event_id: &str, kind: &str, order: &Order, amount: u64, status: &str) -> String {
    let session = order
        .checkout
        .as_ref()
        .expect("a session")
        .session_id
        .as_str();
    order_session_event(
        (event_id, kind, session),
        (order.user_id.as_str(), order.id.as_str()),
        amount,
        "usd",
        status,
    )
}

async fn stored<S: ProductStore>(api: &Api<S>, order: &Order) -> Order {
    let store = &api.top_ups.store;
    store
        .get_order(&order.user_id, &order.id)
        .await
        .unwrap()
        .unwrap()
}

async fn order_places<S: ProductStore>(
    api: &Api<S>,
    fan: &str,
    key: &str,
    product: &Product,
) -> Result<(), OrderError> {
    let order = card_order(fan, key, product);
    api.top_ups
        .store
        .place_order(&order, product)
        .await
        .map(drop)
}

#[tokio::test]
async fn an_orders_session_is_made_with_its_product_price_and_names() {
    let bundle = bundle();
    let (_, api) = on_memory(std::slice::from_ref(&bundle)).await;
    let order = placed(&api, "fan", "k", &bundle).await;
    let received = api.stub.received();
    assert_eq!(received.len(), 1);
    let sent = &received[0];
    for (field, value) in [
        ("line_items[0][price_data][currency]", "usd"),
        ("line_items[0][price_data][unit_amount]", "999"),
        (
            "line_items[0][price_data][product_data][name]",
            "Product bundle",
        ),
        ("metadata[orderId]", order.id.as_str()),
        ("metadata[userId]", "fan"),
        ("adaptive_pricing[enabled]", "false"),
    ] {
        assert_eq!(sent.field(field), Some(value), "{field}");
    }
    let reference = format!("order:{}", order.id);
    assert_eq!(sent.field("client_reference_id"), Some(reference.as_str()));
    assert_eq!(sent.field("metadata[topUpId]"), None);
    let key = format!("fan-api-order-{}", order.id);
    assert_eq!(sent.header("idempotency-key"), Some(key.as_str()));
    assert_eq!(
        sent.field("expires_at"),
        Some(order.expires_at().unix_seconds().to_string().as_str())
    );
    // A retry of the same order gets the same session.
    let again = api
        .top_ups
        .stripe
        .create_order_checkout_session(&order, &api.top_ups.return_urls)
        .await
        .unwrap();
    assert_eq!(Some(again), order.checkout);
    assert_eq!(api.stub.sessions(), 1);
}

#[tokio::test]
async fn a_paid_order_is_granted_once_whatever_the_redeliveries() {
    let (bundle, frame) = (bundle(), frame());
    let (store, api) = on_memory(&[bundle.clone(), frame.clone()]).await;
    let order = placed(&api, "fan", "k", &bundle).await;
    let paid = event("evt_1", COMPLETED, &order, 999, "paid");
    let succeeded = event("evt_2", SUCCEEDED, &order, 999, "paid");
    let expired = event("evt_3", EXPIRED, &order, 999, "unpaid");
    for body in [&paid, &paid, &succeeded, &expired, &paid] {
        assert_eq!(api.deliver(body).await.status, 200);
    }
    assert_eq!(stored(&api, &order).await.status, OrderStatus::Completed);
    let balance = store.get_balance(&user("fan"), "USD").await.unwrap();
    assert_eq!(balance, 1100, "amount plus bonus, once");
    // A cosmetic by card: owned once paid.
    let cosmetic = placed(&api, "fan", "k2", &frame).await;
    let paid = event("evt_4", COMPLETED, &cosmetic, 999, "paid");
    for _ in 0..3 {
        assert_eq!(api.deliver(&paid).await.status, 200);
    }
    assert_eq!(
        store.owned_cosmetics(&user("fan")).await.unwrap(),
        [(frame.id.clone(), Slot::AvatarFrame)]
    );
}

#[tokio::test]
async fn an_expired_order_gives_its_unit_back_once_and_a_late_payment_grants_nothing() {
    let frame = frame();
    let (store, api) = on_memory(std::slice::from_ref(&frame)).await;
    let order = placed(&api, "fan", "k", &frame).await;
    assert_eq!(
        order_places(&api, "other", "k", &frame).await,
        Err(OrderError::SoldOut)
    );
    let expired = event("evt_1", EXPIRED, &order, 999, "unpaid");
    let failed = event("evt_2", FAILED, &order, 999, "unpaid");
    for body in [&expired, &expired, &failed] {
        assert_eq!(api.deliver(body).await.status, 200);
    }
    assert_eq!(stored(&api, &order).await.status, OrderStatus::Expired);
    // Its one unit came back once: one fan gets it, the next does not.
    assert_eq!(order_places(&api, "other", "k", &frame).await, Ok(()));
    assert_eq!(
        order_places(&api, "third", "k", &frame).await,
        Err(OrderError::SoldOut)
    );
    // Paid after all (an event delivered late): 200, nothing granted, counted for a person.
    let paid = event("evt_3", COMPLETED, &order, 999, "paid");
    let (answer, recorded) = record(api.deliver(&paid)).await;
    assert_eq!(answer.status, 200);
    assert_eq!(recorded.value(Metric::TopUpsUncredited), Some(1.0));
    assert!(
        store
            .owned_cosmetics(&user("fan"))
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(stored(&api, &order).await.status, OrderStatus::Expired);
}

#[tokio::test]
async fn a_session_that_does_not_match_its_order_changes_nothing() {
    let bundle = bundle();
    let (store, api) = on_memory(std::slice::from_ref(&bundle)).await;
    let order = placed(&api, "fan", "k", &bundle).await;
    let mut other_session = order.clone();
    other_session.checkout.as_mut().unwrap().session_id = "cs_test_other".into();
    for (body, unmatched) in [
        (event("evt_1", COMPLETED, &order, 998, "paid"), Some(1.0)),
        (
            event("evt_2", COMPLETED, &other_session, 999, "paid"),
            Some(1.0),
        ),
        (event("evt_3", EXPIRED, &other_session, 999, "unpaid"), None),
    ] {
        let (answer, recorded) = record(api.deliver(&body)).await;
        assert_eq!(answer.status, 200);
        assert_eq!(recorded.value(Metric::TopUpsUnmatched), unmatched);
    }
    assert_eq!(stored(&api, &order).await.status, OrderStatus::Pending);
    assert_eq!(store.get_balance(&user("fan"), "USD").await.unwrap(), 0);
    // An order this deployment does not know: 200, ignored.
    let mut unknown = card_order("fan", "never", &bundle);
    unknown.checkout = order.checkout.clone();
    let body = event("evt_4", COMPLETED, &unknown, 999, "paid");
    assert_eq!(api.deliver(&body).await.status, 200);
    assert_eq!(store.get_balance(&user("fan"), "USD").await.unwrap(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dynamodb_failure_on_an_order_is_a_503_so_that_stripe_retries() {
    let (proxy, through) = behind_fault_proxy().await;
    let api = api(through).await;
    // Its own product and fan: the table is shared with other tests.
    let mut bundle = bundle();
    bundle.id = ProductId::parse("bundle-503").unwrap();
    api.top_ups
        .store
        .seed_products(std::slice::from_ref(&bundle))
        .await
        .unwrap();
    let order = placed(&api, "fan-order-503", "k", &bundle).await;
    let paid = event("evt_1", COMPLETED, &order, 999, "paid");
    proxy.set(testkit::fault_proxy::Fault::Error(
        500,
        "InternalServerError",
    ));
    let failed = api.deliver(&paid).await;
    assert_eq!((failed.status, failed.code()), (503, "service_unavailable"));
    proxy.set(testkit::fault_proxy::Fault::None);
    assert_eq!(stored(&api, &order).await.status, OrderStatus::Pending);
    assert_eq!(api.deliver(&paid).await.status, 200);
    assert_eq!(stored(&api, &order).await.status, OrderStatus::Completed);
    let balance = api
        .top_ups
        .store
        .get_balance(&user("fan-order-503"), "USD")
        .await
        .unwrap();
    assert_eq!(balance, 1100);
}
