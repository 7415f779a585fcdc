//! `local-api`: the whole API on your machine.
//!
//! ```text
//! local-api [--port N] [--dynamodb] [--seed FILE] [--catalog FILE] [--app-config FILE]
//!                                                      serve (default port 3000)
//! local-api token --sub ID [--email ADDR] [--ttl SECS]  print a session token
//! ```
//!
//! By default the store is in process, seeded from `infra/seed/catalog.json` (leagues and teams),
//! `infra/seed/packs.json` (whose packs must name that catalogue), `infra/seed/quests.json`
//! (only with the shipped packs, which its quests name) and `infra/seed/products.json`, and
//! tokens come from the local identity provider. `--dynamodb` uses the DynamoDB table
//! `TABLE_NAME` through the AWS SDK's standard variables instead, on this machine only
//! (`AWS_ENDPOINT_URL_DYNAMODB` a loopback address): the local identity provider signs a token
//! for any user.

use std::collections::BTreeSet;
use std::process::ExitCode;
use std::time::Duration;

use api::auth::TokenVerifier;
use api::config::{self, AuthConfig, Env, JwksSetting};
use api::handlers::webhooks::send::RetryScale;
use api::http::routes::routes;
use domain::cash::parse_credit;
use domain::catalog::parse_catalog;
use domain::ids::UserId;
use domain::packs::Pack;
use domain::packs::seed::parse_seed;
use domain::timestamp::{Timestamp, unix_now};
use local_api::app::AppSettings;
use local_api::banner::Banner;
use local_api::checkout;
use local_api::cors::Cors;
use local_api::demo_queue;
use local_api::idp::{self, LocalIdp};
use local_api::server::{self, App, spawn_keeper, spawn_sweep};
use store::cash::{CreditCash, GetBalance};
use store::catalog::seed_catalog;
use store::{DynamoStore, MemoryStore, Store};

const USAGE: &str = "usage:
  local-api [--port N] [--dynamodb] [--seed FILE] [--catalog FILE] [--app-config FILE]
                                                       serve the API on http://127.0.0.1:N (default 3000);
                                                       --app-config: the app's configuration (GET /api/config,
                                                       versions, maintenance), read again when FILE changes
  local-api token --sub ID [--email ADDR] [--ttl SECS] print a session token of the local identity provider";
const SHIPPED_SEED: &[u8] = include_bytes!("../../seed/packs.json");
const SHIPPED_CATALOG: &str = include_str!("../../seed/catalog.json");
const SHIPPED_QUESTS: &[u8] = include_bytes!("../../seed/quests.json");
const SHIPPED_PRODUCTS: &[u8] = include_bytes!("../../seed/products.json");
const OPENAPI: &str = include_str!("../../../openapi.yaml");
const DEMO_TTL_SECONDS: u64 = 24 * 3600;
const DEMO_USER: &str = "demo-user";

#[derive(Default)]
struct ServeArgs {
    port: u16,
    dynamodb: bool,
    seed: Option<String>,
    catalog: Option<String>,
    app_config: Option<String>,
}

struct TokenArgs {
    sub: String,
    email: Option<String>,
    ttl: u64,
}

enum Command {
    Serve(ServeArgs),
    Token(TokenArgs),
}

fn parse_args(args: &[String]) -> Result<Command, String> {
    let value = |i: usize, flag: &str| {
        args.get(i + 1)
            .cloned()
            .ok_or(format!("{flag} needs a value"))
    };
    if args.first().map(String::as_str) == Some("token") {
        let (mut sub, mut email, mut ttl) = (None, None, 3600);
        let mut i = 1;
        while i < args.len() {
            match args[i].as_str() {
                "--sub" => sub = Some(value(i, "--sub")?),
                "--email" => email = Some(value(i, "--email")?),
                "--ttl" => {
                    ttl = value(i, "--ttl")?
                        .parse()
                        .map_err(|_| "--ttl takes whole seconds")?
                }
                other => return Err(format!("unknown argument {other}")),
            }
            i += 2;
        }
        let sub = sub.filter(|s| !s.is_empty()).ok_or("--sub is required")?;
        return Ok(Command::Token(TokenArgs { sub, email, ttl }));
    }
    let mut serve = ServeArgs {
        port: 3000,
        ..ServeArgs::default()
    };
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--port" => {
                serve.port = value(i, "--port")?
                    .parse()
                    .map_err(|_| "--port takes a port number")?;
                i += 1;
            }
            "--seed" => {
                serve.seed = Some(value(i, "--seed")?);
                i += 1;
            }
            "--catalog" => {
                serve.catalog = Some(value(i, "--catalog")?);
                i += 1;
            }
            "--app-config" => {
                serve.app_config = Some(value(i, "--app-config")?);
                i += 1;
            }
            "--dynamodb" => serve.dynamodb = true,
            other => return Err(format!("unknown argument {other}")),
        }
        i += 1;
    }
    Ok(Command::Serve(serve))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    let result = match parse_args(&args) {
        Ok(Command::Token(args)) => print_token(&args),
        Ok(Command::Serve(args)) => {
            lambda::telemetry::init_pretty();
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
                .expect("tokio runtime");
            runtime.block_on(serve(args))
        }
        Err(problem) => {
            eprintln!("local-api: {problem}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(problem) => {
            eprintln!("local-api: {problem}");
            ExitCode::FAILURE
        }
    }
}

fn print_token(args: &TokenArgs) -> Result<(), String> {
    let idp = LocalIdp::load_or_create(&idp::state_dir())?;
    println!("{}", idp.token(&args.sub, args.email.as_deref(), args.ttl));
    Ok(())
}

async fn serve(args: ServeArgs) -> Result<(), String> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", args.port))
        .await
        .map_err(|e| format!("cannot listen on 127.0.0.1:{}: {e}", args.port))?;
    let base = format!(
        "http://{}",
        listener.local_addr().map_err(|e| e.to_string())?
    );
    let openapi = local_api::reference::served_document(
        serde_norway::from_str(OPENAPI).map_err(|e| format!("openapi.yaml: {e}"))?,
        &base,
    );
    let cors = Cors::from_env()?;

    let idp = LocalIdp::load_or_create(&idp::state_dir())?;
    // Exactly the production verifier, pointed at this server's JWKS.
    let auth = AuthConfig {
        issuer: idp::ISSUER.into(),
        audience: Some(idp::AUDIENCE.into()),
        jwks: JwksSetting::Url(format!("{base}/.well-known/jwks.json")),
        email_claim: "email".into(),
        leeway: Duration::from_secs(config::DEFAULT_LEEWAY_SECONDS),
        jwks_min_refresh: Duration::from_secs(config::DEFAULT_JWKS_MIN_REFRESH_SECONDS),
    };
    // Checked once here; each handler state gets its own verifier from it below.
    TokenVerifier::from_config(&auth).map_err(|e| e.to_string())?;
    let max_body_bytes = config::max_body_bytes(&Env).map_err(|e| e.to_string())?;
    // As every function reads it: the openings local-api serves score with the same weights.
    let weights = config::score_weights(&Env).map_err(|e| e.to_string())?;

    let parts = Parts {
        webhook_secret: checkout::webhook_secret()?,
        operator_key: local_api::operator::operator_key()?,
        base,
        auth,
        hold: config::purchase_hold(&Env).map_err(|e| e.to_string())?,
        idp,
        max_body_bytes,
        openapi,
        cors,
        listener,
        app_config: args.app_config.map(Into::into),
        webhooks: Vec::new(),
        webhook_retry_scale: local_api::webhooks::retry_scale_from_env()?,
    };
    if args.dynamodb {
        lambda::aws::local_dynamodb_endpoint(&Env).map_err(|e| e.to_string())?;
        let table = config::table_name(&Env).map_err(|e| e.to_string())?;
        let store = DynamoStore::new(lambda::aws::dynamodb_client().await, table.clone())
            .with_score_weights(weights);
        run(parts, store, &format!("DynamoDB table {table}"), None).await
    } else {
        let (bytes, source) = match &args.seed {
            Some(path) => (
                std::fs::read(path).map_err(|e| format!("{path}: {e}"))?,
                path.as_str(),
            ),
            None => (SHIPPED_SEED.to_vec(), "infra/seed/packs.json"),
        };
        let mut packs = parse_seed(&bytes).map_err(|e| format!("{source}: {e}"))?;
        let mut demo_line = None;
        if args.seed.is_none() {
            // Local only: the shipped lines open now, not on their (frozen, deployed) dates; on
            // a whole second, so that the banner's close reads plainly.
            let open_for = demo_queue::open_seconds_from_env()?;
            let now = Timestamp::from_unix_nanos(i128::from(unix_now()) * 1_000_000_000)
                .ok_or("the clock is not a time")?;
            demo_queue::open_at(&mut packs, now, open_for);
            demo_line = packs
                .iter()
                .find_map(|pack| Some((pack.id.to_string(), pack.queue?.closes_at)));
        }
        let (text, catalog_source) = match &args.catalog {
            Some(path) => (
                std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?,
                path.as_str(),
            ),
            None => (SHIPPED_CATALOG.to_owned(), "infra/seed/catalog.json"),
        };
        let catalog = parse_catalog(&text).map_err(|e| format!("{catalog_source}: {e}"))?;
        catalog
            .check_packs(&packs)
            .map_err(|(pack, problem)| format!("{source}: pack {pack}: {problem}"))?;
        let store = MemoryStore::with_packs(&packs).with_score_weights(weights);
        seed_catalog(&store, &catalog).await?;
        // The shipped quests name the shipped packs: another packs file comes without quests.
        let quests = if args.seed.is_none() {
            let mut quests = domain::quests::seed::parse_quests(SHIPPED_QUESTS)
                .map_err(|e| format!("infra/seed/quests.json: {e}"))?;
            domain::quests::seed::resolve(&mut quests, &packs, &catalog)
                .map_err(|e| format!("infra/seed/quests.json: {e}"))?;
            quests
        } else {
            Vec::new()
        };
        store::quests::SeedQuests::seed_quests(&store, &quests)
            .await
            .map_err(|e| e.to_string())?;
        let products = domain::products::seed::parse_products(SHIPPED_PRODUCTS)
            .map_err(|e| format!("infra/seed/products.json: {e}"))?;
        store::products::SeedProducts::seed_products(&store, &products)
            .await
            .map_err(|e| e.to_string())?;
        let webhooks = local_api::webhooks::endpoints_from_env(&store).await?;
        local_api::webhooks::follow(store.clone(), parts.webhook_retry_scale);
        credit_demo_user(&store, &packs).await?;
        let parts = Parts { webhooks, ..parts };
        run(
            parts,
            store,
            &format!(
                "in memory, {} packs from {source}, {} quests, {} products, {} leagues and {} \
                 teams from {catalog_source}",
                packs.len(),
                quests.len(),
                products.len(),
                catalog.leagues.len(),
                catalog.teams.len()
            ),
            demo_line,
        )
        .await
    }
}

struct Parts {
    /// Stripe's webhook signing secret, of the local Checkout and the webhook route.
    webhook_secret: String,
    /// The operators' key ([`local_api::operator`]).
    operator_key: String,
    base: String,
    auth: AuthConfig,
    hold: Duration,
    idp: LocalIdp,
    max_body_bytes: usize,
    openapi: serde_json::Value,
    cors: Cors,
    listener: tokio::net::TcpListener,
    /// `--app-config`: the file the app's configuration is read from, and again when it changes.
    app_config: Option<std::path::PathBuf>,
    /// The endpoints `LOCAL_API_WEBHOOK_URLS` named, with their secrets (in memory only).
    webhooks: Vec<(String, String)>,
    /// What webhook retries' waits are divided by (`LOCAL_API_WEBHOOK_RETRY_SCALE`).
    webhook_retry_scale: RetryScale,
}

/// The demo user's starting balance in each currency of the packs, so the whole purchase flow
/// works at once.
const DEMO_BALANCE: u64 = 10_000;

async fn credit_demo_user(store: &MemoryStore, packs: &[Pack]) -> Result<(), String> {
    let currencies: BTreeSet<&str> = packs.iter().map(|p| p.price.currency.as_str()).collect();
    for currency in currencies {
        let credit = parse_credit(
            DEMO_USER,
            &DEMO_BALANCE.to_string(),
            currency,
            &format!("local-demo-{currency}"),
        )
        .map_err(|e| e.to_string())?;
        store
            .credit_cash(&credit, Timestamp::now())
            .await
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Serves `store` with `parts`; `demo_line` is the demo's waiting room when local-api opened one
/// (the pack and its line's close).
async fn run<S>(
    parts: Parts,
    store: S,
    store_description: &str,
    demo_line: Option<(String, Timestamp)>,
) -> Result<(), String>
where
    S: Store + Clone + 'static,
{
    if let Some(path) = parts.app_config {
        local_api::app_config_file::follow(store.clone(), path).await?;
    }
    let base = &parts.base;
    let token = parts
        .idp
        .token(DEMO_USER, Some("demo@fan-api.local"), DEMO_TTL_SECONDS);
    let banner = Banner {
        base,
        store: store_description,
        routes: routes().len(),
        key_dir: &idp::state_dir().display().to_string(),
        webhook_secret: &parts.webhook_secret,
        operator_key: &parts.operator_key,
        webhooks: &parts.webhooks,
        webhook_retry_scale: parts.webhook_retry_scale.0.get(),
        token: &token,
        balances: &demo_balances(&store).await,
        demo_line: demo_line
            .as_ref()
            .map(|(pack, closes_at)| (pack.as_str(), *closes_at)),
        cors_origins: &parts.cors.origins(),
    };
    print!("{}", banner.text());
    spawn_sweep(store.clone());
    spawn_keeper(store.clone());
    let settings = AppSettings {
        auth: parts.auth,
        max_body_bytes: parts.max_body_bytes,
        hold: parts.hold,
        hold_policy: config::hold_policy(&Env).map_err(|e| e.to_string())?,
        top_up_policy: config::top_up_policy(&Env).map_err(|e| e.to_string())?,
        base: base.clone(),
        webhook_secret: parts.webhook_secret,
        operator_key: parts.operator_key,
        provider_secret: local_api::operator::provider_secret()?,
        pseudonyms: local_api::operator::pseudonym_key()?,
        webhook_retry_scale: parts.webhook_retry_scale,
        jwks: parts.idp.jwks(),
        openapi: parts.openapi,
        limits: server::Limits::from_env()?,
        rate_limits: Some(config::rate_policy(&Env).map_err(|e| e.to_string())?),
        cors: parts.cors,
    };
    let app = App::new(&store, settings);
    let shutdown = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    server::serve(app, parts.listener, shutdown).await;
    Ok(())
}

/// The demo user's balances, as `10000 CAD, 10000 EUR, ...` (empty when none).
async fn demo_balances<S: GetBalance>(store: &S) -> String {
    let mut shown = Vec::new();
    let demo_user = UserId::parse(DEMO_USER).expect("the demo user's id is one");
    for currency in ["CAD", "EUR", "GBP", "USD"] {
        if let Ok(balance @ 1..) = store.get_balance(&demo_user, currency).await {
            shown.push(format!("{balance} {currency}"));
        }
    }
    shown.join(", ")
}
