//! Configuration, read from the environment once per cold start. A missing or malformed required
//! variable is a [`ConfigError`] whose message names the variable and what it is for.

use std::time::Duration;

use crate::http::human_check::HumanCheck;
use crate::http::request::DEFAULT_MAX_BODY_BYTES;
use clients::beacon::{BeaconSource, DEFAULT_RELAYS};
use clients::siteverify;
use domain::cash::{MAX_CREDIT, is_currency};
use domain::packs::MIN_CURSOR_SECRET_LEN;
use domain::purchases::{
    DEFAULT_HOLD_SECONDS, DEFAULT_MAX_UNPAID_HOLDS, HoldPolicy, MAX_HOLD_SECONDS,
    MAX_MAX_UNPAID_HOLDS,
};
use domain::queue::entry::ReceiptSigner;
use domain::ratelimit::{RatePolicy, RouteClass, parse_class_policy};
// Where the functions have always found them: the secrets and Stripe's API they read from here.
use clients::stripe::ReturnUrls;
pub use clients::stripe::StripeApi;
pub use domain::secret::Secret;
use domain::topups::{DEFAULT_CURRENCY, DEFAULT_MAX_AMOUNT, DEFAULT_MIN_AMOUNT, TopUpPolicy};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("missing required environment variable {name}: {purpose}")]
    Missing {
        name: &'static str,
        purpose: &'static str,
    },
    #[error("environment variable {name} is invalid: {problem}")]
    Invalid { name: &'static str, problem: String },
}

/// Where configuration values come from: the process environment in production, a map in tests.
pub trait Source {
    fn get(&self, name: &str) -> Option<String>;
}

/// The process environment.
pub struct Env;

impl Source for Env {
    fn get(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }
}

impl<const N: usize> Source for [(&str, &str); N] {
    fn get(&self, name: &str) -> Option<String> {
        self.iter()
            .find(|(key, _)| *key == name)
            .map(|(_, value)| (*value).to_owned())
    }
}

/// What each rarity adds to a collector score: `SCORE_WEIGHTS` (`rarity=weight,...`, each named
/// rarity's weight replacing its default), else the defaults (common 1, rare 10, epic 50,
/// legendary 250).
pub fn score_weights(
    source: &dyn Source,
) -> Result<domain::leaderboards::ScoreWeights, ConfigError> {
    optional(source, "SCORE_WEIGHTS").map_or(Ok(Default::default()), |text| {
        domain::leaderboards::ScoreWeights::parse(&text).map_err(|error| ConfigError::Invalid {
            name: "SCORE_WEIGHTS",
            problem: error.to_string(),
        })
    })
}

/// A variable's value; an empty or blank value counts as unset.
fn optional(source: &dyn Source, name: &str) -> Option<String> {
    source
        .get(name)
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
}

fn required(
    source: &dyn Source,
    name: &'static str,
    purpose: &'static str,
) -> Result<String, ConfigError> {
    optional(source, name).ok_or(ConfigError::Missing { name, purpose })
}

fn optional_number(
    source: &dyn Source,
    name: &'static str,
    range: std::ops::RangeInclusive<u64>,
) -> Result<Option<u64>, ConfigError> {
    let Some(text) = optional(source, name) else {
        return Ok(None);
    };
    match text.parse::<u64>() {
        Ok(value) if range.contains(&value) => Ok(Some(value)),
        _ => Err(ConfigError::Invalid {
            name,
            problem: format!(
                "expected a whole number from {} to {}",
                range.start(),
                range.end()
            ),
        }),
    }
}

/// `SUMMARY_REFRESH_AGAIN_SECONDS` (0-50, default 30): when, after its start, a sweep refreshes
/// the packs' `remaining` summaries a second time; 0 for once per run only (tests).
pub fn summary_refresh_again(source: &dyn Source) -> Result<Option<Duration>, ConfigError> {
    let seconds = optional_number(source, "SUMMARY_REFRESH_AGAIN_SECONDS", 0..=50)?.unwrap_or(30);
    Ok((seconds > 0).then(|| Duration::from_secs(seconds)))
}

/// `WEBHOOK_QUEUE_URL`: the webhook deliveries queue (the dispatcher's and the sender's).
pub fn webhook_queue_url(source: &dyn Source) -> Result<String, ConfigError> {
    let url = required(
        source,
        "WEBHOOK_QUEUE_URL",
        "the webhook deliveries queue's URL",
    )?;
    if !(url.starts_with("https://") || url.starts_with("http://")) {
        return Err(ConfigError::Invalid {
            name: "WEBHOOK_QUEUE_URL",
            problem: "an SQS queue URL".into(),
        });
    }
    Ok(url)
}

/// `WEBHOOK_ALLOW_LOOPBACK_FOR_TESTS` (`1` or unset): lets the webhook sender reach loopback
/// receivers, over plain http too. Tests only: no deployed function sets it (a template test
/// checks), and any other value is refused.
pub fn webhook_reach(source: &dyn Source) -> Result<clients::webhooks::Reach, ConfigError> {
    match optional(source, "WEBHOOK_ALLOW_LOOPBACK_FOR_TESTS").as_deref() {
        None => Ok(clients::webhooks::Reach::PublicOnly),
        Some("1") => Ok(clients::webhooks::Reach::AlsoLoopbackForTests),
        Some(_) => Err(ConfigError::Invalid {
            name: "WEBHOOK_ALLOW_LOOPBACK_FOR_TESTS",
            problem: "1, or unset".into(),
        }),
    }
}

/// `TABLE_NAME`: the app's one DynamoDB table.
pub fn table_name(source: &dyn Source) -> Result<String, ConfigError> {
    let name = required(source, "TABLE_NAME", "the DynamoDB table of the app")?;
    let valid = (3..=255).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    if !valid {
        return Err(ConfigError::Invalid {
            name: "TABLE_NAME",
            problem: "a DynamoDB table name is 3-255 characters of [A-Za-z0-9_.-]".into(),
        });
    }
    Ok(name)
}

/// `CURSOR_SECRET`: signs the list's pagination cursors; at least 32 characters, the same for
/// every instance of the function.
pub fn cursor_secret(source: &dyn Source) -> Result<Vec<u8>, ConfigError> {
    let secret = required(
        source,
        "CURSOR_SECRET",
        "the secret that signs pagination cursors (32+ characters)",
    )?;
    if secret.len() < MIN_CURSOR_SECRET_LEN {
        return Err(ConfigError::Invalid {
            name: "CURSOR_SECRET",
            problem: format!("must be at least {MIN_CURSOR_SECRET_LEN} characters"),
        });
    }
    Ok(secret.into_bytes())
}

/// `MAX_BODY_BYTES`: the largest accepted request body (default 64 KiB, at most 1 MiB).
pub fn max_body_bytes(source: &dyn Source) -> Result<usize, ConfigError> {
    Ok(optional_number(source, "MAX_BODY_BYTES", 1..=1024 * 1024)?
        .map_or(DEFAULT_MAX_BODY_BYTES, |v| v as usize))
}

/// `MAX_UNPAID_HOLDS` (1-1000, default 2) and `START_REQUIRES_FUNDS` (`true` or `false`,
/// default `false`): what a fan's unpaid holds may be.
pub fn hold_policy(source: &dyn Source) -> Result<HoldPolicy, ConfigError> {
    let max_unpaid = optional_number(
        source,
        "MAX_UNPAID_HOLDS",
        1..=u64::from(MAX_MAX_UNPAID_HOLDS),
    )?
    .map_or(Ok(DEFAULT_MAX_UNPAID_HOLDS), u32::try_from)
    .unwrap_or(DEFAULT_MAX_UNPAID_HOLDS);
    let requires_funds = match optional(source, "START_REQUIRES_FUNDS").as_deref() {
        None | Some("false") => false,
        Some("true") => true,
        Some(_) => {
            return Err(ConfigError::Invalid {
                name: "START_REQUIRES_FUNDS",
                problem: "expected true or false".into(),
            });
        }
    };
    Ok(HoldPolicy {
        max_unpaid,
        requires_funds,
    })
}

/// The rate limits' quotas: [`RatePolicy::default`], each class overridden by its variable
/// (`RATE_LIMIT_START`, `RATE_LIMIT_JOIN`, `RATE_LIMIT_WRITE`, `RATE_LIMIT_READ`:
/// `fan=<quota>/<seconds>,addr=<quota>/<seconds>`).
pub fn rate_policy(source: &dyn Source) -> Result<RatePolicy, ConfigError> {
    let mut policy = RatePolicy::default();
    for class in RouteClass::LIMITED {
        let name = class.variable();
        if let (Some(text), Some(slot)) = (optional(source, name), policy.of_mut(class)) {
            *slot = parse_class_policy(&text)
                .map_err(|problem| ConfigError::Invalid { name, problem })?;
        }
    }
    Ok(policy)
}

/// The human check: `TURNSTILE_SECRET` (the widget's secret, from Secrets Manager),
/// `HUMAN_CHECK_HOSTNAMES` (comma-separated: where the widget is served) and
/// `TURNSTILE_SITEVERIFY_URL` (default Cloudflare's; `http://` only on a loopback host).
pub fn human_check(source: &dyn Source) -> Result<HumanCheck, ConfigError> {
    let secret = required(
        source,
        "TURNSTILE_SECRET",
        "the Turnstile widget's secret key",
    )?;
    let url = match optional(source, "TURNSTILE_SITEVERIFY_URL") {
        Some(url) => check_service_url("TURNSTILE_SITEVERIFY_URL", &url)?,
        None => siteverify::DEFAULT_URL.to_owned(),
    };
    let hostnames: Vec<String> = required(
        source,
        "HUMAN_CHECK_HOSTNAMES",
        "the hostnames the Turnstile widget is served from, comma-separated",
    )?
    .split(',')
    .map(|name| name.trim().to_ascii_lowercase())
    .filter(|name| !name.is_empty())
    .collect();
    Ok(HumanCheck {
        siteverify: siteverify::Siteverify::new(&url, Secret::new(secret)),
        hostnames,
    })
}

/// The human check when `TURNSTILE_SECRET` is set ([`human_check`]), else `None`: a function
/// whose door asks for it only on some packs (start-purchase) refuses those while unset.
pub fn optional_human_check(source: &dyn Source) -> Result<Option<HumanCheck>, ConfigError> {
    match optional(source, "TURNSTILE_SECRET") {
        Some(_) => human_check(source).map(Some),
        None => Ok(None),
    }
}

/// `EDGE_ORIGIN_SECRETS`: the values of the edge's secret header a request must carry
/// (comma-separated: the one CloudFront sends, and the next during a rotation; docs/edge.md).
/// Unset or empty: no edge, no check (local-api, `cargo lambda watch`, a stack without the edge).
pub fn edge_origin(
    source: &dyn Source,
) -> Result<Option<crate::http::edge::EdgeOrigin>, ConfigError> {
    let name = "EDGE_ORIGIN_SECRETS";
    let text = optional(source, name).unwrap_or_default();
    crate::http::edge::EdgeOrigin::new(text.split(','))
        .map_err(|problem| ConfigError::Invalid { name, problem })
}

/// `CLOCK_SKEW_SECONDS`: how far ahead of the system clock this process's clock runs (default 0,
/// at most a day). For tests only, which reach a line's close or its beacon round without
/// waiting minutes for it; template.yaml never sets it (a test checks).
pub fn clock_skew(source: &dyn Source) -> Result<i64, ConfigError> {
    let seconds = optional_number(source, "CLOCK_SKEW_SECONDS", 0..=86_400)?.unwrap_or(0);
    Ok(i64::try_from(seconds).unwrap_or_default())
}

/// `PURCHASE_HOLD_SECONDS`: how long a started purchase holds its unit (default 600, 1-3600).
pub fn purchase_hold(source: &dyn Source) -> Result<Duration, ConfigError> {
    Ok(Duration::from_secs(
        optional_number(source, "PURCHASE_HOLD_SECONDS", 1..=MAX_HOLD_SECONDS)?
            .unwrap_or(DEFAULT_HOLD_SECONDS),
    ))
}

/// Where the identity provider's signing keys come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JwksSetting {
    /// `AUTH_JWKS_URL`: fetched over HTTPS (plain HTTP only for loopback hosts).
    Url(String),
    /// `AUTH_JWKS`: the JWKS document itself.
    Inline(String),
}

/// Session-token verification settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthConfig {
    pub issuer: String,
    pub audience: Option<String>,
    pub jwks: JwksSetting,
    pub email_claim: String,
    pub leeway: Duration,
    pub jwks_min_refresh: Duration,
}

pub const DEFAULT_LEEWAY_SECONDS: u64 = 30;
pub const DEFAULT_JWKS_MIN_REFRESH_SECONDS: u64 = 30;

impl AuthConfig {
    pub fn from_source(source: &dyn Source) -> Result<Self, ConfigError> {
        let issuer = required(
            source,
            "AUTH_ISSUER",
            "the `iss` that session tokens must carry",
        )?;
        let jwks = match (
            optional(source, "AUTH_JWKS_URL"),
            optional(source, "AUTH_JWKS"),
        ) {
            (Some(url), None) => JwksSetting::Url(check_jwks_url(&url)?),
            (None, Some(json)) => JwksSetting::Inline(json),
            (Some(_), Some(_)) => {
                return Err(ConfigError::Invalid {
                    name: "AUTH_JWKS_URL",
                    problem: "set either AUTH_JWKS_URL or AUTH_JWKS, not both".into(),
                });
            }
            (None, None) => {
                return Err(ConfigError::Missing {
                    name: "AUTH_JWKS_URL",
                    purpose: "the identity provider's JWKS address (or AUTH_JWKS with the JWKS itself)",
                });
            }
        };
        Ok(Self {
            issuer,
            audience: optional(source, "AUTH_AUDIENCE"),
            jwks,
            email_claim: optional(source, "AUTH_EMAIL_CLAIM").unwrap_or_else(|| "email".into()),
            leeway: Duration::from_secs(
                optional_number(source, "AUTH_LEEWAY_SECONDS", 0..=300)?
                    .unwrap_or(DEFAULT_LEEWAY_SECONDS),
            ),
            jwks_min_refresh: Duration::from_secs(
                optional_number(source, "AUTH_JWKS_MIN_REFRESH_SECONDS", 1..=86_400)?
                    .unwrap_or(DEFAULT_JWKS_MIN_REFRESH_SECONDS),
            ),
        })
    }
}

/// Accepts `https://` addresses, and `http://` only on a loopback host.
fn check_jwks_url(url: &str) -> Result<String, ConfigError> {
    check_service_url("AUTH_JWKS_URL", url)
}

/// Whether the URL's host is a loopback address (127.0.0.0/8, ::1, localhost).
pub fn is_loopback(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        None => false,
    }
}

pub const DEFAULT_STRIPE_API_BASE: &str = "https://api.stripe.com";

/// `STRIPE_API_BASE` (default `https://api.stripe.com`; plain `http://` only on a loopback host)
/// and `STRIPE_SECRET_KEY` (required). A free function, not `StripeApi::from_source`: the type is
/// the top-ups', and an inherent impl may not be written outside its crate.
pub fn stripe_api(source: &dyn Source) -> Result<StripeApi, ConfigError> {
    let base = match optional(source, "STRIPE_API_BASE") {
        Some(base) => check_service_url("STRIPE_API_BASE", &base)?,
        None => DEFAULT_STRIPE_API_BASE.to_owned(),
    };
    let secret_key = required(
        source,
        "STRIPE_SECRET_KEY",
        "the Stripe secret key that creates Checkout Sessions",
    )?;
    Ok(StripeApi {
        base,
        secret_key: Secret::new(secret_key),
    })
}

/// `STRIPE_WEBHOOK_SECRET`: the webhook endpoint's signing secret (`whsec_...`), used whole as
/// the HMAC key.
pub fn stripe_webhook_secret(source: &dyn Source) -> Result<Secret, ConfigError> {
    required(
        source,
        "STRIPE_WEBHOOK_SECRET",
        "the signing secret of Stripe's webhook endpoint (whsec_...)",
    )
    .map(Secret::new)
}

/// `ACCOUNT_PSEUDONYM_KEY`: the operator's secret (at least 32 bytes) that makes a deleted
/// fan's pseudonym, under which the books keep their money (docs/account-deletion.md).
pub fn pseudonym_key(source: &dyn Source) -> Result<domain::account::PseudonymKey, ConfigError> {
    let name = "ACCOUNT_PSEUDONYM_KEY";
    let text = required(
        source,
        name,
        "the key of deleted fans' pseudonyms (at least 32 bytes)",
    )?;
    domain::account::PseudonymKey::new(&text).map_err(|error| ConfigError::Invalid {
        name,
        problem: error.to_string(),
    })
}

/// `AUTH_PROVIDER_WEBHOOK_SECRETS`: the identity provider's webhook secrets (`whsec_...`,
/// comma-separated: two while the provider rotates it), which its events are verified with.
pub fn provider_webhook_secrets(
    source: &dyn Source,
) -> Result<Vec<domain::webhooks::SigningSecret>, ConfigError> {
    let name = "AUTH_PROVIDER_WEBHOOK_SECRETS";
    let text = required(
        source,
        name,
        "the identity provider's webhook signing secrets (whsec_..., comma-separated)",
    )?;
    text.split(',')
        .map(|secret| {
            domain::webhooks::SigningSecret::parse(secret.trim()).map_err(|error| {
                ConfigError::Invalid {
                    name,
                    problem: error.to_string(),
                }
            })
        })
        .collect()
}

/// `TOPUP_MIN_AMOUNT` and `TOPUP_MAX_AMOUNT` (minor units; defaults 100 and 50000) and
/// `TOPUP_CURRENCIES` (comma-separated ISO 4217 codes; default `USD`).
pub fn top_up_policy(source: &dyn Source) -> Result<TopUpPolicy, ConfigError> {
    let bounds = 1..=MAX_CREDIT;
    let min_amount =
        optional_number(source, "TOPUP_MIN_AMOUNT", bounds.clone())?.unwrap_or(DEFAULT_MIN_AMOUNT);
    let max_amount =
        optional_number(source, "TOPUP_MAX_AMOUNT", bounds)?.unwrap_or(DEFAULT_MAX_AMOUNT);
    if min_amount > max_amount {
        return Err(ConfigError::Invalid {
            name: "TOPUP_MAX_AMOUNT",
            problem: "must not be below TOPUP_MIN_AMOUNT".into(),
        });
    }
    let currencies: Vec<String> = optional(source, "TOPUP_CURRENCIES")
        .unwrap_or_else(|| DEFAULT_CURRENCY.to_owned())
        .split(',')
        .map(|code| code.trim().to_owned())
        .collect();
    if !currencies.iter().all(|code| is_currency(code)) {
        return Err(ConfigError::Invalid {
            name: "TOPUP_CURRENCIES",
            problem: "expected ISO 4217 codes (three capital letters), separated by commas".into(),
        });
    }
    Ok(TopUpPolicy {
        min_amount,
        max_amount,
        currencies,
    })
}

/// `TOPUP_SUCCESS_URL` and `TOPUP_CANCEL_URL` (required): where Stripe's Checkout page sends the
/// fan back to, paid or not (`https://`, or `http://` on a loopback host).
pub fn top_up_return_urls(source: &dyn Source) -> Result<ReturnUrls, ConfigError> {
    let url = |name: &'static str, purpose: &'static str| {
        check_service_url(name, &required(source, name, purpose)?)
    };
    Ok(ReturnUrls {
        success: url(
            "TOPUP_SUCCESS_URL",
            "where Checkout sends the fan after paying",
        )?,
        cancel: url(
            "TOPUP_CANCEL_URL",
            "where Checkout sends the fan who cancels",
        )?,
    })
}

/// `QUEUE_RECEIPT_KEY`: a secret of at least 32 characters (the stack generates one in Secrets
/// Manager) whose SHA-256 is the Ed25519 seed the queue signs its entries' receipts with; its
/// public key is published with every queue. Required: a join must never answer a receipt
/// nobody can check.
pub fn queue_receipt_signer(source: &dyn Source) -> Result<ReceiptSigner, ConfigError> {
    let secret = required(
        source,
        "QUEUE_RECEIPT_KEY",
        "the secret the waiting room's receipts are signed with",
    )?;
    if secret.len() < MIN_RECEIPT_KEY_LEN {
        return Err(ConfigError::Invalid {
            name: "QUEUE_RECEIPT_KEY",
            problem: format!("must be at least {MIN_RECEIPT_KEY_LEN} characters"),
        });
    }
    let seed = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, secret.as_bytes());
    Ok(ReceiptSigner::from_seed(seed.as_ref()).expect("a SHA-256 is 32 bytes"))
}

/// The shortest receipt secret: 32 characters of a generated secret carry well over 128 bits.
pub const MIN_RECEIPT_KEY_LEN: usize = 32;

/// `url` when it is `https://`, or `http://` on a loopback host, for variable `name`.
/// `DRAND_LOCAL_BEACON=1`: the local beacon of scripts/local (template.yaml never sets it, so no
/// deployed function accepts a local beacon); otherwise `DRAND_URLS`, drand's relays,
/// comma-separated (default [`DEFAULT_RELAYS`]; plain `http://` only on a loopback host).
pub fn beacon_source(source: &dyn Source) -> Result<BeaconSource, ConfigError> {
    match optional(source, "DRAND_LOCAL_BEACON").as_deref() {
        None => {}
        Some("1") => return Ok(BeaconSource::Local),
        Some(_) => {
            return Err(ConfigError::Invalid {
                name: "DRAND_LOCAL_BEACON",
                problem: "set it to 1 (scripts/local only) or leave it unset".into(),
            });
        }
    }
    let Some(urls) = optional(source, "DRAND_URLS") else {
        return Ok(BeaconSource::Relays(
            DEFAULT_RELAYS.iter().map(|&url| url.to_owned()).collect(),
        ));
    };
    let relays = urls
        .split(',')
        .map(str::trim)
        .filter(|url| !url.is_empty())
        .map(|url| check_service_url("DRAND_URLS", url))
        .collect::<Result<Vec<_>, _>>()?;
    if relays.is_empty() {
        return Err(ConfigError::Invalid {
            name: "DRAND_URLS",
            problem: "lists no relay".into(),
        });
    }
    Ok(BeaconSource::Relays(relays))
}

fn check_service_url(name: &'static str, url: &str) -> Result<String, ConfigError> {
    let invalid = |problem: &str| ConfigError::Invalid {
        name,
        problem: problem.into(),
    };
    let parsed = url::Url::parse(url).map_err(|_| invalid("not a valid URL"))?;
    match parsed.scheme() {
        "https" => Ok(url.to_owned()),
        "http" if is_loopback(&parsed) => Ok(url.to_owned()),
        "http" => Err(invalid(
            "plain http is only allowed for loopback addresses; use https",
        )),
        _ => Err(invalid("the scheme must be https")),
    }
}

#[cfg(test)]
mod tests;
