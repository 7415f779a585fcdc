//! The Products group on `local-api` as `scripts/local` runs it: the shipped products are listed
//! to anyone; the demo fan pays a cosmetic with the Cash they start with, equips it, and their
//! profile, orders and ledger show it; a fan's card order of a Cash bundle, paid (twice) on the
//! local Checkout page, credits its amount and bonus once and reads completed. Every API answer
//! is checked against `openapi.yaml`.

use crate::common;

use common::LocalApi;
use serde_json::{Value, json};

const ORDERS: &str = "/api/products/{productId}/orders";

fn ids(list: &Value) -> Vec<&str> {
    list.as_array()
        .unwrap_or_else(|| panic!("{list}"))
        .iter()
        .map(|entry| entry["id"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn the_demo_fan_buys_a_shipped_cosmetic_with_cash_and_wears_it() {
    let api = LocalApi::start().await;
    let client = reqwest::Client::new();
    let url = |path: &str| format!("{}{path}", api.base);

    let (status, listed) = api
        .call(client.get(url("/api/products")), "get", "/api/products")
        .await;
    assert_eq!(status, 200, "{listed}");
    // Every shipped product, by id.
    let mut shipped: Vec<String> = testkit::products::shipped()
        .iter()
        .map(|product| product.id.to_string())
        .collect();
    shipped.sort();
    assert_eq!(ids(&listed["products"]), shipped);
    let (_, cosmetics) = api
        .call(
            client.get(url("/api/products?type=cosmetic")),
            "get",
            "/api/products",
        )
        .await;
    assert_eq!(
        ids(&cosmetics["products"]),
        ["badge-founder", "frame-gold", "theme-hardwood"]
    );

    let demo = api.token("demo-user", None).await;
    let balance = || async {
        let (_, cash) = api.get_as(&demo, "/api/me/cash").await;
        let usd = cash["balances"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["currency"] == "USD");
        usd.map_or(0, |b| b["amount"].as_u64().unwrap())
    };
    let before = balance().await;
    let order = |key: &str| {
        client
            .post(url("/api/products/frame-gold/orders"))
            .bearer_auth(&demo)
            .header("idempotency-key", key)
            .json(&json!({"pay": "cash", "currency": "USD"}))
    };
    let (status, placed) = api.call(order("frame-1"), "post", ORDERS).await;
    assert_eq!(status, 201, "{placed}");
    assert_eq!(placed["order"]["status"], "completed");
    assert_eq!(placed["order"]["productName"], "Gold Avatar Frame");
    let id = placed["order"]["id"].as_str().unwrap().to_owned();
    // A retry pays nothing twice; a second frame is over the limit of one per fan.
    let (_, again) = api.call(order("frame-1"), "post", ORDERS).await;
    assert_eq!(again["order"]["id"], id.as_str());
    let (status, second) = api.call(order("frame-2"), "post", ORDERS).await;
    assert_eq!(
        (status, &second["error"]["code"]),
        (409, &json!("purchase_limit_reached"))
    );
    assert_eq!(balance().await, before - 299);

    let (status, mine) = api.get_as(&demo, "/api/me/orders").await;
    assert_eq!(status, 200, "{mine}");
    assert_eq!(ids(&mine["orders"]), [id.as_str()]);
    let (_, ledger) = api.get_as(&demo, "/api/me/cash/transactions").await;
    let debit = &ledger["transactions"][0];
    assert_eq!(
        (&debit["type"], &debit["amount"], &debit["orderId"]),
        (&json!("debit"), &json!(299), &json!(id)),
        "{ledger}"
    );

    let equip = |cosmetics: Value| {
        let request = client
            .put(url("/api/me/cosmetics"))
            .bearer_auth(&demo)
            .json(&cosmetics);
        api.call(request, "put", "/api/me/cosmetics")
    };
    let (status, equipped) = equip(json!({"avatarFrame": "frame-gold"})).await;
    assert_eq!(status, 200, "{equipped}");
    let worn = json!({"avatarFrame": "frame-gold", "lockerTheme": null, "badge": null});
    assert_eq!(equipped["cosmetics"], worn);
    let (_, me) = api.get_as(&demo, "/api/me").await;
    assert_eq!(me["cosmetics"], worn, "{me}");
    // What the demo fan does not own is not worn.
    let (status, refused) = equip(json!({"lockerTheme": "theme-hardwood"})).await;
    assert_eq!(
        (status, &refused["error"]["code"]),
        (422, &json!("cosmetic_not_owned"))
    );
    let (_, me) = api.get_as(&demo, "/api/me").await;
    assert_eq!(me["cosmetics"], worn);
}

#[tokio::test]
async fn a_card_order_of_a_cash_bundle_paid_on_the_local_checkout_page_credits_once() {
    let api = LocalApi::start().await;
    // No redirects followed: the page's answer to Pay is checked as sent.
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let fan = api.token("card-fan", None).await;
    let (status, placed) = api
        .call(
            client
                .post(format!("{}/api/products/cash-fan-pack/orders", api.base))
                .bearer_auth(&fan)
                .header("idempotency-key", "bundle-1")
                .json(&json!({"pay": "card", "currency": "USD"})),
            "post",
            ORDERS,
        )
        .await;
    assert_eq!(status, 201, "{placed}");
    assert_eq!(placed["order"]["status"], "pending");
    let id = placed["order"]["id"].as_str().unwrap().to_owned();
    let checkout = placed["order"]["checkoutUrl"].as_str().unwrap().to_owned();
    assert!(checkout.starts_with(&api.base), "{checkout}");

    let page = client.get(&checkout).send().await.unwrap();
    let page = page.text().await.unwrap();
    assert!(
        page.contains("Fan Cash Bundle") && page.contains("Pay 19.99 USD"),
        "{page}"
    );
    for _ in 0..2 {
        let paid = client.post(format!("{checkout}/pay")).send().await.unwrap();
        assert_eq!(paid.status().as_u16(), 303);
    }
    let (status, read) = api
        .call(
            client
                .get(format!("{}/api/me/orders/{id}", api.base))
                .bearer_auth(&fan),
            "get",
            "/api/me/orders/{orderId}",
        )
        .await;
    assert_eq!(status, 200, "{read}");
    assert_eq!(read["order"]["status"], "completed", "{read}");
    let (_, cash) = api.get_as(&fan, "/api/me/cash").await;
    assert_eq!(
        cash["balances"],
        json!([{"amount": 2200, "currency": "USD"}]),
        "2000 and its bonus of 200, once"
    );
    let (_, ledger) = api.get_as(&fan, "/api/me/cash/transactions").await;
    let credits: Vec<&Value> = ledger["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|entry| entry["type"] == "credit")
        .collect();
    assert_eq!(credits.len(), 1, "{ledger}");
    assert_eq!(
        (&credits[0]["amount"], &credits[0]["orderId"]),
        (&json!(2200), &json!(id))
    );
}
