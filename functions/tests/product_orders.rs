//! The real `product-orders` binary (`POST /api/products/{productId}/orders`, `GET /api/me/orders`
//! and `GET /api/me/orders/{orderId}`), run through a Lambda Runtime API emulator against
//! moto_server, the JWKS stub and the Stripe stub. The orders' guarantees under concurrency hold
//! through eight instances of the binary on one table, behind the proxy that applies moto's
//! requests one at a time as DynamoDB applies each: eight orders with one key place one, a stock
//! of 3 sells 3 to eight fans, a limit of 2 sells one fan 2 of eight orders, a paid card order's
//! event delivered eight times over eight instances of `stripe-webhook` grants once; after each
//! race every fan's ledger adds up to their balance.

use std::collections::BTreeMap;
use std::sync::Arc;

use domain::cash::ledger::EntryKind;
use serde_json::Value;
use testkit::events::ApiEvent;
use testkit::products::{balance_matching_ledger, entries, limited};
use testkit::purchases::{Answer, Function, PurchaseEnv, credit, fixture};
use testkit::stripe::{StripeStub, WEBHOOK_SECRET, now, order_session_event, python_signature};
use testkit::tokens::token;

const BINARY: &str = env!("CARGO_BIN_EXE_product-orders");
/// Instances of the binary, and orders in each race.
const INSTANCES: usize = 8;
const WEBHOOK: &str = env!("CARGO_BIN_EXE_stripe-webhook");
const CASH_USD: &str = r#"{"pay": "cash", "currency": "USD"}"#;
const CARD_USD: &str = r#"{"pay": "card", "currency": "USD"}"#;
/// The price of every product here (`testkit::products::limited`), in USD cents.
const PRICE: u64 = 299;

/// The binary with its settings, opening Checkout Sessions on `stripe`.
async fn spawn_with(env: &PurchaseEnv, stripe: &StripeStub) -> Function {
    let vars = stripe.function_vars();
    let mut extra: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    extra.push(("CURSOR_SECRET", testkit::CURSOR_SECRET));
    env.spawn(BINARY, &extra).await
}

/// The binary for Cash orders and reads, which never call Stripe (its stub is gone).
async fn spawn(env: &PurchaseEnv) -> Function {
    spawn_with(env, &StripeStub::start().await).await
}

fn order(fan: &str, key: &str, product: &str, body: &str) -> ApiEvent {
    ApiEvent::post(&format!("/api/products/{product}/orders"))
        .bearer(&token(fan, None))
        .header("Idempotency-Key", key)
        .json(body)
}

fn mine(fan: &str, path: &str) -> ApiEvent {
    ApiEvent::get(path).bearer(&token(fan, None))
}

/// A new table (reached one request at a time) holding `product`, eight instances of the binary
/// on it, and `fans` credited `cash` USD cents each.
async fn race_track(
    product: domain::products::Product,
    fans: &[String],
    cash: u64,
) -> (
    testkit::fault_proxy::FaultProxy,
    PurchaseEnv,
    Arc<Vec<Function>>,
) {
    let (one_at_a_time, env) = PurchaseEnv::atomic().await;
    testkit::products::seed(&env.store, &[product]).await;
    for fan in fans {
        credit(&env.store, fan, cash, "USD", &format!("grant-{fan}")).await;
    }
    let mut functions = Vec::new();
    for _ in 0..INSTANCES {
        functions.push(spawn(&env).await);
    }
    (one_at_a_time, env, Arc::new(functions))
}

/// Eight Cash orders of `product` at once, the i-th by the fan and with the key `who(i)` names,
/// sent to the i-th instance; the answers as they came.
async fn race(
    functions: &Arc<Vec<Function>>,
    product: &str,
    who: impl Fn(usize) -> (String, String),
) -> Vec<Answer> {
    testkit::at_once(INSTANCES, |i| {
        let functions = functions.clone();
        let (fan, key) = who(i);
        let event = order(&fan, &key, product, CASH_USD);
        async move { functions[i].call(&event).await }
    })
    .await
}

/// How many answers had each status and error code (`""` for none).
fn tally(answers: &[Answer]) -> BTreeMap<(u16, String), usize> {
    let mut counts = BTreeMap::new();
    for answer in answers {
        let code = answer.code().unwrap_or_default().to_owned();
        *counts.entry((answer.status, code)).or_default() += 1;
    }
    counts
}

fn expected(counts: &[(u16, &str, usize)]) -> BTreeMap<(u16, String), usize> {
    counts
        .iter()
        .map(|(status, code, n)| ((*status, (*code).to_owned()), *n))
        .collect()
}

fn fans(count: usize) -> Vec<String> {
    (0..count).map(|i| format!("fan-{i}")).collect()
}

/// `fan`'s debits in USD, as (amount, order id).
async fn debits(store: &store::DynamoStore, fan: &str) -> Vec<(u64, String)> {
    entries(store, fan, "USD", EntryKind::Debit).await
}

fn order_id(answer: &Answer) -> String {
    answer.body["order"]["id"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn eight_orders_with_one_key_over_eight_instances_place_and_debit_one() {
    let fan = fans(1);
    let (_one_at_a_time, env, functions) =
        race_track(limited("unlimited", None, None), &fan, 1000).await;
    let answers = race(&functions, "unlimited", |_| {
        ("fan-0".to_owned(), "one-key".to_owned())
    })
    .await;
    println!("one key: {:?}", tally(&answers));
    let mut replayed = 0;
    for answer in &answers {
        assert_eq!(answer.status, 201, "{answer:?}");
        assert_eq!(answer.body["order"], answers[0].body["order"]);
        replayed += usize::from(answer.header("idempotent-replayed") == Some("true"));
    }
    assert_eq!(
        replayed,
        INSTANCES - 1,
        "one order placed, the others answered it"
    );
    let id = order_id(&answers[0]);
    assert_eq!(answers[0].body["order"]["status"], "completed");
    assert_eq!(
        balance_matching_ledger(&env.store, "fan-0", "USD").await,
        1000 - PRICE
    );
    assert_eq!(debits(&env.store, "fan-0").await, [(PRICE, id.clone())]);
    let listed = functions[0].call(&mine("fan-0", "/api/me/orders")).await;
    assert_eq!(listed.status, 200, "{listed:?}");
    assert_eq!(listed.body["orders"].as_array().unwrap().len(), 1);
    assert_eq!(listed.body["orders"][0]["id"], id.as_str());
}

#[tokio::test]
async fn a_stock_of_three_sells_three_to_eight_fans_racing_over_eight_instances() {
    let fans = fans(INSTANCES);
    let (_one_at_a_time, env, functions) =
        race_track(limited("three-left", Some(3), None), &fans, 1000).await;
    let answers = race(&functions, "three-left", |i| {
        (format!("fan-{i}"), "mine".to_owned())
    })
    .await;
    println!("stock of 3: {:?}", tally(&answers));
    assert_eq!(
        tally(&answers),
        expected(&[(201, "", 3), (409, "sold_out", 5)])
    );
    let mut sold = Vec::new();
    for fan in &fans {
        let balance = balance_matching_ledger(&env.store, fan, "USD").await;
        let paid = debits(&env.store, fan).await;
        match balance {
            1000 => assert!(paid.is_empty(), "{fan}: {paid:?}"),
            701 => sold.extend(paid),
            other => panic!("{fan} holds {other}"),
        }
    }
    let winners: Vec<(u64, String)> = answers
        .iter()
        .filter(|answer| answer.status == 201)
        .map(|answer| (PRICE, order_id(answer)))
        .collect();
    sold.sort();
    let mut winners = winners;
    winners.sort();
    assert_eq!(sold, winners, "each sale debited once, naming its order");
    let late = functions[0]
        .call(&order("late-fan", "k", "three-left", CASH_USD))
        .await;
    assert_eq!((late.status, late.code()), (409, Some("sold_out")));
}

#[tokio::test]
async fn a_limit_of_two_sells_one_fan_two_of_eight_racing_orders() {
    let fan = fans(1);
    let (_one_at_a_time, env, functions) =
        race_track(limited("two-each", None, Some(2)), &fan, 10_000).await;
    let answers = race(&functions, "two-each", |i| {
        ("fan-0".to_owned(), format!("key-{i}"))
    })
    .await;
    println!("limit of 2: {:?}", tally(&answers));
    assert_eq!(
        tally(&answers),
        expected(&[(201, "", 2), (409, "purchase_limit_reached", 6)])
    );
    assert_eq!(
        balance_matching_ledger(&env.store, "fan-0", "USD").await,
        10_000 - 2 * PRICE
    );
    assert_eq!(debits(&env.store, "fan-0").await.len(), 2);
    let listed = functions[0].call(&mine("fan-0", "/api/me/orders")).await;
    assert_eq!(listed.body["orders"].as_array().unwrap().len(), 2);
}

/// `infra/events/product-orders.json` (a Cash order of the shipped `frame-gold`) and
/// `product-orders.list-my-orders.json`, with a token for `me`; the order read back, and
/// another fan's read of it refused.
#[tokio::test]
async fn the_event_fixtures_order_and_list_and_the_fan_reads_the_order() {
    let env = PurchaseEnv::new().await;
    testkit::products::seed(&env.store, &testkit::products::shipped()).await;
    credit(&env.store, "me", 1000, "USD", "fixture-grant").await;
    let function = spawn(&env).await;
    let me = token("me", None);
    let placed = function
        .call_json(fixture("product-orders", Some(&me)))
        .await;
    assert_eq!(placed.status, 201, "{placed:?}");
    assert_eq!(placed.body["order"]["status"], "completed");
    assert_eq!(placed.body["order"]["productId"], "frame-gold");
    let id = order_id(&placed);
    let location = format!("/api/me/orders/{id}");
    assert_eq!(placed.header("location"), Some(location.as_str()));
    let again = function
        .call_json(fixture("product-orders", Some(&me)))
        .await;
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    assert_eq!(balance_matching_ledger(&env.store, "me", "USD").await, 701);

    let listed = function
        .call_json(fixture("product-orders.list-my-orders", Some(&me)))
        .await;
    assert_eq!(listed.status, 200, "{listed:?}");
    assert_eq!(listed.body["orders"][0]["id"], id.as_str());
    let read = function.call(&mine("me", &location)).await;
    assert_eq!((read.status, &read.body), (200, &placed.body));
    let theirs = function.call(&mine("someone", &location)).await;
    assert_eq!(
        (theirs.status, theirs.code()),
        (404, Some("order_not_found"))
    );
    let bundle = function
        .call(&order("me", "bundle", "cash-starter", CASH_USD))
        .await;
    assert_eq!(
        (bundle.status, bundle.code()),
        (400, Some("unsupported_payment_method"))
    );
}

/// A card order of a Cash bundle: pending, with the Checkout Session Stripe was asked for its
/// price; Stripe busy is a 503 and the same key later opens one session.
#[tokio::test]
async fn a_card_order_opens_one_checkout_session_for_its_price() {
    let env = PurchaseEnv::new().await;
    testkit::products::seed(&env.store, &testkit::products::shipped()).await;
    let stripe = StripeStub::start().await;
    let function = spawn_with(&env, &stripe).await;
    let card = order("fan-1", "card-1", "cash-fan-pack", CARD_USD);
    stripe.fail_next(&[429]);
    function.call(&card).await.assert_unavailable();
    let placed = function.call(&card).await;
    assert_eq!(placed.status, 201, "{placed:?}");
    assert_eq!(placed.body["order"]["status"], "pending");
    let id = order_id(&placed);
    let received = stripe.received();
    assert_eq!(received.len(), 2, "the busy try and the one that opened it");
    let reference = format!("order:{id}");
    for (field, value) in [
        ("line_items[0][price_data][unit_amount]", "1999"),
        ("line_items[0][price_data][currency]", "usd"),
        (
            "line_items[0][price_data][product_data][name]",
            "Fan Cash Bundle",
        ),
        ("client_reference_id", reference.as_str()),
        ("metadata[orderId]", id.as_str()),
    ] {
        assert_eq!(received[1].field(field), Some(value), "{field}");
    }
    let again = function.call(&card).await;
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    assert_eq!(
        again.body["order"]["checkoutUrl"],
        placed.body["order"]["checkoutUrl"]
    );
    assert!(placed.body["order"]["checkoutUrl"].is_string());
    assert_eq!(stripe.sessions(), 1);
    assert_eq!(
        balance_matching_ledger(&env.store, "fan-1", "USD").await,
        0,
        "nothing credited before the payment"
    );
    assert_eq!(placed.body["order"]["grants"]["bonus"], Value::from(200));
}

/// A paid card order of the shipped Cash bundle: Stripe's `checkout.session.completed`
/// delivered eight times at once over eight instances of the real `stripe-webhook` binary, on
/// DynamoDB behind the one-at-a-time proxy, completes it and credits `amount + bonus` once, in
/// the ledger naming the order.
#[tokio::test]
async fn a_paid_card_order_is_granted_once_over_eight_webhook_redeliveries() {
    let (_one_at_a_time, env) = PurchaseEnv::atomic().await;
    testkit::products::seed(&env.store, &testkit::products::shipped()).await;
    let stripe = StripeStub::start().await;
    let orders = spawn_with(&env, &stripe).await;
    let placed = orders
        .call(&order("fan-1", "card-1", "cash-fan-pack", CARD_USD))
        .await;
    assert_eq!(placed.status, 201, "{placed:?}");
    let id = order_id(&placed);
    let checkout = placed.body["order"]["checkoutUrl"].as_str().unwrap();
    let session = checkout.rsplit('/').next().unwrap();
    let event = order_session_event(
        ("evt_paid_1", "checkout.session.completed", session),
        ("fan-1", &id),
        1999,
        "usd",
        "paid",
    );
    let delivery = ApiEvent::post("/api/webhooks/stripe")
        .header("content-type", "application/json")
        .header(
            "stripe-signature",
            &python_signature(&event, WEBHOOK_SECRET, now()),
        )
        .body(event);
    let mut webhooks = Vec::new();
    for _ in 0..INSTANCES {
        webhooks.push(
            env.spawn(WEBHOOK, &[("STRIPE_WEBHOOK_SECRET", WEBHOOK_SECRET)])
                .await,
        );
    }
    let webhooks = Arc::new(webhooks);
    let answers = testkit::at_once(INSTANCES, |i| {
        let (webhooks, delivery) = (webhooks.clone(), delivery.clone());
        async move { webhooks[i].call(&delivery).await }
    })
    .await;
    println!("redeliveries: {:?}", tally(&answers));
    for answer in &answers {
        assert_eq!(
            (answer.status, &answer.body),
            (200, &serde_json::json!({"received": true})),
            "{answer:?}"
        );
    }
    assert_eq!(
        balance_matching_ledger(&env.store, "fan-1", "USD").await,
        2200,
        "2000 and its bonus of 200"
    );
    assert_eq!(
        entries(&env.store, "fan-1", "USD", EntryKind::Credit).await,
        [(2200, id.clone())]
    );
    let read = orders
        .call(&mine("fan-1", &format!("/api/me/orders/{id}")))
        .await;
    assert_eq!(read.body["order"]["status"], "completed", "{read:?}");
}

testkit::signed_in_function_basics!(BINARY, spawn, "/api/me/orders");

#[tokio::test]
async fn missing_order_settings_stop_the_function_with_a_clear_message() {
    let env = PurchaseEnv::new().await;
    let stripe = StripeStub::start().await;
    let mut vars = stripe.function_vars();
    vars.push(("CURSOR_SECRET", testkit::CURSOR_SECRET.to_owned()));
    for missing in ["CURSOR_SECRET", "STRIPE_SECRET_KEY", "TOPUP_SUCCESS_URL"] {
        let extra: Vec<(&str, &str)> = vars
            .iter()
            .filter(|(name, _)| *name != missing)
            .map(|(k, v)| (*k, v.as_str()))
            .collect();
        let all = env.vars(&extra);
        let all: Vec<(&str, &str)> = all.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        testkit::runtime_api::assert_init_fails_naming(BINARY, &all, missing).await;
    }
}
