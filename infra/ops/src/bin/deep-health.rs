//! `deep-health`: the operators' deep check, which `GET /api/health` (public, cheap, no store
//! call) leaves out: the table, and each dependency the functions are configured with, read from
//! the same variables as theirs. It prints `application/health+json` (the IETF health-check
//! draft): `fail` when a critical part fails (the table, the identity provider's keys: no
//! request can be served or signed in), `warn` when only a non-critical one does (Stripe,
//! Turnstile, drand: top-ups, a drop's human check or a queue's draw wait, the rest is served).
//!
//! Variables: `TABLE_NAME` (required) and the AWS SDK's; `AUTH_JWKS_URL`; `STRIPE_API_BASE`
//! (checked when `STRIPE_SECRET_KEY` is set; default Stripe's); `TURNSTILE_SITEVERIFY_URL`
//! (checked when `TURNSTILE_SECRET` is set; default Cloudflare's); `DRAND_URLS` (default drand's
//! relays). Exit status: 0 pass or warn, 1 fail, 2 bad configuration.

use std::process::ExitCode;
use std::time::Duration;

use api::auth::KeySet;
use api::config::{self, Env, Source};
use bytes::Bytes;
use clients::beacon::BeaconSource;
use clients::http_client::{Roots, Schemes, https_connector};
use http_body_util::{BodyExt, Empty};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::{Value, json};
use store::DynamoStore;
use store::app_config::GetAppConfig;

/// How long a dependency has to answer.
const TIMEOUT: Duration = Duration::from_secs(3);

type Http = Client<
    hyper_rustls::HttpsConnector<hyper_util::client::legacy::connect::HttpConnector>,
    Empty<Bytes>,
>;

/// One check: its name (`component:measurement`, the draft's), whether a failure fails the
/// whole, and what it found.
struct Checked {
    name: String,
    critical: bool,
    outcome: Result<(), String>,
}

/// `url`'s status and body, when its server answers within [`TIMEOUT`].
async fn fetch(http: &Http, url: &str) -> Result<(hyper::StatusCode, Bytes), String> {
    let uri: hyper::Uri = url.parse().map_err(|e| format!("{url}: {e}"))?;
    let answered = async {
        let answer = http
            .get(uri)
            .await
            .map_err(|e| format!("unreachable: {e}"))?;
        let status = answer.status();
        let body = answer
            .into_body()
            .collect()
            .await
            .map_err(|e| format!("body: {e}"))?;
        Ok((status, body.to_bytes()))
    };
    tokio::time::timeout(TIMEOUT, answered)
        .await
        .map_err(|_| format!("no answer within {TIMEOUT:?}"))?
}

/// The identity provider's keys at `url`: a 200 whose body is a JWKS with a usable key.
async fn keys(http: &Http, url: &str) -> Result<(), String> {
    let (status, body) = fetch(http, url).await?;
    if status != hyper::StatusCode::OK {
        return Err(format!("answered {status}"));
    }
    let keys = KeySet::from_json(&body).map_err(|e| e.to_string())?;
    if keys.is_empty() {
        return Err("no usable key".into());
    }
    Ok(())
}

async fn table() -> Result<(), String> {
    let table = config::table_name(&Env).map_err(|e| e.to_string())?;
    let store = DynamoStore::new(lambda::aws::dynamodb_client().await, table);
    let read = tokio::time::timeout(TIMEOUT, store.app_config()).await;
    match read {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(error)) => Err(error.to_string()),
        Err(_) => Err(format!("no answer within {TIMEOUT:?}")),
    }
}

async fn checks(source: &dyn Source) -> Vec<Checked> {
    let http: Http = Client::builder(TokioExecutor::new()).build(https_connector(
        Roots::WebPki,
        Schemes::HttpsOrHttp,
        Some(TIMEOUT),
    ));
    let mut checked = vec![Checked {
        name: "dynamodb:table".into(),
        critical: true,
        outcome: table().await,
    }];
    if let Some(url) = source.get("AUTH_JWKS_URL") {
        checked.push(Checked {
            name: "identityProvider:keys".into(),
            critical: true,
            outcome: keys(&http, &url).await,
        });
    }
    let mut optional = Vec::new();
    if source.get("STRIPE_SECRET_KEY").is_some() {
        let base = source.get("STRIPE_API_BASE");
        optional.push((
            "stripe:reachable",
            base.unwrap_or_else(|| "https://api.stripe.com".into()),
        ));
    }
    if source.get("TURNSTILE_SECRET").is_some() {
        let url = source
            .get("TURNSTILE_SITEVERIFY_URL")
            .unwrap_or_else(|| "https://challenges.cloudflare.com/turnstile/v0/siteverify".into());
        optional.push(("turnstile:reachable", url));
    }
    if let Ok(BeaconSource::Relays(relays)) = config::beacon_source(source) {
        for relay in relays {
            optional.push(("drand:reachable", format!("{relay}/info")));
        }
    }
    for (name, url) in optional {
        checked.push(Checked {
            name: name.into(),
            critical: false,
            // Any answer: the check is of the way there, not of a credential it would need.
            outcome: fetch(&http, &url)
                .await
                .map(drop)
                .map_err(|e| format!("{url}: {e}")),
        });
    }
    checked
}

/// The health+json of `checked`, and whether it failed.
fn report(checked: &[Checked]) -> (Value, bool) {
    let status = |check: &Checked| match (&check.outcome, check.critical) {
        (Ok(()), _) => "pass",
        (Err(_), true) => "fail",
        (Err(_), false) => "warn",
    };
    let failed = checked.iter().any(|c| status(c) == "fail");
    let warned = checked.iter().any(|c| status(c) == "warn");
    let mut checks = serde_json::Map::new();
    for check in checked {
        let mut entry = json!({"status": status(check)});
        if let Err(output) = &check.outcome {
            entry["output"] = json!(output);
        }
        let list = checks
            .entry(check.name.clone())
            .or_insert_with(|| json!([]));
        list.as_array_mut().expect("a list").push(entry);
    }
    let overall = if failed {
        "fail"
    } else if warned {
        "warn"
    } else {
        "pass"
    };
    (json!({"status": overall, "checks": checks}), failed)
}

#[tokio::main]
async fn main() -> ExitCode {
    if std::env::args().nth(1).is_some() {
        eprintln!("usage: deep-health (configured by variables: see its documentation)");
        return ExitCode::from(2);
    }
    let checked = checks(&Env).await;
    let (report, failed) = report(&checked);
    println!("{}", serde_json::to_string_pretty(&report).expect("JSON"));
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
