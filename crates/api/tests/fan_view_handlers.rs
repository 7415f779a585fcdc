//! The fan's own view over API Gateway events, on both stores: every bad query is a 400 with its
//! code, cursors work only for the caller and the filters they were issued with, and a fan sees
//! only their own purchases, items, balances and ledger, each purchase as `GET` of it answers.

use api::http::routes::{get_purchase_routes, me_cash_routes, me_purchases_routes};
use api::state::MeState;
use domain::timestamp::Timestamp;
use serde_json::Value;
use std::sync::Arc;
use store::purchases::SeedPurchases;
use store::{MemoryStore, Store};
use testkit::events::{self, ApiEvent, parts};
use testkit::tokens::token;

fn me_state<S>(store: S) -> Arc<MeState<S>> {
    Arc::new(MeState {
        store,
        verifier: testkit::tokens::verifier(),
        cursors: testkit::cursor_signer(),
        revealed: Default::default(),
    })
}

/// `GET path?query` as `user` (no token when `None`), through the function that serves it.
async fn call(
    state: &Arc<MeState<impl Store + 'static>>,
    user: Option<&str>,
    path: &str,
    query: &str,
) -> (u16, Value) {
    let mut event = ApiEvent::get(path).query(query);
    if let Some(user) = user {
        event = event.bearer(&token(user, None));
    }
    let request = event.request();
    let response = if path.starts_with("/api/me/cash") {
        events::call(me_cash_routes(), state, request).await
    } else {
        events::call(me_purchases_routes(), state, request).await
    };
    parts(&response)
}

fn code(answer: &(u16, Value)) -> (u16, &str) {
    (answer.0, answer.1["error"]["code"].as_str().unwrap_or("-"))
}

#[tokio::test]
async fn bad_queries_are_400_with_their_code_and_no_token_is_401() {
    let state = me_state(MemoryStore::default());
    let long_rarity = "r".repeat(33);
    for (path, query, expected) in [
        ("/api/me/purchases", "status=paid", (400, "invalid_query")),
        ("/api/me/purchases", "status=", (400, "invalid_query")),
        ("/api/me/purchases", "limit=0", (400, "invalid_limit")),
        ("/api/me/purchases", "limit=101", (400, "invalid_limit")),
        ("/api/me/purchases", "limit=x", (400, "invalid_limit")),
        ("/api/me/purchases", "packId=a%20b", (400, "invalid_query")),
        (
            "/api/me/purchases",
            &format!("packId={}", "a".repeat(65)),
            (400, "invalid_query"),
        ),
        (
            "/api/me/purchases",
            "status=opened&status=opened",
            (400, "invalid_query"),
        ),
        ("/api/me/purchases", "cursor=abc", (400, "invalid_cursor")),
        ("/api/me/items", "limit=101", (400, "invalid_limit")),
        ("/api/me/items", "rarity=", (400, "invalid_query")),
        (
            "/api/me/items",
            &format!("rarity={long_rarity}"),
            (400, "invalid_query"),
        ),
        ("/api/me/items", "packId=p&packId=q", (400, "invalid_query")),
        ("/api/me/items", "cursor=", (400, "invalid_cursor")),
        (
            "/api/me/cash/transactions",
            "currency=usd",
            (400, "invalid_query"),
        ),
        (
            "/api/me/cash/transactions",
            "limit=0",
            (400, "invalid_limit"),
        ),
        (
            "/api/me/cash/transactions",
            "cursor=a.b",
            (400, "invalid_cursor"),
        ),
    ] {
        let answer = call(&state, Some("fan-1"), path, query).await;
        assert_eq!(code(&answer), expected, "{path}?{query}: {}", answer.1);
    }
    for path in [
        "/api/me/purchases",
        "/api/me/items",
        "/api/me/cash",
        "/api/me/cash/transactions",
    ] {
        assert_eq!(
            code(&call(&state, None, path, "").await),
            (401, "missing_token")
        );
        // Known parameters with good values, and none at all, are fine.
        assert_eq!(call(&state, Some("fan-1"), path, "").await.0, 200, "{path}");
    }
    for (path, query) in [
        ("/api/me/purchases", "status=completed&packId=p&limit=100"),
        ("/api/me/items", "packId=p&rarity=rare&limit=1"),
        ("/api/me/cash/transactions", "currency=USD&limit=1"),
    ] {
        let (status, body) = call(&state, Some("fan-1"), path, query).await;
        assert_eq!(status, 200, "{path}?{query}: {body}");
        assert_eq!(body["nextCursor"], Value::Null);
    }
}

/// Two fans with interleaved purchases (some opened) and Cash; `fan-1` has more than a page.
async fn seeded<S: Store + SeedPurchases + 'static>(store: S) -> Arc<MeState<S>> {
    let now = Timestamp::now();
    store
        .seed_purchases(&testkit::mine::purchases("fan-1", 30, 0, false, now))
        .await
        .unwrap();
    store
        .seed_purchases(&testkit::mine::purchases("fan-2", 30, 30, false, now))
        .await
        .unwrap();
    for (user, reference) in [("fan-1", "g1"), ("fan-1", "g2"), ("fan-2", "g3")] {
        let credit = domain::cash::parse_credit(user, "500", "USD", reference).unwrap();
        store.credit_cash(&credit, now).await.unwrap();
    }
    me_state(store)
}

/// Every entry of `list` over the pages of `path?query` for `user`.
async fn every_page(
    state: &Arc<MeState<impl Store + 'static>>,
    user: &str,
    path: &str,
    query: &str,
    list: &str,
) -> Vec<Value> {
    testkit::mine::every_page(query, list, |query| async move {
        call(state, Some(user), path, &query).await
    })
    .await
}

async fn cursors_are_bound_to_their_caller_and_filters(
    state: Arc<MeState<impl Store + SeedPurchases + 'static>>,
) {
    for (path, query) in [
        ("/api/me/purchases", "limit=3"),
        ("/api/me/items", "limit=2"),
        ("/api/me/cash/transactions", "limit=1"),
    ] {
        let (status, body) = call(&state, Some("fan-1"), path, query).await;
        assert_eq!(status, 200, "{body}");
        let cursor = body["nextCursor"]
            .as_str()
            .expect("more than a page")
            .to_owned();
        let next = |user: &'static str, query: String| {
            let state = &state;
            async move { call(state, Some(user), path, &query).await }
        };
        assert_eq!(
            next("fan-1", format!("{query}&cursor={cursor}")).await.0,
            200
        );
        // Another fan's cursor.
        assert_eq!(
            code(&next("fan-2", format!("{query}&cursor={cursor}")).await),
            (400, "invalid_cursor"),
            "{path}: swapped"
        );
        // Other filters (the limit is no filter).
        let other_filter = match path {
            "/api/me/purchases" => "status=opened",
            "/api/me/items" => "rarity=rare",
            _ => "currency=USD",
        };
        assert_eq!(
            code(&next("fan-1", format!("{other_filter}&cursor={cursor}")).await),
            (400, "invalid_cursor"),
            "{path}: other filters"
        );
        assert_eq!(
            next("fan-1", format!("limit=50&cursor={cursor}")).await.0,
            200
        );
        // Forged: one character of the position changed, or the tag.
        let (payload, tag) = cursor.split_once('.').unwrap();
        let flipped = |text: &str| {
            let mut chars: Vec<char> = text.chars().collect();
            chars[3] = if chars[3] == 'A' { 'B' } else { 'A' };
            chars.into_iter().collect::<String>()
        };
        for forged in [
            format!("{}.{tag}", flipped(payload)),
            format!("{payload}.{}", flipped(tag)),
        ] {
            assert_eq!(
                code(&next("fan-1", format!("{query}&cursor={forged}")).await),
                (400, "invalid_cursor"),
                "{path}: forged"
            );
        }
        // A cursor of another list.
        let other_list = if path == "/api/me/items" {
            "/api/me/purchases"
        } else {
            "/api/me/items"
        };
        assert_eq!(
            code(
                &call(
                    &state,
                    Some("fan-1"),
                    other_list,
                    &format!("cursor={cursor}")
                )
                .await
            ),
            (400, "invalid_cursor"),
            "{path} cursor on {other_list}"
        );
    }
}

async fn a_fan_sees_only_their_own_each_purchase_as_get_answers_it(
    state: Arc<MeState<impl Store + SeedPurchases + Clone + 'static>>,
) {
    let purchases = every_page(&state, "fan-1", "/api/me/purchases", "limit=7", "purchases").await;
    assert_eq!(purchases.len(), 30);
    assert!(
        purchases
            .iter()
            .all(|p| p["id"].as_str().unwrap().starts_with("fan-1-"))
    );
    let items = every_page(&state, "fan-1", "/api/me/items", "limit=4", "items").await;
    assert_eq!(items.len(), 6 * 5, "six opened purchases of five items");
    assert!(
        items
            .iter()
            .all(|i| i["purchaseId"].as_str().unwrap().starts_with("fan-1-"))
    );
    let ledger = every_page(
        &state,
        "fan-1",
        "/api/me/cash/transactions",
        "limit=1",
        "transactions",
    )
    .await;
    assert_eq!(ledger.len(), 2);
    for entry in &ledger {
        assert_eq!(entry["type"], "credit");
        assert_eq!(entry["purchaseId"], Value::Null);
        assert_eq!(entry["amount"], 500);
        assert_eq!(entry["currency"], "USD");
    }
    let (_, cash) = call(&state, Some("fan-1"), "/api/me/cash", "").await;
    assert_eq!(
        cash,
        serde_json::json!({"balances": [{"amount": 1000, "currency": "USD"}]})
    );
    let (_, none) = call(&state, Some("fan-3"), "/api/me/cash", "").await;
    assert_eq!(none, serde_json::json!({"balances": []}));
    // Each purchase as GET of it answers (but for timing: GET computes `expired` at its own
    // now, so compare purchases whose status cannot change in between).
    let get_state = Arc::new(api::state::PurchaseState {
        store: state.store.clone(),
        verifier: testkit::tokens::verifier(),
        hold: std::time::Duration::from_secs(600),
        max_body_bytes: 1024,
        policy: testkit::purchases::ROOMY,
        human: None,
    });
    for listed in purchases.iter().filter(|p| p["status"] != "reserved") {
        let path = format!(
            "/api/packs/{}/purchases/{}",
            listed["packId"].as_str().unwrap(),
            listed["id"].as_str().unwrap()
        );
        let request = ApiEvent::get(&path).bearer(&token("fan-1", None)).request();
        let (status, body) = parts(&events::call(get_purchase_routes(), &get_state, request).await);
        assert_eq!(status, 200, "{body}");
        assert_eq!(&body["purchase"], listed);
    }
}

#[tokio::test]
async fn cursors_are_bound_on_memory() {
    cursors_are_bound_to_their_caller_and_filters(seeded(MemoryStore::default()).await).await;
}

#[tokio::test]
async fn cursors_are_bound_on_dynamodb() {
    let store = testkit::moto::shared_table().await;
    cursors_are_bound_to_their_caller_and_filters(seeded(store).await).await;
}

#[tokio::test]
async fn a_fan_sees_only_their_own_on_memory() {
    a_fan_sees_only_their_own_each_purchase_as_get_answers_it(seeded(MemoryStore::default()).await)
        .await;
}

#[tokio::test]
async fn a_fan_sees_only_their_own_on_dynamodb() {
    let store = testkit::moto::shared_table().await;
    a_fan_sees_only_their_own_each_purchase_as_get_answers_it(seeded(store).await).await;
}

/// A Cash order's debit shows in the ledger naming the order; other entries name none.
#[tokio::test]
async fn the_ledger_names_the_order_a_debit_paid_for() {
    use domain::products::order::{Order, order_id};
    use store::products::{PlaceOrder, SeedProducts};
    let store = MemoryStore::default();
    testkit::purchases::credit(&store, "fan", 500, "USD", "grant-1").await;
    let product: domain::products::Product = serde_json::from_value(serde_json::json!({
        "id": "frame", "type": "cosmetic", "name": "Frame",
        "prices": [{"amount": 300, "currency": "USD"}],
        "grants": {"kind": "cosmetic", "slot": "avatar_frame"},
        "pay": ["cash"], "status": "active"
    }))
    .unwrap();
    store
        .seed_products(std::slice::from_ref(&product))
        .await
        .unwrap();
    let fan = testkit::ids::user("fan");
    let (id, price) = (order_id(&fan, "k"), product.prices[0].clone());
    let order = Order::place(
        id,
        fan,
        &product,
        price,
        domain::products::PayMethod::Cash,
        Timestamp::now(),
    );
    store.place_order(&order, &product).await.unwrap();
    let state = me_state(store);
    let (status, body) = call(&state, Some("fan"), "/api/me/cash/transactions", "").await;
    assert_eq!(status, 200, "{body}");
    let entries = body["transactions"].as_array().unwrap();
    assert_eq!(
        (
            &entries[0]["type"],
            &entries[0]["amount"],
            &entries[0]["orderId"]
        ),
        (
            &Value::from("debit"),
            &Value::from(300),
            &Value::from(order.id.as_str())
        )
    );
    assert_eq!(
        (&entries[1]["type"], &entries[1]["orderId"]),
        (&Value::from("credit"), &Value::Null)
    );
}
