//! Stripe, on this machine: the local API's top-ups and card orders open their Checkout Sessions
//! here (a small stand-in of `POST /v1/checkout/sessions`, the one call the handlers make, at
//! `/local/stripe`), and each session's `url` is a page of this server with Pay and Cancel
//! buttons, showing what is paid for (its line item's name) and its price. Pay sends a `checkout.session.completed` (paid) event, Cancel a
//! `checkout.session.expired` one, signed with this server's own webhook secret as Stripe signs
//! them, over HTTP to this server's own `POST /api/webhooks/stripe`: the production handler
//! verifies and settles it. No Stripe account, no network.
//!
//! As strict as Stripe where a developer could otherwise build on what Stripe never does: the
//! key is checked before the form is read, and the form is read under the server's body timeout
//! and [`MAX_FORM_BYTES`]; a session id is random (`cs_test_` and 48 hex digits: the id is all
//! that its Pay and Cancel buttons need, so it must not be guessable); an expired session is
//! never paid, a paid one never expired. The webhook secret is `LOCAL_API_WEBHOOK_SECRET` or a
//! random one, printed in the banner either way, so that a developer can sign events the page
//! has no button for (`checkout.session.async_payment_succeeded`, a replay).

use std::collections::HashMap;
use std::sync::Mutex;

use api::config::{Secret, StripeApi};
use api::http::error::ApiError;
use api::http::extract::read_body;
use axum::body::Body;
use axum::extract::Request;
use axum::http::request::Parts;
use axum::http::{Method, StatusCode, header};
use axum::response::Response;
use bytes::Bytes;
use clients::stripe::ReturnUrls;
use domain::topups::signature;
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::json;

/// Where the local Checkout lives, under the server's base.
pub const STRIPE_PATH: &str = "/local/stripe";
const PAGES: &str = "/local/checkout/";
/// The secret key the local Stripe accepts (the local API's top-up handler sends it).
pub const SECRET_KEY: &str = "sk_local_fan_api";
/// The largest form `POST /v1/checkout/sessions` reads. The handler's is under 1 KiB (a dozen
/// fields, two local URLs, ids of at most 64 characters); 16 KiB leaves room for the fields a
/// later Stripe call adds, while a client can make the process keep no more than this.
pub const MAX_FORM_BYTES: usize = 16 * 1024;
/// The variable that sets the webhook signing secret (else a random one per start).
pub const WEBHOOK_SECRET_VAR: &str = "LOCAL_API_WEBHOOK_SECRET";

/// The webhook signing secret: `LOCAL_API_WEBHOOK_SECRET` when set (not empty), else a random
/// `whsec_local_...`.
pub fn webhook_secret() -> Result<String, String> {
    match std::env::var(WEBHOOK_SECRET_VAR) {
        Ok(secret) if secret.trim().is_empty() => Err(format!("{WEBHOOK_SECRET_VAR} is empty")),
        Ok(secret) => Ok(secret),
        Err(_) => Ok(format!("whsec_local_{}", random_hex(24))),
    }
}

/// `bytes` random bytes from the system's source, as hex.
pub(crate) fn random_hex(bytes: usize) -> String {
    let mut random = vec![0u8; bytes];
    aws_lc_rs::rand::fill(&mut random).expect("the system random source works");
    random.iter().map(|byte| format!("{byte:02x}")).collect()
}

#[derive(Clone)]
struct Session {
    /// `client_reference_id`: a top-up's id, or `order:<orderId>`.
    reference: String,
    /// The line item's name: `Cash top-up`, or the product's.
    name: String,
    /// The `metadata[...]` fields, returned in its events as Stripe returns them.
    metadata: serde_json::Map<String, serde_json::Value>,
    amount: u64,
    currency: String,
    success_url: String,
    cancel_url: String,
    /// `open` until paid or cancelled (`expired`); never one and then the other.
    state: &'static str,
}

/// The local Stripe for a server at `base`, as the top-up handler calls it: its API, and the
/// pages its Checkout sends the fan back to.
pub fn stripe(base: &str) -> (StripeApi, ReturnUrls) {
    (
        StripeApi {
            base: format!("{base}{STRIPE_PATH}"),
            secret_key: Secret::new(SECRET_KEY),
        },
        ReturnUrls {
            success: format!("{base}{PAGES}done"),
            cancel: format!("{base}{PAGES}cancelled"),
        },
    )
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
            // The key first: a caller without it makes this server read nothing.
            if !authorized(parts) {
                return stripe_error(
                    StatusCode::UNAUTHORIZED,
                    "api_key_invalid",
                    "Invalid API Key provided.",
                );
            }
            return match read_body(&parts.headers, body, MAX_FORM_BYTES).await {
                Ok(form) => self.create_session(parts, &form),
                Err(ApiError::PayloadTooLarge { .. }) => stripe_error(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "request_too_large",
                    "The request body is too large.",
                ),
                Err(_) => stripe_error(
                    StatusCode::BAD_REQUEST,
                    "invalid_request_body",
                    "The request body could not be read.",
                ),
            };
        }
        let Some(rest) = path.strip_prefix(PAGES) else {
            return page(StatusCode::NOT_FOUND, "Not found", "No such local page.");
        };
        match (&parts.method, rest.split_once('/')) {
            (&Method::GET, None) if rest == "done" => page(
                StatusCode::OK,
                "Paid",
                "Paid: your Cash or product is yours once Stripe's event is handled.",
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

    /// `POST /v1/checkout/sessions` as Stripe answers it, for what the handler sends (the
    /// caller's key already checked).
    fn create_session(&self, parts: &Parts, body: &[u8]) -> Response {
        let form: HashMap<String, String> =
            url::form_urlencoded::parse(body).into_owned().collect();
        let field = |name: &str| form.get(name).cloned();
        let (
            Some(reference),
            Some(name),
            Some(amount),
            Some(currency),
            Some(success_url),
            Some(cancel_url),
        ) = (
            field("client_reference_id"),
            field("line_items[0][price_data][product_data][name]"),
            field("line_items[0][price_data][unit_amount]").and_then(|a| a.parse().ok()),
            field("line_items[0][price_data][currency]"),
            field("success_url"),
            field("cancel_url"),
        )
        else {
            return stripe_error(
                StatusCode::BAD_REQUEST,
                "parameter_missing",
                "A required parameter is missing.",
            );
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
                let id = format!("cs_test_{}", random_hex(24));
                sessions.insert(
                    id.clone(),
                    Session {
                        reference,
                        name,
                        metadata: metadata(&form),
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
                "<p>{name}: <strong>{amount}</strong> ({reference}).</p>\
                 <form method=\"post\" action=\"{PAGES}{id}/pay\"><button>Pay {amount}</button></form>\
                 <form method=\"post\" action=\"{PAGES}{id}/cancel\"><button>Cancel</button></form>",
                name = escaped(&session.name),
                reference = escaped(&session.reference),
            )
        } else {
            format!("<p>This session is {}.</p>", session.state)
        };
        page(StatusCode::OK, "Local Checkout", &body)
    }

    /// Pays or cancels session `id`: its event, signed, to this server's webhook route; then
    /// the fan goes back to the success or cancel URL, as from Stripe's page. Pay on a paid
    /// session (Cancel on an expired one) sends its event again, as Stripe redelivers one; Pay
    /// on an expired session and Cancel on a paid one are refused, as Stripe never does either.
    async fn settle(&self, id: &str, pay: bool) -> Response {
        let (kind, payment_status, state, other) = if pay {
            ("checkout.session.completed", "paid", "paid", "expired")
        } else {
            ("checkout.session.expired", "unpaid", "expired", "paid")
        };
        // Claimed under the lock: of a Pay and a Cancel at once, one is refused.
        let session = {
            let mut sessions = self.sessions.lock().unwrap();
            let Some(session) = sessions.get_mut(id) else {
                return page(
                    StatusCode::NOT_FOUND,
                    "Not found",
                    "No such Checkout Session.",
                );
            };
            if session.state == other {
                return page(
                    StatusCode::CONFLICT,
                    "Not possible",
                    &format!("This session is {other}."),
                );
            }
            session.state = state;
            session.clone()
        };
        let event = json!({
            "id": format!("evt_local_{id}_{state}"),
            "object": "event",
            "type": kind,
            "data": {"object": {
                "id": id,
                "object": "checkout.session",
                "client_reference_id": session.reference,
                "amount_total": session.amount,
                "currency": session.currency,
                "payment_status": payment_status,
                "metadata": session.metadata,
            }},
        })
        .to_string();
        let now = domain::timestamp::Timestamp::now().unix_seconds();
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

/// The form's `metadata[<name>]` fields, by name.
fn metadata(form: &HashMap<String, String>) -> serde_json::Map<String, serde_json::Value> {
    form.iter()
        .filter_map(|(field, value)| {
            let name = field.strip_prefix("metadata[")?.strip_suffix(']')?;
            Some((name.to_owned(), value.clone().into()))
        })
        .collect()
}

/// `text` safe in HTML (a product's name is the operator's text).
fn escaped(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn json(status: StatusCode, value: &serde_json::Value) -> Response {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(value.to_string()))
        .expect("a valid response")
}

/// Stripe's error shape (`type`, `code`, `message`), as the handler reads a refusal.
fn stripe_error(status: StatusCode, code: &str, message: &str) -> Response {
    json(
        status,
        &json!({"error": {"type": "invalid_request_error", "code": code, "message": message}}),
    )
}

/// Whether the caller sent the local secret key.
fn authorized(parts: &Parts) -> bool {
    parts
        .headers
        .get(header::AUTHORIZATION)
        .is_some_and(|value| value.as_bytes() == format!("Bearer {SECRET_KEY}").as_bytes())
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
