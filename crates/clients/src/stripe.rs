//! The one call this API makes of Stripe's API: creating a Checkout Session
//! (`POST /v1/checkout/sessions`), as a form POST over the app's own HTTP client stack
//! ([`crate::http_client`]). async-stripe's checkout crate would bring its own client and
//! hundreds of generated types into a binary that sends eight form fields and reads two.
//!
//! A session pays for a Cash top-up or for a card order of a product (issue 48): one request, its
//! line item, reference and metadata naming which. Each request carries an `Idempotency-Key`
//! derived from the top-up or order, so that a retry (the fan's, after a 503) gets the session
//! the first try made, never a second one, and the pinned `Stripe-Version` ([`API_VERSION`]).

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use lambda_http::http::{Request, header};
use serde::Deserialize;

use crate::http_client::{Roots, Schemes, https_connector};
use domain::cash::Money;
use domain::products::order::{ORDER_REFERENCE_PREFIX, Order};
use domain::secret::Secret;
use domain::timestamp::Timestamp;
use domain::topups::{Checkout, TopUp};

/// How long a connection to Stripe may take to open, and the whole exchange (an API Gateway
/// request has 30 s; a Checkout Session is made in well under a second).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// The most of an answer read (a session is a few KiB).
const MAX_ANSWER_BYTES: usize = 256 * 1024;

/// The Stripe API version of every call (`Stripe-Version`), pinned so that an upgrade of the
/// account's default version cannot change what a session's fields mean under this code: from
/// 2025-03-31.basil on, a session's `amount_total` and `currency` stay the integration's own
/// even when Stripe presents the fan another currency (`presentment_details`), which is what the
/// webhook compares with the top-up. The webhook endpoint must be created with this same version
/// (docs/operations.md), as its events are written in the endpoint's version.
pub const API_VERSION: &str = "2025-03-31.basil";

/// The name of a top-up's line item on the Checkout page (an order's is its product's name).
pub const PRODUCT_NAME: &str = "Cash top-up";

/// Why no session was had.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StripeError {
    /// Unreachable, too slow, a 5xx, a 429 or a 409 (the same key still in flight): try again
    /// later (503 with `Retry-After`).
    #[error("Stripe unavailable: {0}")]
    Unavailable(String),
    /// Any other 4xx: the request itself was refused (502 `payment_provider_error`). The detail
    /// holds Stripe's status, error type and code, never its message (which may quote the key).
    #[error("Stripe refused the request: {0}")]
    Refused(String),
}

/// Stripe's API: where it is (`https://api.stripe.com`, or a stand-in on a loopback host) and the
/// account's secret key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StripeApi {
    pub base: String,
    pub secret_key: Secret,
}

/// Where a Checkout page sends the fan back to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReturnUrls {
    pub success: String,
    pub cancel: String,
}

/// Stripe's API at `base` (`https://api.stripe.com`), with the account's secret key.
pub struct StripeClient {
    base: String,
    secret_key: Secret,
    client: Client<hyper_rustls::HttpsConnector<HttpConnector>, Full<Bytes>>,
}

impl StripeClient {
    pub fn new(config: &StripeApi) -> Self {
        let schemes = if config.base.starts_with("https://") {
            Schemes::HttpsOnly
        } else {
            Schemes::HttpsOrHttp
        };
        Self {
            base: config.base.trim_end_matches('/').to_owned(),
            secret_key: config.secret_key.clone(),
            client: Client::builder(TokioExecutor::new()).build(https_connector(
                Roots::WebPki,
                schemes,
                Some(CONNECT_TIMEOUT),
            )),
        }
    }

    /// Creates the Checkout Session paying for `top_up` (or, for a repeat of its key within
    /// Stripe's 24 hours, answers the one made before).
    pub async fn create_checkout_session(
        &self,
        top_up: &TopUp,
        urls: &ReturnUrls,
    ) -> Result<Checkout, StripeError> {
        self.create_session(checkout_form(top_up, urls), idempotency_key(top_up))
            .await
    }

    /// Creates the Checkout Session paying for the card `order` (or, for a repeat of its key
    /// within Stripe's 24 hours, answers the one made before).
    pub async fn create_order_checkout_session(
        &self,
        order: &Order,
        urls: &ReturnUrls,
    ) -> Result<Checkout, StripeError> {
        self.create_session(
            order_checkout_form(order, urls),
            order_idempotency_key(order),
        )
        .await
    }

    /// `POST /v1/checkout/sessions` with `form`, under Stripe's idempotency key `key`.
    async fn create_session(&self, form: String, key: String) -> Result<Checkout, StripeError> {
        let request = Request::post(format!("{}/v1/checkout/sessions", self.base))
            .header(
                header::AUTHORIZATION,
                format!("Bearer {}", self.secret_key.expose()),
            )
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header("idempotency-key", key)
            .header("stripe-version", API_VERSION)
            .header(header::USER_AGENT, "fan-api")
            .body(Full::new(Bytes::from(form)))
            .map_err(|e| StripeError::Refused(format!("bad request: {e}")))?;
        let exchange = async {
            let response = self
                .client
                .request(request)
                .await
                .map_err(|e| StripeError::Unavailable(format!("request failed: {e}")))?;
            let status = response.status();
            let body = Limited::new(response.into_body(), MAX_ANSWER_BYTES)
                .collect()
                .await
                .map_err(|e| StripeError::Unavailable(format!("reading the answer: {e}")))?
                .to_bytes();
            Ok::<_, StripeError>((status, body))
        };
        let (status, body) = tokio::time::timeout(REQUEST_TIMEOUT, exchange)
            .await
            .map_err(|_| {
                StripeError::Unavailable(format!("no answer within {REQUEST_TIMEOUT:?}"))
            })??;
        if status.is_success() {
            let session: SessionAnswer = serde_json::from_slice(&body).map_err(|e| {
                StripeError::Unavailable(format!("HTTP {status} with an unreadable session: {e}"))
            })?;
            return Ok(Checkout {
                session_id: session.id,
                url: session.url,
            });
        }
        let detail = refusal_detail(status.as_u16(), &body);
        if status.is_server_error() || matches!(status.as_u16(), 409 | 429) {
            Err(StripeError::Unavailable(detail))
        } else {
            Err(StripeError::Refused(detail))
        }
    }
}

#[derive(Deserialize)]
struct SessionAnswer {
    id: String,
    url: String,
}

/// Stripe's idempotency key for the session of `top_up`.
pub fn idempotency_key(top_up: &TopUp) -> String {
    format!("fan-api-topup-{}", top_up.id)
}

/// Stripe's idempotency key for the session of the card order `order`.
pub fn order_idempotency_key(order: &Order) -> String {
    format!("fan-api-order-{}", order.id)
}

/// What a session pays for: its one line item, what the webhook reads back, its expiry.
struct SessionFor<'a> {
    price: &'a Money,
    name: &'a str,
    /// `client_reference_id`: the webhook's pointer to what was paid for.
    reference: &'a str,
    metadata: [(&'static str, &'a str); 2],
    expires_at: Timestamp,
}

/// The form fields of the session paying for `top_up`, form-encoded.
pub fn checkout_form(top_up: &TopUp, urls: &ReturnUrls) -> String {
    session_form(
        &SessionFor {
            price: &top_up.amount,
            name: PRODUCT_NAME,
            reference: top_up.id.as_str(),
            metadata: [
                ("metadata[topUpId]", top_up.id.as_str()),
                ("metadata[userId]", top_up.user_id.as_str()),
            ],
            expires_at: top_up.expires_at(),
        },
        urls,
    )
}

/// The form fields of the session paying for the card `order`, form-encoded. Its
/// `client_reference_id` is `order:<orderId>`, which no top-up id parses as (ids have no `:`),
/// and its metadata name the order and its fan: the order's item is the fan's
/// (`USER#<userId>` / `ORDER#<orderId>`).
pub fn order_checkout_form(order: &Order, urls: &ReturnUrls) -> String {
    let reference = format!("{ORDER_REFERENCE_PREFIX}{}", order.id);
    session_form(
        &SessionFor {
            price: &order.price,
            name: &order.product_name,
            reference: &reference,
            metadata: [
                ("metadata[orderId]", order.id.as_str()),
                ("metadata[userId]", order.user_id.as_str()),
            ],
            expires_at: order.expires_at(),
        },
        urls,
    )
}

fn session_form(session: &SessionFor<'_>, urls: &ReturnUrls) -> String {
    let amount = session.price.amount.to_string();
    let currency = session.price.currency.to_ascii_lowercase();
    let mut form = url::form_urlencoded::Serializer::new(String::new());
    form.append_pair("mode", "payment")
        .append_pair("line_items[0][price_data][currency]", &currency)
        .append_pair("line_items[0][price_data][unit_amount]", &amount)
        .append_pair(
            "line_items[0][price_data][product_data][name]",
            session.name,
        )
        .append_pair("line_items[0][quantity]", "1")
        .append_pair("client_reference_id", session.reference)
        .extend_pairs(session.metadata)
        .append_pair("success_url", &urls.success)
        .append_pair("cancel_url", &urls.cancel)
        // Its slot among the fan's pending sessions frees itself then (`pending`).
        .append_pair("expires_at", &session.expires_at.unix_seconds().to_string())
        // The fan pays the amount and currency asked, never a converted one: a paid session of
        // another amount is neither credited nor granted.
        .append_pair("adaptive_pricing[enabled]", "false");
    form.finish()
}

/// `HTTP <status> <type>/<code>` from Stripe's error body, without its message.
pub fn refusal_detail(status: u16, body: &[u8]) -> String {
    #[derive(Deserialize, Default)]
    struct ErrorBody {
        #[serde(default)]
        error: ErrorFields,
    }
    #[derive(Deserialize, Default)]
    struct ErrorFields {
        #[serde(default, rename = "type")]
        kind: Option<String>,
        #[serde(default)]
        code: Option<String>,
    }
    let fields = serde_json::from_slice::<ErrorBody>(body)
        .unwrap_or_default()
        .error;
    format!(
        "HTTP {status} {}/{}",
        fields.kind.as_deref().unwrap_or("-"),
        fields.code.as_deref().unwrap_or("-")
    )
}
