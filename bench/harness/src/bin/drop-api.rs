//! `drop-api PORT SEED_FILE BUYERS`: the local API of a drop. local-api's own server (the
//! `local-api` library: its router of every route, over the same handlers) over the in-memory
//! store seeded from SEED_FILE, run as local-api runs it
//! (a multi-threaded runtime, the hold sweep every 5 s, logs at `RUST_LOG`), with one
//! difference: before it serves, buyers `drop-buyer-0` to `drop-buyer-{BUYERS-1}` are each
//! credited, through the store, the price of one unit of the seed's first pack. local-api
//! credits only demo-user, and its in-memory store cannot be reached from outside the process.
//!
//! Tokens are checked as local-api checks them (the production verifier, its keys fetched from
//! this server's `/.well-known/jwks.json`), against testkit's keys: the benchmark signs with
//! testkit's ES256 key, the algorithm of local-api's identity provider.

use std::time::Duration;

use local_api::app::AppSettings;
use local_api::{checkout, server};

use api::config::{self, AuthConfig, Env, JwksSetting};
use domain::cash::parse_credit;
use domain::packs::seed::parse_seed;
use domain::timestamp::Timestamp;
use store::MemoryStore;
use store::cash::CreditCash;
use testkit::tokens::{AUDIENCE, ISSUER, jwks_json};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [port, seed, buyers] = args.as_slice() else {
        eprintln!("usage: drop-api PORT SEED_FILE BUYERS");
        std::process::exit(2);
    };
    let port: u16 = port.parse().expect("a port number");
    let buyers: usize = buyers.parse().expect("a number of buyers");
    let seed = std::fs::read(seed).expect("read the seed file");
    lambda::telemetry::init_pretty();
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
        .block_on(serve(port, &seed, buyers));
}

async fn serve(port: u16, seed: &[u8], buyers: usize) {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("bound"));
    let packs = parse_seed(seed).expect("a valid seed");
    let store = MemoryStore::with_packs(&packs);
    let price = &packs.first().expect("a pack").price;
    for i in 0..buyers {
        let credit = parse_credit(
            &format!("drop-buyer-{i}"),
            &price.amount.to_string(),
            &price.currency,
            &format!("drop-grant-{i}"),
        )
        .expect("a valid credit");
        store
            .credit_cash(&credit, Timestamp::now())
            .await
            .expect("credit a buyer");
    }
    let auth = AuthConfig {
        issuer: ISSUER.into(),
        audience: Some(AUDIENCE.into()),
        jwks: JwksSetting::Url(format!("{base}/.well-known/jwks.json")),
        email_claim: "email".into(),
        leeway: Duration::from_secs(config::DEFAULT_LEEWAY_SECONDS),
        jwks_min_refresh: Duration::from_secs(config::DEFAULT_JWKS_MIN_REFRESH_SECONDS),
    };
    server::spawn_sweep(store.clone());
    let settings = AppSettings {
        auth,
        max_body_bytes: config::max_body_bytes(&Env).expect("MAX_BODY_BYTES"),
        hold: config::purchase_hold(&Env).expect("PURCHASE_HOLD_SECONDS"),
        hold_policy: Default::default(),
        top_up_policy: Default::default(),
        webhook_secret: checkout::webhook_secret().expect("LOCAL_API_WEBHOOK_SECRET"),
        operator_key: local_api::operator::operator_key().expect("LOCAL_API_OPERATOR_KEY"),
        provider_secret: local_api::operator::provider_secret().expect("a provider secret"),
        pseudonyms: local_api::operator::pseudonym_key().expect("LOCAL_API_PSEUDONYM_KEY"),
        webhook_retry_scale: Default::default(),
        base,
        jwks: serde_json::from_str(&jwks_json()).expect("the test JWKS"),
        openapi: serde_json::Value::Null,
        limits: server::Limits::from_env().expect("LOCAL_API_* limits"),
        // The drop's thousands of fans come from one loopback address: the benchmark measures
        // the drop, the limits' cost is reckoned apart (BENCHMARKS.md, rate limits).
        rate_limits: None,
        // The benchmark's clients are no browsers.
        cors: local_api::cors::Cors::none(),
    };
    let app = server::App::new(&store, settings);
    server::serve(app, listener, std::future::pending()).await;
}
