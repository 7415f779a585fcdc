//! A LOCAL STAND-IN for Cloudflare Turnstile's siteverify, served by this server at
//! [`PATH`]: the local API cannot reach Cloudflare. It is configured with Cloudflare's published
//! always-pass test secret ([`SECRET`]) and answers as Cloudflare's test secrets do: the
//! always-pass secret passes every token, the always-fail and already-spent secrets
//! (`2x…AA`, `3x…AA`) refuse every one (`invalid-input-response`, `timeout-or-duplicate`),
//! any other secret is `invalid-input-secret`. Cloudflare's dummy token
//! (`XXXX.DUMMY.TOKEN.XXXX`) carries no `action`, and the door checks one: so this stand-in
//! reports as `action` what the token holds before its first `.` (send
//! `Human-Check: join_<packId>.DUMMY.TOKEN.XXXX`), `hostname` [`HOSTNAME`] and the current
//! instant as `challenge_ts`. Never part of a deployment.

use api::http::response::json_response;
use axum::http::StatusCode;
use axum::response::Response;
use clients::siteverify::{TEST_SECRET_FAILS, TEST_SECRET_PASSES, TEST_SECRET_SPENT};
use domain::timestamp::Timestamp;
use serde_json::{Value, json};

/// Where this server answers siteverify.
pub const PATH: &str = "/local/turnstile/v0/siteverify";
/// Cloudflare's always-pass test secret, the local API's `TURNSTILE_SECRET`.
pub const SECRET: &str = TEST_SECRET_PASSES;
/// The hostname every local token reports, the local API's only `HUMAN_CHECK_HOSTNAMES`.
pub const HOSTNAME: &str = "localhost";

fn failed(code: &str) -> Value {
    json!({"success": false, "error-codes": [code], "messages": []})
}

/// Answers a siteverify form (`secret`, `response`) as Cloudflare's test secrets do.
pub async fn answer(body: bytes::Bytes) -> Response {
    let form: Vec<(String, String)> = url::form_urlencoded::parse(&body).into_owned().collect();
    let field = |name: &str| {
        form.iter()
            .find(|(key, value)| key == name && !value.is_empty())
            .map(|(_, value)| value.as_str())
    };
    let body = match (field("secret"), field("response")) {
        (None, _) => failed("missing-input-secret"),
        (_, None) => failed("missing-input-response"),
        (Some(TEST_SECRET_PASSES), Some(token)) => json!({
            "success": true,
            "challenge_ts": Timestamp::now().to_string(),
            "hostname": HOSTNAME,
            "action": token.split('.').next().unwrap_or_default(),
            "cdata": "",
            "error-codes": [],
        }),
        (Some(TEST_SECRET_FAILS), _) => failed("invalid-input-response"),
        (Some(TEST_SECRET_SPENT), _) => failed("timeout-or-duplicate"),
        (Some(_), _) => failed("invalid-input-secret"),
    };
    json_response(StatusCode::OK, &body)
}
