//! Every function over one store, as one process serves them, for `local-api` and the drop
//! benchmark's `drop-api` alike: every function's routes, each state built by its own
//! `LocalState` constructor (a new function adds nothing here), with this server's stand-ins
//! for Stripe and Turnstile.

use std::sync::Arc;
use std::time::Duration;

use api::config::{AuthConfig, Secret};
use api::handlers::webhooks::send::RetryScale;
use api::http::app_config::ConfigCache;
use api::http::limit::{Limiter, system_clock};
use api::http::routes::{LocalProcess, local_routes};
use domain::purchases::HoldPolicy;
use domain::ratelimit::RatePolicy;
use domain::topups::TopUpPolicy;
use serde_json::Value;
use store::Store;

use crate::checkout::{LocalCheckout, stripe};
use crate::server::{App, Limits};

/// What the states are made from besides the store.
pub struct AppSettings {
    /// The token settings every signed-in route verifies with (checked before: see
    /// [`TokenVerifier::from_config`]).
    pub auth: AuthConfig,
    pub max_body_bytes: usize,
    /// How long a start holds a unit, and what a fan's unpaid holds may be.
    pub hold: Duration,
    pub hold_policy: HoldPolicy,
    pub top_up_policy: TopUpPolicy,
    /// This server's address (`http://127.0.0.1:<port>`): the local Checkout's pages are on it.
    pub base: String,
    /// Stripe's webhook signing secret, of the local Checkout and the webhook route.
    pub webhook_secret: String,
    /// The key operators' routes accept in place of IAM ([`crate::operator`]).
    pub operator_key: String,
    /// What the in-process webhook sender divides its retries' waits by
    /// ([`crate::webhooks::retry_scale_from_env`]).
    pub webhook_retry_scale: RetryScale,
    /// The identity provider's webhook secret ([`crate::operator::provider_secret`]).
    pub provider_secret: domain::webhooks::SigningSecret,
    /// The key of deleted fans' pseudonyms ([`crate::operator::pseudonym_key`]).
    pub pseudonyms: domain::account::PseudonymKey,
    /// The identity provider's keys, served at `/.well-known/jwks.json`.
    pub jwks: Value,
    pub openapi: Value,
    pub limits: Limits,
    /// The rate limits (`RATE_LIMIT_*`), counted in the store on each connection's peer address,
    /// as the functions count on API Gateway's `sourceIp`; `None`: not limited (the drop
    /// benchmark, whose thousands of fans share one loopback address).
    pub rate_limits: Option<RatePolicy>,
    /// The origins whose browsers may call the API (`LOCAL_API_CORS_ORIGINS`).
    pub cors: crate::cors::Cors,
}

impl App {
    /// Every function's state over `store`, and its routes, from each function's constructor
    /// ([`local_routes`]), with Stripe and Turnstile's stand-ins on this server. Panics if
    /// `settings.auth` does not make a verifier: both callers check it (or build it from
    /// constants) before.
    pub fn new<S: Store + Clone + 'static>(store: &S, settings: AppSettings) -> Self {
        let (stripe, return_urls) = stripe(&settings.base);
        let process = LocalProcess {
            auth: settings.auth,
            max_body_bytes: settings.max_body_bytes,
            hold: settings.hold,
            hold_policy: settings.hold_policy,
            top_up_policy: settings.top_up_policy,
            siteverify: format!("{}{}", settings.base, crate::siteverify::PATH),
            turnstile_secret: Secret::new(crate::siteverify::SECRET),
            human_hostnames: vec![crate::siteverify::HOSTNAME.to_owned()],
            stripe,
            return_urls,
            webhook_secret: Secret::new(&settings.webhook_secret),
            operator_key: Secret::new(&settings.operator_key),
            sessions: Arc::new(store.clone()),
            webhook_retry_scale: settings.webhook_retry_scale,
            provider_secrets: vec![settings.provider_secret],
            pseudonyms: settings.pseudonyms,
        };
        let routes = local_routes(store, &process);
        let limiter = settings
            .rate_limits
            .map(|policy| Arc::new(Limiter::new(store.clone(), policy, system_clock())));
        Self {
            functions: routes.every,
            limiter,
            default: routes.default,
            jwks: settings.jwks,
            openapi: settings.openapi,
            limits: settings.limits,
            checkout: Arc::new(LocalCheckout::new(&settings.base, &settings.webhook_secret)),
            config: Arc::new(ConfigCache::new(store)),
            cors: Arc::new(settings.cors),
        }
    }
}
