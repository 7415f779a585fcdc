//! What the purchase functions' binary tests share: a table on moto with a JWKS endpoint, a
//! function binary served by a Runtime API emulator, the purchase events, purchases reserved and
//! balances credited directly in the store, and the event fixtures of `infra/events`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use domain::cash::parse_credit;
use domain::purchases::{Purchase, StartRequest, purchase_id};
use domain::timestamp::Timestamp;
use serde_json::Value;
use store::DynamoStore;
use store::cash::{CreditCash, ListDebits};
use store::purchases::{StartPurchase, Started};

use crate::events::ApiEvent;
use crate::http_stub::{HttpStub, Reply};
use crate::runtime_api::{Outcome, RuntimeApi, http_parts};
use crate::tokens::{AUDIENCE, ISSUER, jwks_json};

/// How long a test waits for one invocation.
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// A table and the identity provider's JWKS endpoint, and the environment that points a
/// function at both.
pub struct PurchaseEnv {
    pub store: DynamoStore,
    /// `AWS_ENDPOINT_URL_DYNAMODB`: moto, or a fault proxy in front of it.
    pub endpoint: String,
    pub idp: HttpStub,
}

impl PurchaseEnv {
    /// A new table on this test binary's moto.
    pub async fn new() -> Self {
        let store = crate::moto::shared_table().await;
        Self::with(store, crate::moto::shared_endpoint()).await
    }

    /// A new table holding pack `p` (`packs::active`), reached by the functions through a fault
    /// proxy in front of this test binary's moto.
    pub async fn behind_proxy() -> (Self, crate::fault_proxy::FaultProxy) {
        let store = crate::moto::shared_table().await;
        crate::packs::save(&store, &crate::packs::active("p", 10)).await;
        let proxy = crate::fault_proxy::FaultProxy::start(crate::moto::shared_endpoint()).await;
        (Self::with(store, &proxy.endpoint()).await, proxy)
    }

    /// A new table reached one request at a time ([`crate::moto::atomic_table`]), by the
    /// functions through the same proxy: concurrent invocations race as on DynamoDB. Keep the
    /// proxy alive while the functions run.
    pub async fn atomic() -> (crate::fault_proxy::FaultProxy, Self) {
        let (one_at_a_time, store) = crate::moto::atomic_table().await;
        let endpoint = one_at_a_time.endpoint();
        (one_at_a_time, Self::with(store, &endpoint).await)
    }

    /// `store`, reached by the functions at `endpoint`.
    pub async fn with(store: DynamoStore, endpoint: &str) -> Self {
        Self {
            store,
            endpoint: endpoint.to_owned(),
            idp: HttpStub::start(Reply::Json(jwks_json())).await,
        }
    }

    /// The environment of a purchase function: the table, DynamoDB's endpoint, the test issuer
    /// and audience, the JWKS URL; then `extra`.
    pub fn vars(&self, extra: &[(&str, &str)]) -> Vec<(String, String)> {
        let mut vars: Vec<(String, String)> = [
            ("TABLE_NAME", self.store.table().to_owned()),
            ("AWS_ENDPOINT_URL_DYNAMODB", self.endpoint.clone()),
            ("AUTH_ISSUER", ISSUER.to_owned()),
            ("AUTH_AUDIENCE", AUDIENCE.to_owned()),
            ("AUTH_JWKS_URL", self.idp.url("/.well-known/jwks.json")),
            ("RUST_LOG", "warn".to_owned()),
        ]
        .into_iter()
        .map(|(name, value)| (name.to_owned(), value))
        .collect();
        for (name, value) in extra {
            vars.retain(|(known, _)| known != name);
            vars.push(((*name).to_owned(), (*value).to_owned()));
        }
        vars
    }

    /// `binary` started against this table and JWKS, with `extra` variables.
    pub async fn spawn(&self, binary: &str, extra: &[(&str, &str)]) -> Function {
        Function::spawn(binary, &self.vars(extra)).await
    }

    /// Like [`PurchaseEnv::spawn`], keeping what the function writes on standard output (its
    /// log): [`Function::stop`] hands it over.
    pub async fn spawn_logged(&self, binary: &str, extra: &[(&str, &str)]) -> Function {
        Function::spawn_logged(binary, &self.vars(extra)).await
    }
}

/// `event` answered 503 with `Retry-After` by `function` while DynamoDB (behind `proxy`)
/// throttles, then 200 by the same process once it recovers.
pub async fn assert_outage_then_recovery(
    function: &Function,
    proxy: &crate::fault_proxy::FaultProxy,
    event: &ApiEvent,
) {
    use crate::fault_proxy::{Fault, THROTTLING};
    proxy.set(THROTTLING);
    function.call(event).await.assert_unavailable();
    proxy.set(Fault::None);
    let answer = function.call(event).await;
    assert_eq!(answer.status, 200, "{answer:?}");
}

/// A function binary served by its own Runtime API emulator; killed when dropped.
pub struct Function {
    pub runtime: RuntimeApi,
    pub process: tokio::process::Child,
    /// Reads the process's standard output until it closes (when spawned logged).
    log: Option<tokio::task::JoinHandle<String>>,
}

/// Status, JSON body (`null` when none) and headers of an answer.
#[derive(Debug, Clone)]
pub struct Answer {
    pub status: u16,
    pub body: Value,
    pub headers: Value,
}

impl Answer {
    /// The error code of an error answer.
    pub fn code(&self) -> Option<&str> {
        self.body["error"]["code"].as_str()
    }

    /// A header's value (names are lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers[name].as_str()
    }

    /// Checks that this is the API's 503: `service_unavailable` with `Retry-After`.
    pub fn assert_unavailable(&self) {
        assert_eq!(
            (self.status, self.code(), self.header("retry-after")),
            (503, Some("service_unavailable"), Some("1")),
            "{self:?}"
        );
    }
}

impl Function {
    pub async fn spawn(binary: &str, vars: &[(String, String)]) -> Self {
        let runtime = RuntimeApi::start().await;
        let process = runtime.spawn_quiet(binary, &borrowed(vars));
        Self {
            runtime,
            process,
            log: None,
        }
    }

    /// Like [`Function::spawn`], reading its standard output as it comes (a pipe left unread
    /// would stop the function once full).
    pub async fn spawn_logged(binary: &str, vars: &[(String, String)]) -> Self {
        use tokio::io::AsyncReadExt;
        let runtime = RuntimeApi::start().await;
        let mut process = runtime.spawn_logged(binary, &borrowed(vars));
        let mut stdout = process.stdout.take().expect("standard output is piped");
        let log = tokio::spawn(async move {
            let mut log = String::new();
            stdout
                .read_to_string(&mut log)
                .await
                .expect("the function's log is UTF-8");
            log
        });
        Self {
            runtime,
            process,
            log: Some(log),
        }
    }

    /// Stops the process; everything it wrote on standard output (empty when spawned quiet).
    /// Each invocation's output is written before its answer, so the log holds all of it.
    pub async fn stop(mut self) -> String {
        self.process
            .start_kill()
            .expect("the function can be stopped");
        self.process.wait().await.expect("the function stops");
        match self.log.take() {
            Some(log) => log.await.expect("the log reader"),
            None => String::new(),
        }
    }

    /// What the function answered to `event` (a plain event's answer, or an error, as is).
    pub async fn invoke(&self, event: Value) -> Outcome {
        self.runtime
            .invoke(event, TIMEOUT)
            .await
            .expect("the function answered in time")
    }

    /// The HTTP answer to an API Gateway event.
    pub async fn call(&self, event: &ApiEvent) -> Answer {
        self.call_json(event.to_json()).await
    }

    /// The DynamoDB requests per operation of the answer to `event`, counted at `proxy` (the
    /// function's endpoint); the answer must be `status`.
    pub async fn requests_of(
        &self,
        proxy: &crate::fault_proxy::FaultProxy,
        event: &ApiEvent,
        status: u16,
    ) -> std::collections::BTreeMap<String, usize> {
        let (answer, made) = proxy.counting(self.call(event)).await;
        assert_eq!(answer.status, status, "{answer:?}");
        made
    }

    /// The HTTP answer to an API Gateway event given as JSON (a fixture).
    pub async fn call_json(&self, event: Value) -> Answer {
        let outcome = self.invoke(event).await;
        let (status, body) = http_parts(&outcome);
        let Outcome::Response(document) = outcome else {
            unreachable!("http_parts accepted it")
        };
        Answer {
            status,
            body,
            headers: document["headers"].clone(),
        }
    }

    /// Whether the process still runs.
    pub fn is_running(&mut self) -> bool {
        self.process.try_wait().expect("process status").is_none()
    }
}

fn borrowed(vars: &[(String, String)]) -> Vec<(&str, &str)> {
    vars.iter()
        .map(|(name, value)| (name.as_str(), value.as_str()))
        .collect()
}

/// `POST /api/packs/{pack}/purchases` with `token`, `key` (`Idempotency-Key`) and a JSON body.
pub fn start_event(
    pack: &str,
    token: Option<&str>,
    key: Option<&str>,
    body: Option<&str>,
) -> ApiEvent {
    let mut event = ApiEvent::post(&format!("/api/packs/{pack}/purchases"));
    if let Some(token) = token {
        event = event.bearer(token);
    }
    if let Some(key) = key {
        event = event.header("idempotency-key", key);
    }
    match body {
        Some(body) => event.json(body),
        None => event,
    }
}

/// `GET /api/packs/{pack}/purchases/{purchase}` with `token`.
pub fn get_event(pack: &str, purchase: &str, token: &str) -> ApiEvent {
    ApiEvent::get(&format!("/api/packs/{pack}/purchases/{purchase}")).bearer(token)
}

/// `PUT /api/packs/{pack}/purchases/{purchase}` with `token`, paying with Cash.
pub fn complete_event(pack: &str, purchase: &str, token: &str) -> ApiEvent {
    ApiEvent::new("PUT", &format!("/api/packs/{pack}/purchases/{purchase}"))
        .bearer(token)
        .json(r#"{"payment":{"method":"cash"}}"#)
}

/// Reserves a unit of `pack` for `user` directly in the store, as a start with `key` (and no
/// client seed) does, holding it for `hold_seconds`.
pub async fn reserve(
    store: &DynamoStore,
    user: &str,
    pack: &str,
    key: &str,
    hold_seconds: i64,
) -> Purchase {
    let request = start_request(user, pack, key, Timestamp::now(), hold_seconds);
    match store.start_purchase(&request).await {
        Ok(Started::Created(purchase)) => purchase,
        other => panic!("reserving {pack} for {user}: {other:?}"),
    }
}

/// A start of `pack` by `user` with `key` (and no client seed) at `now`, holding the unit for
/// `hold_seconds`, under [`ROOMY`].
pub fn start_request(
    user: &str,
    pack: &str,
    key: &str,
    now: Timestamp,
    hold_seconds: i64,
) -> StartRequest {
    StartRequest {
        user_id: crate::ids::user(user),
        pack_id: crate::ids::pack(pack),
        purchase_id: purchase_id(&crate::ids::user(user), key),
        requested_seed: None,
        client_seed: domain::purchases::random_client_seed(),
        now,
        expires_at: now.plus_seconds(hold_seconds).expect("in range"),
        policy: ROOMY,
        human_checked: false,
    }
}

/// How many debits `user` has (their payments' ledger entries).
pub async fn debit_count(store: &impl ListDebits, user: &str) -> usize {
    debits_of(store, user).await.len()
}

/// What `user`'s debits add up to, in minor units.
pub async fn debited(store: &impl ListDebits, user: &str) -> u64 {
    debits_of(store, user)
        .await
        .iter()
        .map(|debit| debit.amount.amount)
        .sum()
}

async fn debits_of(store: &impl ListDebits, user: &str) -> Vec<domain::cash::Debit> {
    store
        .list_debits(&crate::ids::user(user))
        .await
        .unwrap_or_else(|e| panic!("the debits of {user}: {e}"))
}

/// Credits `user` `amount` minor units of `currency` (reference `reference`: once).
pub async fn credit(
    store: &impl CreditCash,
    user: &str,
    amount: u64,
    currency: &str,
    reference: &str,
) {
    let credit = parse_credit(user, &amount.to_string(), currency, reference)
        .unwrap_or_else(|e| panic!("credit {amount} {currency} to {user}: {e}"));
    store
        .credit_cash(&credit, Timestamp::now())
        .await
        .unwrap_or_else(|e| panic!("credit {amount} {currency} to {user}: {e}"));
}

/// `infra/events/<name>.json`, with `<TOKEN>` replaced by `token` when given.
pub fn fixture(name: &str, token: Option<&str>) -> Value {
    let path = format!("{}/../infra/events/{name}.json", env!("CARGO_MANIFEST_DIR"));
    let mut text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    if let Some(token) = token {
        text = text.replace("<TOKEN>", token);
    }
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The shipped seed's pack `id` (`infra/seed/packs.json`), which the event fixtures name.
/// A hold policy roomy enough that tests about other rules never meet it (the cap's own tests
/// set theirs).
pub const ROOMY: domain::purchases::HoldPolicy = domain::purchases::HoldPolicy {
    max_unpaid: domain::purchases::MAX_MAX_UNPAID_HOLDS,
    requires_funds: false,
};

pub fn seed_pack(id: &str) -> domain::packs::Pack {
    let path = format!("{}/../infra/seed/packs.json", env!("CARGO_MANIFEST_DIR"));
    let packs = domain::packs::seed::parse_seed(&std::fs::read(&path).expect("the shipped seed"))
        .expect("the shipped seed parses");
    packs
        .into_iter()
        .find(|pack| pack.id == id)
        .unwrap_or_else(|| panic!("the shipped seed has no {id}"))
}

/// The binary of another function, beside `this_binary` (a test's own `CARGO_BIN_EXE_...`): every
/// function is a binary of the `functions` crate, and cargo builds them all before its tests.
pub fn sibling_binary(this_binary: &str, name: &str) -> PathBuf {
    Path::new(this_binary).with_file_name(name)
}

/// Makes, directly in the store, the purchase that `infra/events/start-purchase.json` starts for
/// the user `me` (its pack, key and client seed; the shipped seed's pack is saved first), which
/// the get-purchase and complete-purchase fixtures name.
pub async fn reserve_fixture_purchase(store: &DynamoStore) -> Purchase {
    crate::packs::save(store, &seed_pack("nba-rookie-2026")).await;
    let start = fixture("start-purchase", None);
    let key = start["headers"]["idempotency-key"]
        .as_str()
        .expect("the fixture's key");
    let body: Value =
        serde_json::from_str(start["body"].as_str().expect("a body")).expect("a JSON body");
    let seed = body["clientSeed"]
        .as_str()
        .expect("the fixture's clientSeed");
    let pack = start["pathParameters"]["packId"]
        .as_str()
        .expect("the fixture's packId");
    let now = Timestamp::now();
    let request = StartRequest {
        user_id: crate::ids::user("me"),
        pack_id: crate::ids::pack(pack),
        purchase_id: purchase_id(&crate::ids::user("me"), key),
        requested_seed: Some(seed.into()),
        client_seed: seed.into(),
        now,
        expires_at: now.plus_seconds(600).expect("in range"),
        policy: ROOMY,
        human_checked: false,
    };
    match store.start_purchase(&request).await {
        Ok(Started::Created(purchase)) => purchase,
        other => panic!("the fixture purchase: {other:?}"),
    }
}
