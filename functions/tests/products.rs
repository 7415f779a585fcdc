//! The real `products` binary (public `GET /api/products` and `GET /api/products/{productId}`),
//! run through a Lambda Runtime API emulator against moto_server: the shipped products listed in
//! pages and by type, cacheable by anyone, one product and a 404; it refuses to start without
//! its settings, and a DynamoDB outage is a 503.

use serde_json::{Value, json};
use testkit::events::ApiEvent;
use testkit::purchases::{Answer, Function, PurchaseEnv, fixture};

const BINARY: &str = env!("CARGO_BIN_EXE_products");

async fn spawn(env: &PurchaseEnv) -> Function {
    env.spawn(BINARY, &[("CURSOR_SECRET", testkit::CURSOR_SECRET)])
        .await
}

async fn get(function: &Function, path: &str, query: &str) -> Answer {
    function.call(&ApiEvent::get(path).query(query)).await
}

fn ids(answer: &Answer) -> Vec<&str> {
    answer.body["products"]
        .as_array()
        .unwrap_or_else(|| panic!("{answer:?}"))
        .iter()
        .map(|product| product["id"].as_str().unwrap())
        .collect()
}

fn assert_public(answer: &Answer) {
    assert_eq!(answer.status, 200, "{answer:?}");
    let cache = answer.header("cache-control").unwrap_or_default();
    assert!(cache.starts_with("public"), "{answer:?}");
}

#[tokio::test]
async fn the_shipped_products_list_in_pages_and_by_type_cacheable_by_anyone() {
    let env = PurchaseEnv::new().await;
    testkit::products::seed(&env.store, &testkit::products::shipped()).await;
    let function = spawn(&env).await;

    let first = get(&function, "/api/products", "limit=4").await;
    assert_public(&first);
    assert_eq!(
        ids(&first),
        [
            "badge-founder",
            "cash-fan-pack",
            "cash-launch-week",
            "cash-starter"
        ]
    );
    let cursor = first.body["nextCursor"].as_str().unwrap();
    let second = get(
        &function,
        "/api/products",
        &format!("limit=4&cursor={cursor}"),
    )
    .await;
    assert_public(&second);
    assert_eq!(ids(&second), ["frame-gold", "theme-hardwood"]);
    assert_eq!(second.body["nextCursor"], Value::Null);

    for (kind, expected) in [
        (
            "cash_bundle",
            ["cash-fan-pack", "cash-launch-week", "cash-starter"],
        ),
        (
            "cosmetic",
            ["badge-founder", "frame-gold", "theme-hardwood"],
        ),
    ] {
        let listed = get(&function, "/api/products", &format!("type={kind}")).await;
        assert_public(&listed);
        assert_eq!(ids(&listed), expected, "{kind}");
        assert!(
            listed.body["products"]
                .as_array()
                .unwrap()
                .iter()
                .all(|product| product["type"] == kind)
        );
    }
    // A cursor is bound to its filter; an unknown type is refused.
    let crossed = get(
        &function,
        "/api/products",
        &format!("type=cosmetic&limit=4&cursor={cursor}"),
    )
    .await;
    assert_eq!(
        (crossed.status, crossed.code()),
        (400, Some("invalid_cursor"))
    );
    let hat = get(&function, "/api/products", "type=hat").await;
    assert_eq!((hat.status, hat.code()), (400, Some("invalid_query")));

    // `infra/events/products.json` and `products.get-product.json`.
    let all = function.call_json(fixture("products", None)).await;
    assert_public(&all);
    assert_eq!(ids(&all).len(), 6);
    let one = function
        .call_json(fixture("products.get-product", None))
        .await;
    assert_public(&one);
    let frame = &one.body["product"];
    assert_eq!(frame["id"], "frame-gold");
    assert_eq!(
        frame["grants"],
        json!({"kind": "cosmetic", "slot": "avatar_frame"})
    );
    assert_eq!(frame["prices"], json!([{"amount": 299, "currency": "USD"}]));
    assert_eq!(frame["pay"], json!(["cash", "card"]));
    assert_eq!(frame["maxPerFan"], 1);

    let bundle = get(&function, "/api/products/cash-fan-pack", "").await;
    assert_public(&bundle);
    assert_eq!(
        bundle.body["product"]["grants"],
        json!({"kind": "cash", "amount": 2000, "bonus": 200, "currency": "USD"})
    );
    let none = get(&function, "/api/products/no-such", "").await;
    assert_eq!((none.status, none.code()), (404, Some("product_not_found")));
}

#[tokio::test]
async fn a_dynamodb_outage_is_a_503_with_retry_after() {
    let (env, proxy) = PurchaseEnv::behind_proxy().await;
    testkit::products::seed(&env.store, &testkit::products::shipped()).await;
    let function = spawn(&env).await;
    for path in ["/api/products", "/api/products/frame-gold"] {
        testkit::purchases::assert_outage_then_recovery(&function, &proxy, &ApiEvent::get(path))
            .await;
    }
}

#[tokio::test]
async fn missing_settings_stop_the_function_with_a_clear_message() {
    testkit::runtime_api::assert_init_fails_naming(BINARY, &[], "TABLE_NAME").await;
    testkit::mine::assert_init_needs_cursor_secret(BINARY).await;
}
