//! Stripe, on this machine: the local API's top-ups open their Checkout Sessions here (a small
//! stand-in of `POST /v1/checkout/sessions`, the one call the handler makes, at
//! `/local/stripe`), and each session's `url` is a page of this server with Pay and Cancel
//! buttons. Pay sends a `checkout.session.completed` (paid) event, Cancel a
//! `checkout.session.expired` one, signed with this server's own webhook secret as Stripe signs
//! them, over HTTP to this server's own `POST /api/webhooks/stripe`: the production handler
//! verifies and settles it. No Stripe account, no network.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::extract::Request;
use axum::http::request::Parts;
use axum::http::{Method, StatusCode, header};
use axum::response::Response;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::json;
use shared::auth::TokenVerifier;
use shared::config::{Secret, StripeApi};
use shared::handlers::stripe_webhook::WebhookState;
use shared::handlers::top_ups::TopUpState;
use shared::topups::stripe::{ReturnUrls, StripeClient};
use shared::topups::{TopUpPolicy, signature};

/// Where the local Checkout lives, under the server's base.
pub const STRIPE_PATH: &str = "/local/stripe";
const PAGES: &str = "/local/checkout/";
/// The secret key the local Stripe accepts (the local API's top-up handler sends it).
pub const SECRET_KEY: &str = "sk_local_fan_api";

#[derive(Clone)]
struct Session {
    top_up_id: String,
    amount: u64,
    currency: String,
    success_url: String,
    cancel_url: String,
    /// `open` until paid or cancelled.
    state: &'static str,
}

/// The top-up handlers' states and the local Stripe they use, for a server at `base`.
pub struct LocalTopUps<S> {
    pub top_ups: Arc<TopUpState<S>>,
    /// The webhook's state, with this process's own signing secret.
    pub webhook: Arc<WebhookState<S>>,
    pub checkout: Arc<LocalCheckout>,
}

impl<S: Clone> LocalTopUps<S> {
    pub fn new(
        store: &S,
        base: &str,
        verifier: TokenVerifier,
        max_body_bytes: usize,
        policy: TopUpPolicy,
    ) -> Self {
        // This process's own webhook secret: its Checkout page signs with it, its webhook route
        // verifies with it.
        let webhook_secret = format!("whsec_local_{}", shared::purchases::random_client_seed());
        Self {
            top_ups: Arc::new(TopUpState {
                store: store.clone(),
                verifier,
                max_body_bytes,
                policy,
                stripe: StripeClient::new(&StripeApi {
                    base: format!("{base}{STRIPE_PATH}"),
                    secret_key: Secret::new(SECRET_KEY),
                }),
                return_urls: ReturnUrls {
                    success: format!("{base}{PAGES}done"),
                    cancel: format!("{base}{PAGES}cancelled"),
                },
            }),
            webhook: Arc::new(WebhookState {
                store: store.clone(),
                secret: Secret::new(webhook_secret.clone()),
                max_body_bytes,
            }),
            checkout: Arc::new(LocalCheckout::new(base, &webhook_secret)),
        }
    }
}

/// The local Stripe: its sessions (by id, and by the idempotency key that made each).
pub struct LocalCheckout {
    base: String,
    webhook_secret: String,
    sessions: Mutex<HashMap<String, Session>>,
    by_key: Mutex<HashMap<String, String>>,
    client: Client<HttpConnector, Full<Bytes>>,
}

impl LocalCheckout {
    /// Stripe at `base` (this server), signing events with `webhook_secret`.
    pub fn new(base: &str, webhook_secret: &str) -> Self {
        Self {
            base: base.to_owned(),
            webhook_secret: webhook_secret.to_owned(),
            sessions: Mutex::default(),
            by_key: Mutex::default(),
            client: Client::builder(TokioExecutor::new()).build_http(),
        }
    }

    /// Answers a request under `/local/`.
    pub async fn serve(&self, request: Request) -> Response {
        let (parts, body) = request.into_parts();
        let parts = &parts;
        let path = parts.uri.path();
        if path == format!("{STRIPE_PATH}/v1/checkout/sessions") && parts.method == Method::POST {
            let body = body
                .collect()
                .await
                .map(|b| b.to_bytes())
                .unwrap_or_default();
            return self.create_session(parts, &body);
        }
        let Some(rest) = path.strip_prefix(PAGES) else {
            return page(StatusCode::NOT_FOUND, "Not found", "No such local page.");
        };
        match (&parts.method, rest.split_once('/')) {
            (&Method::GET, None) if rest == "done" => page(
                StatusCode::OK,
                "Paid",
                "Paid: your Cash is credited once Stripe's event is handled.",
            ),
            (&Method::GET, None) if rest == "cancelled" => page(
                StatusCode::OK,
                "Cancelled",
                "Cancelled: nothing was charged.",
            ),
            (&Method::GET, None) => self.checkout_page(rest),
            (&Method::POST, Some((id, "pay"))) => self.settle(id, true).await,
            (&Method::POST, Some((id, "cancel"))) => self.settle(id, false).await,
            _ => page(StatusCode::NOT_FOUND, "Not found", "No such local page."),
        }
    }

    /// `POST /v1/checkout/sessions` as Stripe answers it, for what the handler sends.
    fn create_session(&self, parts: &Parts, body: &[u8]) -> Response {
        let authorized = parts
            .headers
            .get(header::AUTHORIZATION)
            .is_some_and(|value| value.as_bytes() == format!("Bearer {SECRET_KEY}").as_bytes());
        if !authorized {
            return stripe_error(StatusCode::UNAUTHORIZED, "api_key_invalid");
        }
        let form: HashMap<String, String> =
            url::form_urlencoded::parse(body).into_owned().collect();
        let field = |name: &str| form.get(name).cloned();
        let (Some(top_up_id), Some(amount), Some(currency), Some(success_url), Some(cancel_url)) = (
            field("client_reference_id"),
            field("line_items[0][price_data][unit_amount]").and_then(|a| a.parse().ok()),
            field("line_items[0][price_data][currency]"),
            field("success_url"),
            field("cancel_url"),
        ) else {
            return stripe_error(StatusCode::BAD_REQUEST, "parameter_missing");
        };
        let key = parts
            .headers
            .get("idempotency-key")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let mut by_key = self.by_key.lock().unwrap();
        let mut sessions = self.sessions.lock().unwrap();
        let id = match by_key.get(&key) {
            Some(id) => id.clone(),
            None => {
                let id = format!("cs_local_{}", sessions.len() + 1);
                sessions.insert(
                    id.clone(),
                    Session {
                        top_up_id,
                        amount,
                        currency,
                        success_url,
                        cancel_url,
                        state: "open",
                    },
                );
                by_key.insert(key, id.clone());
                id
            }
        };
        let session = json!({"id": id, "object": "checkout.session", "url": format!("{}{PAGES}{id}", self.base)});
        json(StatusCode::OK, &session)
    }

    fn session(&self, id: &str) -> Option<Session> {
        self.sessions.lock().unwrap().get(id).cloned()
    }

    fn checkout_page(&self, id: &str) -> Response {
        let Some(session) = self.session(id) else {
            return page(
                StatusCode::NOT_FOUND,
                "Not found",
                "No such Checkout Session.",
            );
        };
        let amount = format!(
            "{}.{:02} {}",
            session.amount / 100,
            session.amount % 100,
            session.currency.to_ascii_uppercase()
        );
        let body = if session.state == "open" {
            format!(
                "<p>Cash top-up: <strong>{amount}</strong> (top-up {top_up}).</p>\
                 <form method=\"post\" action=\"{PAGES}{id}/pay\"><button>Pay {amount}</button></form>\
                 <form method=\"post\" action=\"{PAGES}{id}/cancel\"><button>Cancel</button></form>",
                top_up = session.top_up_id
            )
        } else {
            format!("<p>This session is {}.</p>", session.state)
        };
        page(StatusCode::OK, "Local Checkout", &body)
    }

    /// Pays or cancels session `id`: its event, signed, to this server's webhook route; then
    /// the fan goes back to the success or cancel URL, as from Stripe's page.
    async fn settle(&self, id: &str, pay: bool) -> Response {
        let Some(session) = self.session(id) else {
            return page(
                StatusCode::NOT_FOUND,
                "Not found",
                "No such Checkout Session.",
            );
        };
        let (kind, payment_status, state) = if pay {
            ("checkout.session.completed", "paid", "paid")
        } else {
            ("checkout.session.expired", "unpaid", "expired")
        };
        let event = json!({
            "id": format!("evt_local_{id}_{state}"),
            "object": "event",
            "type": kind,
            "data": {"object": {
                "id": id,
                "object": "checkout.session",
                "client_reference_id": session.top_up_id,
                "amount_total": session.amount,
                "currency": session.currency,
                "payment_status": payment_status,
            }},
        })
        .to_string();
        let now = shared::timestamp::Timestamp::now().unix_seconds();
        let signed = signature::sign(event.as_bytes(), &self.webhook_secret, now);
        let request = hyper::Request::post(format!("{}/api/webhooks/stripe", self.base))
            .header(header::CONTENT_TYPE, "application/json; charset=utf-8")
            .header("stripe-signature", signed)
            .body(Full::new(Bytes::from(event)))
            .expect("a valid request");
        match self.client.request(request).await {
            Ok(answer) if answer.status().is_success() => {}
            Ok(answer) => {
                let status = answer.status();
                return page(
                    StatusCode::BAD_GATEWAY,
                    "Webhook refused",
                    &format!("The webhook answered {status}; try again."),
                );
            }
            Err(error) => {
                return page(
                    StatusCode::BAD_GATEWAY,
                    "Webhook unreachable",
                    &format!("The webhook could not be reached: {error}"),
                );
            }
        }
        if let Some(stored) = self.sessions.lock().unwrap().get_mut(id) {
            stored.state = state;
        }
        let back = if pay {
            session.success_url
        } else {
            session.cancel_url
        };
        Response::builder()
            .status(StatusCode::SEE_OTHER)
            .header(header::LOCATION, back)
            .body(Body::empty())
            .expect("a valid response")
    }
}

fn json(status: StatusCode, value: &serde_json::Value) -> Response {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(value.to_string()))
        .expect("a valid response")
}

fn stripe_error(status: StatusCode, code: &str) -> Response {
    json(
        status,
        &json!({"error": {"type": "invalid_request_error", "code": code}}),
    )
}

fn page(status: StatusCode, title: &str, body: &str) -> Response {
    let html = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>{title}</title></head>\
         <body><h1>{title}</h1>{body}<p><small>fan-api local Checkout (no Stripe)</small></p></body></html>"
    );
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "text/html; charset=utf-8")
        .body(Body::from(html))
        .expect("a valid response")
}
