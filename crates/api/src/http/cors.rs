//! What a browser on another origin may send and read: the one declaration that `template.yaml`'s
//! `CorsConfiguration` (API Gateway answers the preflights; a test holds the template to this)
//! and local-api (which answers them the same way) both follow. The functions themselves never
//! see a preflight and set no CORS header: docs/operations.md, "CORS".

use axum::http::Method;

use crate::http::routes::routes;

/// The request headers the API reads from a browser, besides the CORS-safelisted ones. A
/// header the API comes to read is added here, or a browser's request that sends it is refused
/// at its preflight (`crates/api/tests/template_cors.rs` checks the OpenAPI document's header
/// parameters against this list).
pub const ALLOW_HEADERS: &[&str] = &[
    "Authorization",
    // application/json is not a safelisted content type: every JSON body is preflighted.
    "Content-Type",
    "Human-Check",
    "Idempotency-Key",
    "If-None-Match",
    "X-App-Version",
];

/// The request headers only other servers send (Stripe signs its webhook calls): not allowed
/// from a browser.
pub const NOT_FROM_BROWSERS: &[&str] = &["Stripe-Signature"];

/// The response headers a client reads, besides the CORS-safelisted ones (`Cache-Control`,
/// `Content-Type`, ...), which a browser always shows: without this a script reads none of them.
pub const EXPOSE_HEADERS: &[&str] = &[
    "Allow",
    "ETag",
    "Idempotent-Replayed",
    "Link",
    "Location",
    "RateLimit",
    "RateLimit-Policy",
    "Retry-After",
    "WWW-Authenticate",
];

/// The response headers a browser shows a script without being told (the Fetch standard's
/// CORS-safelisted response header names), lower case.
pub const SAFELISTED_RESPONSE_HEADERS: &[&str] = &[
    "cache-control",
    "content-language",
    "content-length",
    "content-type",
    "expires",
    "last-modified",
    "pragma",
];

/// How long a browser may keep a preflight's answer: 7200 s, Chromium's cap (Firefox keeps up
/// to a day). An answer is kept per URL and method, and a fan polls the same URLs (a queue's
/// position, the balance), so the longest a browser keeps is the fewest extra round trips; what
/// it costs is that an origin or header taken out of the list still passes in a browser that
/// asked within the last two hours, and CORS is no access control here (the bearer token is).
pub const MAX_AGE_SECONDS: u32 = 7200;

/// The methods of the API's routes, in a fixed order: what a preflight allows.
pub fn allow_methods() -> Vec<Method> {
    [
        Method::GET,
        Method::POST,
        Method::PUT,
        Method::PATCH,
        Method::DELETE,
    ]
    .into_iter()
    .filter(|method| routes().iter().any(|route| route.method == *method))
    .collect()
}
