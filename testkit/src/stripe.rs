//! A Stripe API stub on a free loopback port, for the one call the API makes
//! (`POST /v1/checkout/sessions`, for a top-up or a card order): it checks and records what it
//! receives (headers and form fields) and answers as Stripe does: the session (the same one again for a repeated
//! `Idempotency-Key` with the same fields, a 400 `idempotency_error` with others), 401 for
//! another secret key, 400 `parameter_missing` for a missing field, 400 for an `expires_at`
//! outside Stripe's 30 minutes to 24 hours; and it refuses (400) what this deployment's contract
//! forbids: no `Stripe-Version` of [`API_VERSION`], Adaptive Pricing not off; and whatever failures a test
//! scripts ([`StripeStub::fail_next`]: 429, 500, ...). Plus signed webhook events, made with
//! Python's standard library (`hmac`, `hashlib`) so that the signatures do not come from the
//! code under test.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use hyper::StatusCode;
use serde_json::{Value, json};

/// The Stripe API version this stub answers as (written here, not read from the code under test):
/// a request without it, or of another version, is refused, as the deployment pins it.
pub const API_VERSION: &str = "2025-03-31.basil";

/// The secret key the stub accepts (and tests configure).
pub const SECRET_KEY: &str = "sk_test_stub_0123456789abcdef";
/// A webhook signing secret for tests.
pub const WEBHOOK_SECRET: &str = "whsec_test_0123456789abcdefghijklmnop";

/// The fields Stripe requires of a one-time payment session with one ad hoc line item, and those
/// this deployment's contract with Stripe needs (`expires_at`, Adaptive Pricing off, its fan's
/// `userId`), besides what names the top-up or order paid for ([`paid_for`]).
const REQUIRED: [&str; 11] = [
    "mode",
    "line_items[0][price_data][currency]",
    "line_items[0][price_data][unit_amount]",
    "line_items[0][price_data][product_data][name]",
    "line_items[0][quantity]",
    "client_reference_id",
    "metadata[userId]",
    "success_url",
    "cancel_url",
    "expires_at",
    "adaptive_pricing[enabled]",
];

/// What this deployment's webhook reads back to find what a session paid for: a card order's
/// `client_reference_id` is `order:<orderId>` with the same `metadata[orderId]` (the webhook
/// ignores a session whose two differ); a top-up's is its id, with `metadata[topUpId]`. The
/// metadata member, and its value; `None` when the form names neither consistently.
fn paid_for(received: &Received) -> Option<(&'static str, String)> {
    let reference = received.field("client_reference_id")?;
    let (member, id) = match reference.strip_prefix("order:") {
        Some(order_id) => ("orderId", order_id),
        None => ("topUpId", reference),
    };
    (received.field(&format!("metadata[{member}]")) == Some(id)).then(|| (member, id.to_owned()))
}

/// Stripe's bounds on a session's `expires_at`: 30 minutes to 24 hours after its creation.
const EXPIRES_WITHIN: std::ops::RangeInclusive<u64> = 30 * 60..=24 * 60 * 60;

/// One request as the stub received it.
#[derive(Debug, Clone)]
pub struct Received {
    pub method: String,
    pub path: String,
    /// Header names in lower case.
    pub headers: HashMap<String, String>,
    pub form: Vec<(String, String)>,
}

impl Received {
    pub fn field(&self, name: &str) -> Option<&str> {
        self.form
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }
}

#[derive(Default)]
struct State {
    received: Vec<Received>,
    /// Scripted answers (status codes), used before any real one.
    failures: Vec<u16>,
    /// Sessions by idempotency key: their form and their answer.
    sessions: HashMap<String, (Vec<(String, String)>, Value)>,
}

pub struct StripeStub {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    task: tokio::task::JoinHandle<()>,
}

impl StripeStub {
    pub async fn start() -> Self {
        let (addr, state, task) =
            crate::spawn_json_stub("Stripe", |state: &mut State, parts, body| {
                let received = Received {
                    method: parts.method.to_string(),
                    path: parts.uri.path().to_owned(),
                    headers: parts
                        .headers
                        .iter()
                        .map(|(name, value)| {
                            (
                                name.as_str().to_owned(),
                                value.to_str().unwrap_or_default().to_owned(),
                            )
                        })
                        .collect(),
                    form: url::form_urlencoded::parse(body).into_owned().collect(),
                };
                answer(state, received)
            })
            .await;
        Self { addr, state, task }
    }

    /// `STRIPE_API_BASE` for this stub.
    pub fn base(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The variables that point a function opening Checkout Sessions at this stub, with its
    /// return URLs.
    pub fn function_vars(&self) -> Vec<(&'static str, String)> {
        vec![
            ("STRIPE_API_BASE", self.base()),
            ("STRIPE_SECRET_KEY", SECRET_KEY.to_owned()),
            ("TOPUP_SUCCESS_URL", "https://fan.example/done".to_owned()),
            (
                "TOPUP_CANCEL_URL",
                "https://fan.example/cancelled".to_owned(),
            ),
        ]
    }

    /// The next `statuses.len()` requests are answered with these statuses (Stripe's error
    /// body), in order, and change nothing.
    pub fn fail_next(&self, statuses: &[u16]) {
        self.state.lock().unwrap().failures.extend(statuses);
    }

    /// Every request received so far, in order.
    pub fn received(&self) -> Vec<Received> {
        self.state.lock().unwrap().received.clone()
    }

    /// How many distinct sessions were created.
    pub fn sessions(&self) -> usize {
        self.state.lock().unwrap().sessions.len()
    }
}

impl Drop for StripeStub {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn error(status: u16, kind: &str, code: &str) -> (StatusCode, Value) {
    (
        StatusCode::from_u16(status).unwrap(),
        json!({"error": {"type": kind, "code": code, "message": format!("stub: {code}")}}),
    )
}

fn answer(state: &mut State, received: Received) -> (StatusCode, Value) {
    state.received.push(received.clone());
    if !state.failures.is_empty() {
        let status = state.failures.remove(0);
        let kind = if status == 429 {
            "rate_limit_error"
        } else {
            "api_error"
        };
        return error(status, kind, "scripted");
    }
    if received.method != "POST" || received.path != "/v1/checkout/sessions" {
        return error(404, "invalid_request_error", "resource_missing");
    }
    if received.header("authorization") != Some(&format!("Bearer {SECRET_KEY}")) {
        return error(401, "invalid_request_error", "api_key_invalid");
    }
    if received.header("content-type") != Some("application/x-www-form-urlencoded") {
        return error(400, "invalid_request_error", "invalid_content_type");
    }
    match received.header("stripe-version") {
        Some(API_VERSION) => {}
        // Stripe itself would answer in the account's default version: the deployment pins one.
        None => return error(400, "invalid_request_error", "stripe_version_missing"),
        Some(_) => return error(400, "invalid_request_error", "stripe_version_unexpected"),
    }
    if let Some(missing) = REQUIRED.iter().find(|name| received.field(name).is_none()) {
        return error(
            400,
            "invalid_request_error",
            &format!("parameter_missing:{missing}"),
        );
    }
    let Some((member, paid_for)) = paid_for(&received) else {
        return error(
            400,
            "invalid_request_error",
            "stub: reference_and_metadata_differ",
        );
    };
    if received.field("adaptive_pricing[enabled]") != Some("false") {
        return error(400, "invalid_request_error", "adaptive_pricing_enabled");
    }
    let expires_in = received
        .field("expires_at")
        .and_then(|at| at.parse::<u64>().ok())
        .and_then(|at| at.checked_sub(now()));
    if !expires_in.is_some_and(|seconds| EXPIRES_WITHIN.contains(&seconds)) {
        return error(
            400,
            "invalid_request_error",
            "parameter_invalid_integer:expires_at",
        );
    }
    let Some(key) = received.header("idempotency-key").map(str::to_owned) else {
        return error(400, "invalid_request_error", "no_idempotency_key");
    };
    if let Some((form, session)) = state.sessions.get(&key) {
        return if *form == received.form {
            (StatusCode::OK, session.clone())
        } else {
            error(400, "idempotency_error", "idempotency_key_reused")
        };
    }
    let id = format!("cs_test_{}", state.sessions.len() + 1);
    let field = |name: &str| received.field(name).unwrap_or_default().to_owned();
    let session = json!({
        "id": id,
        "object": "checkout.session",
        "mode": "payment",
        "status": "open",
        "payment_status": "unpaid",
        "amount_total": field("line_items[0][price_data][unit_amount]").parse::<u64>().ok(),
        "currency": field("line_items[0][price_data][currency]"),
        "client_reference_id": field("client_reference_id"),
        "metadata": {member: paid_for, "userId": field("metadata[userId]")},
        "url": format!("https://checkout.stripe.com/c/pay/{id}"),
        "expires_at": field("expires_at").parse::<u64>().ok(),
        "adaptive_pricing": {"enabled": false},
    });
    state
        .sessions
        .insert(key, (received.form.clone(), session.clone()));
    (StatusCode::OK, session)
}

/// A `checkout.session.*` event about session `session_id` paying `amount` of `currency`
/// (lower case, as Stripe writes it) for `top_up_id`.
pub fn session_event(
    event_id: &str,
    kind: &str,
    session_id: &str,
    top_up_id: &str,
    amount: u64,
    currency: &str,
    payment_status: &str,
) -> String {
    let metadata = json!({"topUpId": top_up_id});
    let paid = (amount, currency, payment_status);
    event_of(event_id, kind, session_id, top_up_id, metadata, paid)
}

/// The same, of a session paying for the card order `order_id` of the fan `user_id`, as the
/// deployment makes it (`client_reference_id` `order:<orderId>`, metadata `orderId`, `userId`).
pub fn order_session_event(
    (event_id, kind, session_id): (&str, &str, &str),
    (user_id, order_id): (&str, &str),
    amount: u64,
    currency: &str,
    payment_status: &str,
) -> String {
    let metadata = json!({"orderId": order_id, "userId": user_id});
    let reference = format!("order:{order_id}");
    let paid = (amount, currency, payment_status);
    event_of(event_id, kind, session_id, &reference, metadata, paid)
}

fn event_of(
    event_id: &str,
    kind: &str,
    session_id: &str,
    reference: &str,
    metadata: Value,
    (amount, currency, payment_status): (u64, &str, &str),
) -> String {
    json!({
        "id": event_id,
        "object": "event",
        "api_version": API_VERSION,
        "created": 1_700_000_000,
        "type": kind,
        "livemode": false,
        "data": {"object": {
            "id": session_id,
            "object": "checkout.session",
            "client_reference_id": reference,
            "amount_total": amount,
            "currency": currency,
            "payment_status": payment_status,
            "metadata": metadata,
        }},
    })
    .to_string()
}

/// The `Stripe-Signature` header for `body`, signed with `secret` at `timestamp` by Python's
/// standard library (independent of the code under test).
pub fn python_signature(body: &str, secret: &str, timestamp: u64) -> String {
    let script = "import hmac,hashlib,sys\n\
                  t,secret=sys.argv[1],sys.argv[2]\n\
                  body=sys.stdin.buffer.read()\n\
                  print('t=%s,v1=%s' % (t, hmac.new(secret.encode(), t.encode()+b'.'+body, hashlib.sha256).hexdigest()), end='')";
    let mut child = std::process::Command::new("python3")
        .args(["-c", script, &timestamp.to_string(), secret])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3 runs");
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(body.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "python3 failed");
    String::from_utf8(output.stdout).unwrap()
}

/// Now, in Unix seconds.
pub fn now() -> u64 {
    domain::timestamp::Timestamp::now().unix_seconds()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A session request as the deployment sends it, with `version` and `adaptive` (the value of
    /// `adaptive_pricing[enabled]`, absent when `None`).
    fn request(version: Option<&str>, adaptive: Option<&str>, expires_in: u64) -> Received {
        let mut form: Vec<(String, String)> = [
            ("mode", "payment"),
            ("line_items[0][price_data][currency]", "usd"),
            ("line_items[0][price_data][unit_amount]", "500"),
            (
                "line_items[0][price_data][product_data][name]",
                "Cash top-up",
            ),
            ("line_items[0][quantity]", "1"),
            ("client_reference_id", "t1"),
            ("metadata[topUpId]", "t1"),
            ("metadata[userId]", "fan"),
            ("success_url", "https://fan.example/ok"),
            ("cancel_url", "https://fan.example/no"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        form.push(("expires_at".into(), (now() + expires_in).to_string()));
        form.extend(adaptive.map(|v| ("adaptive_pricing[enabled]".to_owned(), v.to_owned())));
        let mut headers: HashMap<String, String> = [
            ("authorization", format!("Bearer {SECRET_KEY}")),
            ("content-type", "application/x-www-form-urlencoded".into()),
            ("idempotency-key", "k".into()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        headers.extend(version.map(|v| ("stripe-version".to_owned(), v.to_owned())));
        Received {
            method: "POST".into(),
            path: "/v1/checkout/sessions".into(),
            headers,
            form,
        }
    }

    #[test]
    fn a_session_without_the_pinned_version_or_with_adaptive_pricing_is_refused() {
        let mut state = State::default();
        let pinned = Some(API_VERSION);
        for (received, code) in [
            (request(None, Some("false"), 3600), "stripe_version_missing"),
            (
                request(Some("2024-06-20"), Some("false"), 3600),
                "stripe_version_unexpected",
            ),
            (
                request(pinned, None, 3600),
                "parameter_missing:adaptive_pricing[enabled]",
            ),
            (
                request(pinned, Some("true"), 3600),
                "adaptive_pricing_enabled",
            ),
            (
                request(pinned, Some("false"), 60),
                "parameter_invalid_integer:expires_at",
            ),
            (
                request(pinned, Some("false"), 25 * 3600),
                "parameter_invalid_integer:expires_at",
            ),
        ] {
            let (status, body) = answer(&mut state, received);
            assert_eq!(
                (status.as_u16(), &body["error"]["code"]),
                (400, &json!(code))
            );
        }
        assert!(state.sessions.is_empty());
        let (status, body) = answer(&mut state, request(pinned, Some("false"), 3600));
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body["adaptive_pricing"]["enabled"], false);
        assert_eq!(state.sessions.len(), 1);
    }

    #[test]
    fn an_order_session_must_name_its_order_in_reference_and_metadata() {
        let mut state = State::default();
        let order_form = |metadata_id: &str| {
            let mut received = request(Some(API_VERSION), Some("false"), 3600);
            for (key, value) in &mut received.form {
                match key.as_str() {
                    "client_reference_id" => *value = "order:o1".into(),
                    "metadata[topUpId]" => {
                        *key = "metadata[orderId]".into();
                        *value = metadata_id.into();
                    }
                    _ => {}
                }
            }
            received
        };
        let (status, body) = answer(&mut state, order_form("o2"));
        assert_eq!(
            (status.as_u16(), &body["error"]["code"]),
            (400, &json!("stub: reference_and_metadata_differ"))
        );
        let (status, body) = answer(&mut state, order_form("o1"));
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body["metadata"], json!({"orderId": "o1", "userId": "fan"}));
        assert_eq!(body["client_reference_id"], "order:o1");
    }
}
