//! The local Checkout page pays a card order's session as it pays a top-up's: the session made
//! from the form the API sends for an order (`clients::stripe::order_checkout_form`), its page
//! showing the product's name and price, and Pay sending a signed `checkout.session.completed`
//! that names the order as the webhook reads it (`order:<orderId>`, metadata `orderId` and
//! `userId`). The webhook here is a recorder on a free loopback port.

use std::sync::{Arc, Mutex};

use axum::body::{Body, to_bytes};
use axum::extract::Request;
use axum::http::{Method, header};
use clients::stripe::{ReturnUrls, order_checkout_form, order_idempotency_key};
use domain::cash::Money;
use domain::ids::{ProductId, UserId};
use domain::products::order::{Order, order_id};
use domain::products::{Grant, PayMethod, Product, ProductStatus, ProductType};
use domain::timestamp::Timestamp;
use domain::topups::event::Event;
use domain::topups::signature;
use local_api::checkout::{LocalCheckout, SECRET_KEY};

const SECRET: &str = "whsec_local_test_order_checkout";

/// A webhook that records each request it receives (head and body, as text), and its base: a
/// bare HTTP/1.1 responder, one request per connection.
async fn recorder() -> (String, Arc<Mutex<Vec<String>>>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let received = Arc::new(Mutex::new(Vec::new()));
    let kept = received.clone();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let mut request = Vec::new();
            let mut buffer = [0u8; 4096];
            // Until the head and its Content-Length of body are in.
            while !complete(&request) {
                let read = stream.read(&mut buffer).await.unwrap();
                if read == 0 {
                    break;
                }
                request.extend_from_slice(&buffer[..read]);
            }
            kept.lock()
                .unwrap()
                .push(String::from_utf8(request).unwrap());
            let answer = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
                          content-length: 18\r\nconnection: close\r\n\r\n{\"received\": true}";
            stream.write_all(answer.as_bytes()).await.unwrap();
        }
    });
    (base, received)
}

fn complete(request: &[u8]) -> bool {
    let text = String::from_utf8_lossy(request);
    let Some((head, body)) = text.split_once("\r\n\r\n") else {
        return false;
    };
    let length = head
        .lines()
        .find_map(|line| {
            line.to_ascii_lowercase()
                .strip_prefix("content-length:")
                .map(|n| n.trim().parse::<usize>().unwrap())
        })
        .unwrap_or(0);
    body.len() >= length
}

fn order() -> Order {
    let product = Product {
        id: ProductId::parse("gold-frame").unwrap(),
        product_type: ProductType::Cosmetic,
        name: "Gold <Frame>".into(),
        description: String::new(),
        image_url: None,
        prices: vec![Money {
            amount: 999,
            currency: "USD".into(),
        }],
        grants: Grant::Cosmetic {
            slot: domain::products::Slot::AvatarFrame,
        },
        pay: vec![PayMethod::Card],
        status: ProductStatus::Active,
        sale_starts_at: None,
        sale_ends_at: None,
        max_per_fan: None,
        stock: None,
    };
    let fan = UserId::parse("fan").unwrap();
    let price = product.prices[0].clone();
    let id = order_id(&fan, "k");
    Order::place(id, fan, &product, price, PayMethod::Card, Timestamp::now())
}

async fn text(checkout: &LocalCheckout, request: Request) -> (u16, String) {
    let answer = checkout.serve(request).await;
    let status = answer.status().as_u16();
    let body = to_bytes(answer.into_body(), usize::MAX).await.unwrap();
    (status, String::from_utf8(body.to_vec()).unwrap())
}

#[tokio::test]
async fn an_orders_session_shows_its_product_and_pay_names_the_order() {
    let (base, received) = recorder().await;
    let checkout = LocalCheckout::new(&base, SECRET);
    let order = order();
    let urls = ReturnUrls {
        success: format!("{base}/local/checkout/done"),
        cancel: format!("{base}/local/checkout/cancelled"),
    };
    let create = Request::builder()
        .method(Method::POST)
        .uri("/local/stripe/v1/checkout/sessions")
        .header(header::AUTHORIZATION, format!("Bearer {SECRET_KEY}"))
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header("idempotency-key", order_idempotency_key(&order))
        .body(Body::from(order_checkout_form(&order, &urls)))
        .unwrap();
    let (status, session) = text(&checkout, create).await;
    assert_eq!(status, 200, "{session}");
    let session: serde_json::Value = serde_json::from_str(&session).unwrap();
    let page_path = session["url"]
        .as_str()
        .unwrap()
        .strip_prefix(&base)
        .unwrap()
        .to_owned();
    let page = Request::get(&page_path).body(Body::empty()).unwrap();
    let (status, page) = text(&checkout, page).await;
    assert_eq!(status, 200);
    assert!(
        page.contains("Gold &lt;Frame&gt;: <strong>9.99 USD</strong>"),
        "{page}"
    );
    assert!(page.contains("Pay 9.99 USD"), "{page}");

    let pay = Request::post(format!("{page_path}/pay"))
        .body(Body::empty())
        .unwrap();
    let (status, _) = text(&checkout, pay).await;
    assert_eq!(status, 303);
    let request = received.lock().unwrap().pop().expect("an event sent");
    let (head, body) = request.split_once("\r\n\r\n").unwrap();
    let signed = head
        .lines()
        .find_map(|line| line.strip_prefix("stripe-signature: "))
        .expect("signed");
    let now = Timestamp::now().unix_seconds();
    assert!(head.starts_with("POST /api/webhooks/stripe "), "{head}");
    assert_eq!(
        signature::verify(Some(signed), body.as_bytes(), SECRET, now),
        Ok(())
    );
    let event: Event = serde_json::from_str(body).unwrap();
    assert_eq!(event.kind, "checkout.session.completed");
    let paid = event.session().unwrap().unwrap();
    assert_eq!(
        paid.order(),
        Some((order.user_id.clone(), order.id.clone()))
    );
    assert_eq!(
        (paid.amount_total, paid.currency.as_deref()),
        (Some(999), Some("usd"))
    );
    assert_eq!(paid.top_up_id(), None);
}
