//! The top-up API as the tests drive it: the handlers on a store, against the Stripe stub, and
//! Stripe's webhook with events signed by Python (`testkit::stripe`).

use api::http::routes::{cash_top_ups_routes, stripe_webhook_routes};
use std::sync::Arc;

use api::config::{Secret, StripeApi};
use api::handlers::stripe_webhook::WebhookState;
use api::handlers::top_ups::TopUpState;
use clients::stripe::{ReturnUrls, StripeClient};
use domain::ids::TopUpId;
use domain::topups::{TopUpPolicy, TopUpStatus};
use lambda_http::{Body, Response};
use serde_json::Value;
use store::cash::GetBalance;
use store::products::ProductStore;
use store::topups::TopUpStore;
use testkit::events::{ApiEvent, call};
use testkit::fault_proxy::FaultProxy;
use testkit::stripe::{
    SECRET_KEY, StripeStub, WEBHOOK_SECRET, now, python_signature, session_event,
};
use testkit::tokens::token;

pub const SUCCESS_URL: &str = "https://fan.example/cash/done";
pub const CANCEL_URL: &str = "https://fan.example/cash/cancelled";
pub const TOP_UPS: &str = "/api/me/cash/top-ups";
pub const WEBHOOK: &str = "/api/webhooks/stripe";

pub struct Api<S> {
    pub stub: StripeStub,
    pub top_ups: Arc<TopUpState<S>>,
    pub webhook: Arc<WebhookState<S>>,
}

/// An answer: status, JSON body, headers.
pub struct Answer {
    pub status: u16,
    pub body: Value,
    pub response: Response<Body>,
}

impl Answer {
    pub fn of(response: Response<Body>) -> Self {
        let (status, body) = testkit::events::parts(&response);
        Self {
            status,
            body,
            response,
        }
    }

    pub fn code(&self) -> &str {
        self.body["error"]["code"].as_str().unwrap_or_default()
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
    }

    pub fn top_up_id(&self) -> TopUpId {
        TopUpId::parse(self.body["topUp"]["id"].as_str().unwrap()).unwrap()
    }
}

pub async fn api<S: Clone>(store: S) -> Api<S> {
    let stub = StripeStub::start().await;
    let stripe = StripeClient::new(&StripeApi {
        base: stub.base(),
        secret_key: Secret::new(SECRET_KEY),
    });
    Api {
        top_ups: Arc::new(TopUpState {
            store: store.clone(),
            verifier: testkit::tokens::verifier(),
            max_body_bytes: 65536,
            policy: TopUpPolicy::default(),
            stripe,
            return_urls: ReturnUrls {
                success: SUCCESS_URL.into(),
                cancel: CANCEL_URL.into(),
            },
        }),
        webhook: Arc::new(WebhookState {
            store,
            secret: Secret::new(WEBHOOK_SECRET),
            max_body_bytes: 65536,
        }),
        stub,
    }
}

pub fn create_event(user: &str, key: &str, body: &str) -> ApiEvent {
    ApiEvent::post(TOP_UPS)
        .bearer(&token(user, None))
        .header("idempotency-key", key)
        .json(body)
}

impl<S: TopUpStore + ProductStore + GetBalance + 'static> Api<S> {
    pub async fn call(&self, event: &ApiEvent) -> Answer {
        Answer::of(call(cash_top_ups_routes(), &self.top_ups, event.request()).await)
    }

    pub async fn create(&self, user: &str, key: &str, amount: u64) -> Answer {
        let body = format!(r#"{{"amount": {amount}, "currency": "USD"}}"#);
        self.call(&create_event(user, key, &body)).await
    }

    pub async fn get(&self, user: &str, id: &str) -> Answer {
        let event = ApiEvent::get(&format!("{TOP_UPS}/{id}")).bearer(&token(user, None));
        self.call(&event).await
    }

    /// Posts `body` to the webhook with `signature` (none when `None`).
    pub async fn deliver_signed(&self, body: &str, signature: Option<&str>) -> Answer {
        let mut event = ApiEvent::post(WEBHOOK)
            .header("content-type", "application/json; charset=utf-8")
            .body(body);
        if let Some(signature) = signature {
            event = event.header("stripe-signature", signature);
        }
        Answer::of(call(stripe_webhook_routes(), &self.webhook, event.request()).await)
    }

    /// Posts `body` signed now with the webhook secret, by Python.
    pub async fn deliver(&self, body: &str) -> Answer {
        let signature = python_signature(body, WEBHOOK_SECRET, now());
        self.deliver_signed(body, Some(&signature)).await
    }

    /// The Checkout Session stored for a top-up.
    pub async fn session(&self, id: &TopUpId) -> String {
        let top_up = self.top_ups.store.get_top_up(id).await.unwrap().unwrap();
        top_up.checkout.expect("a session").session_id
    }

    /// A signed event of `kind` about top-up `id`'s own session, paying its amount.
    pub async fn event(
        &self,
        event_id: &str,
        kind: &str,
        id: &TopUpId,
        payment_status: &str,
    ) -> String {
        let top_up = self.top_ups.store.get_top_up(id).await.unwrap().unwrap();
        session_event(
            event_id,
            kind,
            &self.session(id).await,
            id.as_str(),
            top_up.amount.amount,
            "usd",
            payment_status,
        )
    }

    pub async fn status(&self, id: &TopUpId) -> TopUpStatus {
        self.top_ups
            .store
            .get_top_up(id)
            .await
            .unwrap()
            .unwrap()
            .status
    }

    pub async fn balance(&self, user: &str) -> u64 {
        self.top_ups
            .store
            .get_balance(&testkit::ids::user(user), "USD")
            .await
            .unwrap()
    }
}

/// A store on the shared moto table reached through a fault proxy, and the proxy.
pub async fn behind_fault_proxy() -> (FaultProxy, store::DynamoStore) {
    let store = testkit::moto::shared_table().await;
    let proxy = FaultProxy::start(testkit::moto::shared_endpoint()).await;
    let client = testkit::moto::client_for(&proxy.endpoint()).await;
    let through = store::DynamoStore::new(client, store.table());
    (proxy, through)
}

pub const COMPLETED: &str = "checkout.session.completed";
pub const EXPIRED: &str = "checkout.session.expired";
pub const FAILED: &str = "checkout.session.async_payment_failed";
pub const SUCCEEDED: &str = "checkout.session.async_payment_succeeded";

/// A pending top-up of `amount` for `fan` and its id.
pub async fn pending<S: TopUpStore + ProductStore + GetBalance + 'static>(
    api: &Api<S>,
    key: &str,
    amount: u64,
) -> TopUpId {
    let created = api.create("fan", key, amount).await;
    assert_eq!(created.status, 201, "{}", created.body);
    created.top_up_id()
}
