//! The binaries the Lambda runs measure, and the requests that drive them: every request one
//! that succeeds. The purchase functions run as a chain on one table: the starts' reservations
//! are what the completions pay, and the completed purchases are what the opens open; whatever a
//! function run alone lacks is made beforehand through the store (reservations, payments), which
//! talks to moto directly, not through the proxy that counts the functions' requests.

use std::collections::VecDeque;
use std::time::Duration;

use serde_json::{Value, json};
use shared::packs::seed::parse_seed;
use shared::store::DynamoStore;
use shared::store::purchases::CompletePurchase;
use shared::timestamp::Timestamp;
use testkit::events::ApiEvent;
use testkit::fault_proxy::FaultProxy;
use testkit::http_stub::{HttpStub, Reply};
use testkit::moto::MotoServer;
use testkit::purchases::{complete_event, credit, get_event, reserve, start_event};
use testkit::runtime_api::Outcome;
use testkit::tokens::{AUDIENCE, ISSUER, TestKey, jwks_json};

use crate::stats::day_token;

pub const SEED: &[u8] = include_bytes!("../../../infra/seed/packs.json");
/// The pack the purchase functions buy: the shipped seed's, on sale, 5 items per pack drawn from
/// 4 rarities, no limit per buyer, 31,244 left.
pub const PACK: &str = "nba-rookie-2026";
/// The one buyer of the Lambda runs (a start per invocation, each with its own key).
pub const BUYER: &str = "bench-buyer";
/// How long an invocation may take before the run stops.
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// The binaries measured, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Hello,
    HelloDynamodb,
    ListPacks,
    GetPack,
    Web3Link,
    GetPurchase,
    StartPurchase,
    CompletePurchase,
    OpenPack,
    ReleaseHolds,
}

pub const ALL: [Kind; 10] = [
    Kind::Hello,
    Kind::HelloDynamodb,
    Kind::ListPacks,
    Kind::GetPack,
    Kind::Web3Link,
    Kind::GetPurchase,
    Kind::StartPurchase,
    Kind::CompletePurchase,
    Kind::OpenPack,
    Kind::ReleaseHolds,
];

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Self::Hello => "hello",
            Self::HelloDynamodb => "hello-dynamodb",
            Self::ListPacks => "list-packs",
            Self::GetPack => "get-pack",
            Self::Web3Link => "web3-link",
            Self::GetPurchase => "get-purchase",
            Self::StartPurchase => "start-purchase",
            Self::CompletePurchase => "complete-purchase",
            Self::OpenPack => "open-pack",
            Self::ReleaseHolds => "release-holds",
        }
    }

    pub fn is_floor(self) -> bool {
        matches!(self, Self::Hello | Self::HelloDynamodb)
    }

    /// Whether it checks session tokens (and so fetches the JWKS).
    pub fn checks_tokens(self) -> bool {
        matches!(
            self,
            Self::Web3Link
                | Self::GetPurchase
                | Self::StartPurchase
                | Self::CompletePurchase
                | Self::OpenPack
        )
    }

    /// Its CPU target per warm invocation, as a multiple of hello-dynamodb's (issue 13).
    pub fn cpu_target(self) -> Option<f64> {
        match self {
            Self::ListPacks | Self::GetPack => Some(2.5),
            Self::Web3Link | Self::GetPurchase => Some(3.0),
            Self::StartPurchase | Self::CompletePurchase | Self::OpenPack => Some(3.5),
            _ => None,
        }
    }

    /// The DynamoDB requests its issue allows per request.
    pub fn allowed_calls(self) -> &'static str {
        match self {
            Self::Hello => "none",
            Self::HelloDynamodb => "1 Query (raw)",
            Self::ListPacks => "1 Query",
            Self::GetPack => "1 request",
            Self::Web3Link => "1 UpdateItem",
            Self::GetPurchase => "1 read",
            Self::StartPurchase | Self::CompletePurchase => "1 read + 1 transactional write",
            Self::OpenPack => "at most 2 reads + 1 write",
            Self::ReleaseHolds => "informative: 1 Query when nothing has expired",
        }
    }

    /// Whether it uses the purchases table (else the read-only table of the seed).
    fn on_purchases_table(self) -> bool {
        matches!(
            self,
            Self::GetPurchase
                | Self::StartPurchase
                | Self::CompletePurchase
                | Self::OpenPack
                | Self::ReleaseHolds
        )
    }
}

/// Everything the functions run against: moto with two tables (the seed alone for the read
/// functions and the floors; the seed plus the buyer's purchases and Cash for the purchase
/// functions), the counting proxy in front of moto, the identity provider's JWKS endpoint, and
/// the purchases made so far.
pub struct Bench {
    /// Kept for the run: moto stops when it is dropped.
    _moto: MotoServer,
    pub proxy: FaultProxy,
    pub idp: HttpStub,
    reads: DynamoStore,
    pub purchases: DynamoStore,
    token: String,
    /// Reserved purchases of [`BUYER`], oldest first: what completions pay.
    reserved: VecDeque<String>,
    /// Paid purchases of [`BUYER`], oldest first: what opens open.
    completed: VecDeque<String>,
    /// The purchase get-purchase reads.
    shown: Option<String>,
    /// Idempotency keys and credit references used so far.
    next_key: usize,
}

impl Bench {
    pub async fn start() -> Self {
        let moto = MotoServer::start().await;
        let seed = parse_seed(SEED).expect("the shipped seed");
        let reads = moto.new_table().await;
        let purchases = moto.new_table().await;
        for pack in &seed {
            testkit::packs::save(&reads, pack).await;
            testkit::packs::save(&purchases, pack).await;
        }
        // Enough for every purchase a run makes (499 each).
        credit(&purchases, BUYER, 100_000_000, "USD", "bench-grant").await;
        let proxy = FaultProxy::start(&moto.endpoint).await;
        let idp = HttpStub::start(Reply::Json(jwks_json())).await;
        Self {
            _moto: moto,
            proxy,
            idp,
            reads,
            purchases,
            token: day_token(TestKey::Rsa, BUYER),
            reserved: VecDeque::new(),
            completed: VecDeque::new(),
            shown: None,
            next_key: 0,
        }
    }

    /// The environment of `kind` (besides Lambda's own).
    pub fn env(&self, kind: Kind) -> Vec<(String, String)> {
        let table = if kind.on_purchases_table() {
            self.purchases.table()
        } else {
            self.reads.table()
        };
        let mut env = vec![
            ("TABLE_NAME".to_owned(), table.to_owned()),
            (
                "AWS_ENDPOINT_URL_DYNAMODB".to_owned(),
                self.proxy.endpoint(),
            ),
            ("RUST_LOG".to_owned(), "info".to_owned()),
        ];
        match kind {
            Kind::Hello => env.clear(),
            Kind::ListPacks => env.push((
                "CURSOR_SECRET".to_owned(),
                testkit::CURSOR_SECRET.to_owned(),
            )),
            _ if kind.checks_tokens() => env.extend([
                ("AUTH_ISSUER".to_owned(), ISSUER.to_owned()),
                ("AUTH_AUDIENCE".to_owned(), AUDIENCE.to_owned()),
                (
                    "AUTH_JWKS_URL".to_owned(),
                    self.idp.url("/.well-known/jwks.json"),
                ),
                ("PURCHASE_HOLD_SECONDS".to_owned(), "3600".to_owned()),
            ]),
            _ => {}
        }
        env
    }

    fn key(&mut self) -> String {
        self.next_key += 1;
        format!("bench-{}-{}", std::process::id(), self.next_key)
    }

    /// A reservation made through the store.
    async fn reserve(&mut self) -> String {
        let key = self.key();
        reserve(&self.purchases, BUYER, PACK, &key, 3600).await.id
    }

    /// The next request for `kind`, one that succeeds: a fresh reservation to pay, a fresh paid
    /// purchase to open, a new key to start with.
    pub async fn event(&mut self, kind: Kind) -> Value {
        let token = self.token.clone();
        match kind {
            Kind::Hello | Kind::HelloDynamodb => ApiEvent::get("/").to_json(),
            Kind::ListPacks => ApiEvent::get("/api/packs").to_json(),
            Kind::GetPack => ApiEvent::get(&format!("/api/packs/{PACK}")).to_json(),
            Kind::Web3Link => ApiEvent::post("/api/web3-link")
                .bearer(&token)
                .json(r#"{"payload":{"address":"0x52908400098527886E0F7030069857D2E4169EE7","chainId":1}}"#)
                .to_json(),
            Kind::GetPurchase => {
                let id = match &self.shown {
                    Some(id) => id.clone(),
                    None => {
                        let id = self.reserve().await;
                        self.shown = Some(id.clone());
                        id
                    }
                };
                get_event(PACK, &id, &token).to_json()
            }
            Kind::StartPurchase => {
                let key = self.key();
                start_event(PACK, Some(&token), Some(&key), None).to_json()
            }
            Kind::CompletePurchase => {
                let id = match self.reserved.pop_front() {
                    Some(id) => id,
                    None => self.reserve().await,
                };
                complete_event(PACK, &id, &token).to_json()
            }
            Kind::OpenPack => {
                let id = match self.completed.pop_front() {
                    Some(id) => id,
                    None => {
                        let id = self.reserve().await;
                        self.purchases
                            .complete_purchase(BUYER, PACK, &id, Timestamp::now())
                            .await
                            .expect("paying a reservation through the store");
                        id
                    }
                };
                ApiEvent::post(&format!("/api/packs/{PACK}/purchases/{id}/open"))
                    .bearer(&token)
                    .to_json()
            }
            Kind::ReleaseHolds => json!({}),
        }
    }

    /// Checks that `outcome` is `kind`'s success (a 200, a 201 for a start; the sweep's report)
    /// and keeps what the next functions of the chain need; any other outcome stops the run.
    pub fn record(&mut self, kind: Kind, outcome: Option<Outcome>) -> Value {
        let Some(Outcome::Response(mut document)) = outcome else {
            panic!("{} failed: {outcome:?}", kind.name());
        };
        if kind == Kind::ReleaseHolds {
            assert!(
                document["released"].is_u64(),
                "release-holds answered {document}"
            );
            return document;
        }
        let expected = if kind == Kind::StartPurchase {
            201
        } else {
            200
        };
        assert_eq!(
            document["statusCode"],
            expected,
            "{} did not answer {expected}: {document}",
            kind.name()
        );
        let body = document["body"].take();
        if matches!(kind, Kind::StartPurchase | Kind::CompletePurchase) {
            let parsed: Value =
                serde_json::from_str(body.as_str().unwrap_or_default()).expect("a JSON body");
            let id = parsed["purchase"]["id"]
                .as_str()
                .expect("the purchase's id")
                .to_owned();
            if kind == Kind::StartPurchase {
                self.reserved.push_back(id);
            } else {
                self.completed.push_back(id);
            }
        }
        body
    }
}
