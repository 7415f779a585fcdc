//! The binaries the Lambda runs measure, and the requests that drive them: every request one
//! that succeeds. What a request needs is made just before it through the store, which talks to
//! moto directly, not through the proxy that counts the functions' requests: a reservation to
//! pay, a paid purchase to open, a top-up with its Checkout Session for Stripe's signed event to
//! credit (cash-top-ups opens its sessions at a Stripe stub). What a request wrote is deleted
//! after it: moto copies a whole table for every action of a transaction, so a table that grew
//! by thousands of purchases would make each transaction, and the run, slower and slower.

use std::time::Duration;

use aws_lc_rs::hmac;
use aws_sdk_dynamodb::config::timeout::TimeoutConfig;
use aws_sdk_dynamodb::types::{AttributeValue, DeleteRequest, WriteRequest};
use domain::cash::Money;
use domain::ids::{PurchaseId, TopUpId, UserId};
use domain::packs::seed::parse_seed;
use domain::purchases::{StartRequest, purchase_id, random_client_seed};
use domain::timestamp::Timestamp;
use domain::topups::{Checkout, TopUp, credit_reference, top_up_id};
use serde_json::{Value, json};
use store::DynamoStore;
use store::purchases::{CompletePurchase, StartPurchase, Started};
use store::schema::{
    CREDIT_SK, PENDING_TOPUPS_SK, TOPUP_SK, UNPAID_SK, cash_pk, credit_pk, debit_sk,
    pending_topups_pk, purchase_sk, topup_pk, user_pk,
};
use store::topups::{CreateTopUp, SetCheckout};
use testkit::events::ApiEvent;
use testkit::fault_proxy::FaultProxy;
use testkit::http_stub::{HttpStub, Reply};
use testkit::moto::MotoServer;
use testkit::purchases::{complete_event, credit, get_event, start_event};
use testkit::runtime_api::Outcome;
use testkit::stripe::{self, StripeStub};
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
    MePurchases,
    MeCash,
    CashTopUps,
    StripeWebhook,
}

pub const ALL: [Kind; 14] = [
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
    Kind::MePurchases,
    Kind::MeCash,
    Kind::CashTopUps,
    Kind::StripeWebhook,
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
            Self::MePurchases => "me-purchases",
            Self::MeCash => "me-cash",
            Self::CashTopUps => "cash-top-ups",
            Self::StripeWebhook => "stripe-webhook",
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
                | Self::MePurchases
                | Self::MeCash
                | Self::CashTopUps
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
            Self::MePurchases => "informative: a page of the fan's index",
            Self::MeCash => "informative: the fan's balances",
            Self::CashTopUps => "informative: the top-up written, then its session",
            Self::StripeWebhook => "informative: the top-up read, then its credit's transaction",
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
                | Self::MePurchases
                | Self::MeCash
                | Self::CashTopUps
                | Self::StripeWebhook
        )
    }

    /// Its answer to a request that succeeds.
    fn success(self) -> u64 {
        match self {
            Self::StartPurchase | Self::CashTopUps => 201,
            _ => 200,
        }
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
    /// Stripe's API, for cash-top-ups.
    stripe: StripeStub,
    reads: DynamoStore,
    pub purchases: DynamoStore,
    token: String,
    /// The purchase get-purchase reads.
    shown: Option<PurchaseId>,
    /// Idempotency keys and credit references used so far.
    next_key: usize,
    /// Items the last requests wrote (`PK`, `SK`), to delete.
    written: Vec<(String, String)>,
    /// Invocations that did not succeed (moto stalling past the functions' timeouts).
    failures: Vec<String>,
    /// Invocations planned for the binary being measured ([`Bench::plan`]).
    planned: usize,
}

/// A DynamoDB client for `endpoint` that waits up to two minutes for an answer.
async fn patient_client(endpoint: &str) -> aws_sdk_dynamodb::Client {
    let config = testkit::moto::client_for(endpoint)
        .await
        .config()
        .to_builder()
        .timeout_config(
            TimeoutConfig::builder()
                .operation_attempt_timeout(Duration::from_secs(60))
                .operation_timeout(Duration::from_secs(120))
                .build(),
        )
        .build();
    aws_sdk_dynamodb::Client::from_conf(config)
}

impl Bench {
    pub async fn start() -> Self {
        let moto = MotoServer::start().await;
        let seed = parse_seed(SEED).expect("the shipped seed");
        // What the harness itself does on moto, seeding included, waits as long as moto takes
        // (it can stall for seconds on a busy machine: seeding a pack with the production
        // client's 1.5 s attempts failed at a load of 14); the functions keep their own timeouts.
        let patient = patient_client(&moto.endpoint).await;
        let reads = DynamoStore::new(patient.clone(), moto.new_table().await.table());
        let purchases = DynamoStore::new(patient, moto.new_table().await.table());
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
            stripe: StripeStub::start().await,
            reads,
            purchases,
            token: day_token(TestKey::Rsa, BUYER),
            shown: None,
            next_key: 0,
            written: Vec::new(),
            failures: Vec::new(),
            planned: 0,
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
        // A function's run and its baseline's (BENCH_BASELINE) share the limits' windows and
        // address: quotas neither reaches, each request still counted as deployed.
        for class in ["READ", "WRITE", "START", "JOIN"] {
            env.push((
                format!("RATE_LIMIT_{class}"),
                "fan=100000000/60,addr=100000000/60".to_owned(),
            ));
        }
        if kind == Kind::Hello {
            env.clear();
        }
        if kind.checks_tokens() {
            env.extend([
                ("AUTH_ISSUER".to_owned(), ISSUER.to_owned()),
                ("AUTH_AUDIENCE".to_owned(), AUDIENCE.to_owned()),
                (
                    "AUTH_JWKS_URL".to_owned(),
                    self.idp.url("/.well-known/jwks.json"),
                ),
                ("PURCHASE_HOLD_SECONDS".to_owned(), "3600".to_owned()),
            ]);
        }
        let mut set = |name: &str, value: &str| env.push((name.to_owned(), value.to_owned()));
        match kind {
            Kind::ListPacks | Kind::MePurchases | Kind::MeCash => {
                set("CURSOR_SECRET", testkit::CURSOR_SECRET);
            }
            Kind::CashTopUps => {
                set("STRIPE_API_BASE", &self.stripe.base());
                set("STRIPE_SECRET_KEY", stripe::SECRET_KEY);
                set("TOPUP_SUCCESS_URL", "https://fan.example/done");
                set("TOPUP_CANCEL_URL", "https://fan.example/cancelled");
            }
            Kind::StripeWebhook => set("STRIPE_WEBHOOK_SECRET", stripe::WEBHOOK_SECRET),
            // The sweep refreshes the packs' summaries a second time 30 s into its run (by
            // default), past the harness's 30 s wait for an answer: every invocation would count
            // as failed and stop the part. The second refresh is a timer, not work to measure.
            Kind::ReleaseHolds => set("SUMMARY_REFRESH_AGAIN_SECONDS", "0"),
            _ => {}
        }
        env
    }

    fn key(&mut self) -> String {
        self.next_key += 1;
        format!("bench-{}-{}", std::process::id(), self.next_key)
    }

    /// A reservation made through the store, as a start with a new key makes it. A start that
    /// moto was too slow to answer is retried by the SDK and answers the purchase it made
    /// (`Repeated`): that one is as good.
    async fn reserve(&mut self) -> PurchaseId {
        let key = self.key();
        let now = Timestamp::now();
        let request = StartRequest {
            user_id: testkit::ids::user(BUYER),
            pack_id: testkit::ids::pack(PACK),
            purchase_id: purchase_id(&testkit::ids::user(BUYER), &key),
            requested_seed: None,
            client_seed: random_client_seed(),
            now,
            expires_at: now.plus_seconds(3600).expect("in range"),
            policy: testkit::purchases::ROOMY,
            human_checked: false,
        };
        match self.purchases.start_purchase(&request).await {
            Ok(Started::Created(purchase) | Started::Repeated(purchase)) => purchase.id,
            Err(error) => panic!("reserving {PACK} for {BUYER}: {error:?}"),
        }
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
                get_event(PACK, id.as_str(), &token).to_json()
            }
            Kind::StartPurchase => {
                let key = self.key();
                start_event(PACK, Some(&token), Some(&key), None).to_json()
            }
            Kind::CompletePurchase => {
                let id = self.reserve().await;
                complete_event(PACK, id.as_str(), &token).to_json()
            }
            Kind::OpenPack => {
                let id = self.reserve().await;
                // Paid, or (a payment the SDK retried) paid already.
                self.purchases
                    .complete_purchase(
                        &testkit::ids::user(BUYER),
                        &testkit::ids::pack(PACK),
                        &id,
                        Timestamp::now(),
                    )
                    .await
                    .expect("paying a reservation through the store");
                ApiEvent::post(&format!("/api/packs/{PACK}/purchases/{id}/open"))
                    .bearer(&token)
                    .to_json()
            }
            Kind::ReleaseHolds => json!({}),
            Kind::MePurchases => ApiEvent::get("/api/me/purchases").bearer(&token).to_json(),
            Kind::MeCash => ApiEvent::get("/api/me/cash").bearer(&token).to_json(),
            Kind::CashTopUps => ApiEvent::post("/api/me/cash/top-ups")
                .bearer(&token)
                .header("idempotency-key", &self.key())
                .json(r#"{"amount":1000,"currency":"USD"}"#)
                .to_json(),
            Kind::StripeWebhook => self.paid_top_up().await,
        }
    }

    /// A pending top-up with its Checkout Session, made through the store, and Stripe's signed
    /// event saying that session is paid (what the webhook credits); its writes noted.
    async fn paid_top_up(&mut self) -> Value {
        let key = self.key();
        let user = testkit::ids::user(BUYER);
        let money = Money {
            amount: 1000,
            currency: "USD".into(),
        };
        let top_up = TopUp::pending(top_up_id(&user, &key), user, money, Timestamp::now());
        let session = format!("cs_{key}");
        let checkout = Checkout {
            session_id: session.clone(),
            url: format!("https://checkout.stripe.com/c/pay/{session}"),
        };
        self.purchases
            .create_top_up(&top_up)
            .await
            .expect("a pending top-up through the store");
        self.purchases
            .set_checkout(&top_up.id, &checkout)
            .await
            .expect("its session through the store");
        let id = top_up.id.as_str();
        let body = stripe::session_event(
            &format!("evt_{key}"),
            "checkout.session.completed",
            &session,
            id,
            1000,
            "usd",
            "paid",
        );
        self.written
            .push((topup_pk(&top_up.id), TOPUP_SK.to_owned()));
        self.written.push(pending_top_ups_key());
        let reference = credit_reference(&top_up.id);
        self.written
            .push((credit_pk(&reference), CREDIT_SK.to_owned()));
        ApiEvent::post("/api/webhooks/stripe")
            .header("stripe-signature", &stripe_signature(&body))
            .json(&body)
            .to_json()
    }

    /// Whether `outcome` is `kind`'s success (a 200, a 201 for a start; the sweep's report); a
    /// failure is kept in [`Bench::failures`]. Notes what a success wrote, for [`Bench::clean`].
    pub fn record(&mut self, kind: Kind, outcome: Option<Outcome>) -> bool {
        let expected = kind.success();
        let mut document = match outcome {
            Some(Outcome::Response(document))
                if kind == Kind::ReleaseHolds && document["released"].is_u64() =>
            {
                return true;
            }
            Some(Outcome::Response(document))
                if kind != Kind::ReleaseHolds && document["statusCode"] == expected =>
            {
                document
            }
            other => {
                let failure = format!("{}: {other:?}", kind.name());
                // Stopped at the first failure past 1%, not after every planned invocation: one
                // the function never answers costs the harness's timeout (30 s), and a binary
                // failing throughout kept a part silent for up to 241 x 30 s.
                assert!(
                    (self.failures.len() + 1) * 100 <= self.planned,
                    "{}: more than 1% of {} invocations failed, stopped; the first: {}",
                    kind.name(),
                    self.planned,
                    self.failures.first().unwrap_or(&failure)
                );
                self.failures.push(failure);
                return false;
            }
        };
        let body = document["body"].take();
        if kind == Kind::CashTopUps {
            let parsed: Value =
                serde_json::from_str(body.as_str().unwrap_or_default()).expect("a JSON body");
            let id = parsed["topUp"]["id"].as_str().expect("the top-up's id");
            let id = TopUpId::parse(id).expect("a top-up id");
            self.written.push((topup_pk(&id), TOPUP_SK.to_owned()));
            // Its slot among the buyer's pending top-ups, so that the next create has a place.
            self.written.push(pending_top_ups_key());
        }
        if matches!(
            kind,
            Kind::StartPurchase | Kind::CompletePurchase | Kind::OpenPack
        ) {
            let parsed: Value =
                serde_json::from_str(body.as_str().unwrap_or_default()).expect("a JSON body");
            let id = parsed["purchase"]["id"]
                .as_str()
                .expect("the purchase's id");
            let id = PurchaseId::parse(id).expect("a purchase id");
            let buyer = UserId::parse(BUYER).expect("the buyer's id is one");
            self.written.push((user_pk(&buyer), purchase_sk(&id)));
            if kind == Kind::StartPurchase {
                // The buyer's unpaid holds, so that the next start is not past
                // MAX_UNPAID_HOLDS (every start of the run is the same buyer's).
                self.written.push((user_pk(&buyer), UNPAID_SK.to_owned()));
            } else {
                self.written.push((cash_pk(&buyer), debit_sk(&id)));
            }
        }
        true
    }

    /// The next binary is measured with `invocations` invocations: more than 1% of them failing
    /// stops the run at once ([`Bench::record`]).
    pub fn plan(&mut self, invocations: usize) {
        self.planned = invocations;
    }

    /// The failed invocations recorded since the last call (descriptions).
    pub fn take_failures(&mut self) -> Vec<String> {
        std::mem::take(&mut self.failures)
    }

    /// Deletes the purchases and debits the last requests wrote (the buyer's count and balance,
    /// one item each, stay).
    pub async fn clean(&mut self) {
        let written = std::mem::take(&mut self.written);
        for chunk in written.chunks(25) {
            let deletes = chunk
                .iter()
                .map(|(pk, sk)| {
                    let delete = DeleteRequest::builder()
                        .key("PK", AttributeValue::S(pk.clone()))
                        .key("SK", AttributeValue::S(sk.clone()))
                        .build()
                        .expect("a key");
                    WriteRequest::builder().delete_request(delete).build()
                })
                .collect();
            self.purchases
                .client()
                .batch_write_item()
                .request_items(self.purchases.table(), deletes)
                .send()
                .await
                .expect("deleting what a request wrote");
        }
    }
}

/// The buyer's pending top-ups item (`PK`, `SK`): each top-up request takes a slot in it.
fn pending_top_ups_key() -> (String, String) {
    (
        pending_topups_pk(&testkit::ids::user(BUYER)),
        PENDING_TOPUPS_SK.to_owned(),
    )
}

/// Stripe's `Stripe-Signature` header for `body`, signed now with the webhook secret the bench
/// configures (HMAC-SHA256 of `<t>.<body>`, as Stripe signs): in process, as a Python signer per
/// event would slow the run.
fn stripe_signature(body: &str) -> String {
    let at = stripe::now();
    let key = hmac::Key::new(hmac::HMAC_SHA256, stripe::WEBHOOK_SECRET.as_bytes());
    let tag = hmac::sign(&key, format!("{at}.{body}").as_bytes());
    let hex: String = tag.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    format!("t={at},v1={hex}")
}
