//! The whole top-up flow on one machine, through the real `local-api` binary: a fan tops up
//! (local Stripe stand-in), pays on the local Checkout page (whose Pay button sends a signed
//! event to the server's own webhook route), is credited once, and buys and opens a pack with it;
//! Cancel expires another top-up. Every API answer is checked against `openapi.yaml`. The local
//! Checkout is as strict as Stripe (an expired session is never paid, a paid one never expired,
//! session ids cannot be guessed), and its webhook secret is printed (and can be chosen), so
//! that a developer can sign the events its page has no button for.

use crate::common;

use common::LocalApi;
use serde_json::Value;

const TOP_UPS: &str = "/api/me/cash/top-ups";

#[tokio::test]
async fn a_fan_tops_up_on_the_local_checkout_page_and_buys_a_pack_with_it() {
    let api = LocalApi::start().await;
    // No redirects followed: the page's answer to Pay is checked as sent.
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let fan = api.token("new-fan", None).await;
    let create = |key: &str, amount: u64| {
        client
            .post(format!("{}{TOP_UPS}", api.base))
            .bearer_auth(&fan)
            .header("idempotency-key", key)
            .json(&serde_json::json!({"amount": amount, "currency": "USD"}))
    };
    let read = |id: &str| {
        client
            .get(format!("{}{TOP_UPS}/{id}", api.base))
            .bearer_auth(&fan)
    };
    let (status, created) = api.call(create("top-1", 1000), "post", TOP_UPS).await;
    assert_eq!(status, 201, "{created}");
    let id = created["topUp"]["id"].as_str().unwrap().to_owned();
    let checkout = created["topUp"]["checkoutUrl"].as_str().unwrap().to_owned();
    // Random, Stripe-like: the id is all that the page's Pay and Cancel buttons need.
    let session = checkout
        .strip_prefix(&format!("{}/local/checkout/cs_test_", api.base))
        .unwrap_or_else(|| panic!("{checkout}"));
    assert!(
        session.len() == 48 && session.chars().all(|c| c.is_ascii_hexdigit()),
        "{checkout}"
    );

    let page = client
        .get(&checkout)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        page.contains("Pay 10.00 USD") && page.contains("Cancel"),
        "{page}"
    );
    for _ in 0..2 {
        let paid = client.post(format!("{checkout}/pay")).send().await.unwrap();
        assert_eq!(paid.status().as_u16(), 303);
        assert_eq!(
            paid.headers()["location"].to_str().unwrap(),
            format!("{}/local/checkout/done", api.base)
        );
    }
    let path = format!("{TOP_UPS}/{{topUpId}}");
    let (status, top_up) = api.call(read(&id), "get", &path).await;
    assert_eq!(
        (status, &top_up["topUp"]["status"]),
        (200, &Value::from("completed"))
    );

    // Spend it: a pack of 499 leaves 501 (paid twice on the page, credited once).
    let purchases = format!("{}/api/packs/nba-rookie-2026/purchases", api.base);
    let started: Value = client
        .post(&purchases)
        .bearer_auth(&fan)
        .header("idempotency-key", "buy-1")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let purchase = started["purchase"]["id"].as_str().unwrap();
    let paid: Value = client
        .put(format!("{purchases}/{purchase}"))
        .bearer_auth(&fan)
        .json(&serde_json::json!({"payment": {"method": "cash"}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(paid["cash"]["balance"]["amount"], 501, "{paid}");
    let opened = client
        .post(format!("{purchases}/{purchase}/open"))
        .bearer_auth(&fan)
        .send()
        .await
        .unwrap();
    assert_eq!(opened.status().as_u16(), 200);

    // Cancel: the session expires, nothing is credited.
    let (_, second) = api.call(create("top-2", 500), "post", TOP_UPS).await;
    let second_id = second["topUp"]["id"].as_str().unwrap().to_owned();
    let cancel = format!(
        "{}/cancel",
        second["topUp"]["checkoutUrl"].as_str().unwrap()
    );
    let second_checkout = second["topUp"]["checkoutUrl"].as_str().unwrap();
    assert_ne!(second_checkout, checkout);
    let cancelled = client.post(cancel).send().await.unwrap();
    assert_eq!(cancelled.status().as_u16(), 303);
    let (_, expired) = api.call(read(&second_id), "get", &path).await;
    assert_eq!(expired["topUp"]["status"], "expired");

    // As on Stripe: an expired session is never paid, a paid one never expired.
    for (refused, what) in [
        (format!("{second_checkout}/pay"), "pay the expired session"),
        (format!("{checkout}/cancel"), "cancel the paid session"),
    ] {
        let answer = client.post(refused).send().await.unwrap();
        assert_eq!(answer.status().as_u16(), 409, "{what}");
    }
    let (_, expired) = api.call(read(&second_id), "get", &path).await;
    assert_eq!(expired["topUp"]["status"], "expired");
    let (_, completed) = api.call(read(&id), "get", &path).await;
    assert_eq!(completed["topUp"]["status"], "completed");

    // A forged event changes nothing.
    let (status, refused) = api
        .call(
            client
                .post(format!("{}/api/webhooks/stripe", api.base))
                .header("stripe-signature", "t=1,v1=00")
                .body("{}"),
            "post",
            "/api/webhooks/stripe",
        )
        .await;
    assert_eq!(
        (status, &refused["error"]["code"]),
        (400, &Value::from("invalid_signature"))
    );
    assert_eq!(
        api.logs().matches("top-up credited").count(),
        1,
        "{}",
        api.logs()
    );
}

/// The webhook secret is `LOCAL_API_WEBHOOK_SECRET` when set, else random; the banner prints it
/// either way, and an event signed with it (here one the page has no button for,
/// `checkout.session.async_payment_succeeded`) is verified and settles the top-up.
#[tokio::test]
async fn events_signed_with_the_printed_secret_are_accepted() {
    const CHOSEN: &str = "whsec_chosen_by_the_developer";
    for chosen in [Some(CHOSEN), None] {
        let api = match chosen {
            Some(secret) => LocalApi::start_with(&[("LOCAL_API_WEBHOOK_SECRET", secret)]).await,
            None => LocalApi::start().await,
        };
        let line = api.printed_line("webhook signing secret").await;
        let secret = line
            .split_whitespace()
            .find(|word| word.starts_with("whsec_"))
            .unwrap_or_else(|| panic!("{line}"));
        if let Some(chosen) = chosen {
            assert_eq!(secret, chosen, "{line}");
        }
        // A new connection for each request: checking an answer against the document can take
        // longer than the server keeps an idle connection (its header timeout).
        let client = reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .build()
            .unwrap();
        let fan = api.token("async-fan", None).await;
        let (status, created) = api
            .call(
                client
                    .post(format!("{}{TOP_UPS}", api.base))
                    .bearer_auth(&fan)
                    .header("idempotency-key", "async-1")
                    .json(&serde_json::json!({"amount": 700, "currency": "USD"})),
                "post",
                TOP_UPS,
            )
            .await;
        assert_eq!(status, 201, "{created}");
        let top_up = created["topUp"]["id"].as_str().unwrap();
        let session = created["topUp"]["checkoutUrl"]
            .as_str()
            .unwrap()
            .rsplit('/')
            .next()
            .unwrap();
        let event = testkit::stripe::session_event(
            "evt_async_1",
            "checkout.session.async_payment_succeeded",
            session,
            top_up,
            700,
            "usd",
            "paid",
        );
        let signature = testkit::stripe::python_signature(&event, secret, testkit::stripe::now());
        let answer = client
            .post(format!("{}/api/webhooks/stripe", api.base))
            .header("content-type", "application/json")
            .header("stripe-signature", signature)
            .body(event)
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status().as_u16(), 200, "{chosen:?}");
        let path = format!("{TOP_UPS}/{{topUpId}}");
        let (_, read) = api
            .call(
                client
                    .get(format!("{}{TOP_UPS}/{top_up}", api.base))
                    .bearer_auth(&fan),
                "get",
                &path,
            )
            .await;
        assert_eq!(read["topUp"]["status"], "completed", "{chosen:?}");
    }
}
