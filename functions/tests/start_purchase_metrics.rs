//! A whole flow through the real binaries (start, replay, limit, sold out, pay, open, a start
//! that releases a dead hold, the sweep, a top-up opened and credited by its signed webhook, a
//! transaction conflict, throttling), each served by the
//! Runtime API emulator against moto behind a fault proxy, and every metrics line of their logs
//! read as CloudWatch reads Embedded Metric Format (`testkit::emf`): one line per invocation,
//! with exactly the counts of what the invocation did, and no token, e-mail or balance.

use std::collections::BTreeMap;

use serde_json::json;
use store::metrics::{DIMENSION, Metric, NAMESPACE};
use testkit::events::ApiEvent;
use testkit::fault_proxy::{Fault, FaultProxy, THROTTLING};
use testkit::packs::active;
use testkit::purchases::{
    Answer, Function, PurchaseEnv, complete_event, credit, reserve, sibling_binary, start_event,
};
use testkit::stripe::{self, StripeStub};
use testkit::tokens::token as token_of;

const BINARY: &str = env!("CARGO_BIN_EXE_start-purchase");
const EMAIL: &str = "metrics-fan@example.com";
const COMPLETE: &str = "complete-purchase";
const OPEN: &str = "open-pack";

/// What one invocation's line must say.
struct Expected {
    /// `Requests` and `Latency`, this `statusClass` and the `packId` of the path if it names
    /// a pack (an HTTP function), or neither (a plain event).
    http: Option<(&'static str, Option<String>)>,
    counts: Vec<(Metric, u64)>,
}

/// The functions of the flow (each started at its first invocation, logging) and what each of
/// their invocations must have written.
struct Flow {
    env: PurchaseEnv,
    proxy: FaultProxy,
    functions: BTreeMap<&'static str, Function>,
    expected: BTreeMap<&'static str, Vec<Expected>>,
    /// Each buyer's session token (with an e-mail that no line may hold).
    tokens: BTreeMap<&'static str, String>,
    /// Stripe, for the top-up functions.
    stripe: StripeStub,
}

impl Flow {
    async fn function(&mut self, name: &'static str) -> &Function {
        if !self.functions.contains_key(name) {
            let binary = sibling_binary(BINARY, name);
            let base = self.stripe.base();
            let extra = [
                ("SUMMARY_REFRESH_AGAIN_SECONDS", "0"),
                ("STRIPE_API_BASE", base.as_str()),
                ("STRIPE_SECRET_KEY", stripe::SECRET_KEY),
                ("STRIPE_WEBHOOK_SECRET", stripe::WEBHOOK_SECRET),
                ("TOPUP_SUCCESS_URL", "https://fan.example/done"),
                ("TOPUP_CANCEL_URL", "https://fan.example/cancelled"),
            ];
            let function = self
                .env
                .spawn_logged(binary.to_str().unwrap(), &extra)
                .await;
            self.functions.insert(name, function);
        }
        &self.functions[name]
    }

    /// Calls HTTP function `name` with `event`: it must answer `status`, and its line count
    /// `counts`.
    async fn call(
        &mut self,
        name: &'static str,
        event: ApiEvent,
        status: u16,
        counts: &[(Metric, u64)],
    ) -> Answer {
        let answer = self.function(name).await.call(&event).await;
        let path = event.to_json()["rawPath"].as_str().unwrap().to_owned();
        let pack = path
            .strip_prefix("/api/packs/")
            .and_then(|rest| rest.split('/').next())
            .map(str::to_owned);
        assert_eq!(answer.status, status, "{name}: {answer:?}");
        let class = match status / 100 {
            2 => "2xx",
            4 => "4xx",
            _ => "5xx",
        };
        self.expect(name, Some((class, pack)), counts);
        answer
    }

    /// A start of `pack` by `user` with `key`, through start-purchase.
    async fn start(
        &mut self,
        pack: &str,
        user: &'static str,
        key: &str,
        status: u16,
        counts: &[(Metric, u64)],
    ) -> Answer {
        let event = start_event(pack, Some(&self.token(user)), Some(key), None);
        self.call("start-purchase", event, status, counts).await
    }

    fn token(&mut self, user: &'static str) -> String {
        let token = self.tokens.entry(user);
        token.or_insert_with(|| token_of(user, Some(EMAIL))).clone()
    }

    /// Invokes plain-event function `name`: its line must count `counts`.
    async fn invoke(&mut self, name: &'static str, counts: &[(Metric, u64)]) -> serde_json::Value {
        let outcome = self.function(name).await.invoke(json!({})).await;
        let testkit::runtime_api::Outcome::Response(answer) = outcome else {
            panic!("{name} failed: {outcome:?}")
        };
        self.expect(name, None, counts);
        answer
    }

    fn expect(
        &mut self,
        name: &'static str,
        http: Option<(&'static str, Option<String>)>,
        counts: &[(Metric, u64)],
    ) {
        self.expected.entry(name).or_default().push(Expected {
            http,
            counts: counts.to_vec(),
        });
    }

    /// Stops every function and checks each line of its log against what it was asked.
    async fn check(self) {
        let mut expected = self.expected;
        // The lines hold only the names, counts and properties checked, so no balance; and
        // neither a token (nor its signature) nor an e-mail anywhere.
        let mut secrets = vec![EMAIL];
        for token in self.tokens.values() {
            secrets.extend([token.as_str(), token.rsplit('.').next().unwrap()]);
        }
        for (name, function) in self.functions {
            let log = function.stop().await;
            let lines = testkit::emf::lines(&log);
            let expected = expected.remove(name).unwrap();
            assert_eq!(
                lines.len(),
                expected.len(),
                "{name}: one EMF line per invocation, each a JSON object of its own:\n{log}"
            );
            for (n, (line, expected)) in lines.iter().zip(expected).enumerate() {
                let at = format!("{name}, invocation {n}: {line:?}");
                assert_eq!(line.namespace, NAMESPACE, "{at}");
                assert_eq!(line.dimensions, [[DIMENSION]], "{at}");
                assert_eq!(line.dimension_values[DIMENSION], name, "{at}");
                let mut counts: BTreeMap<String, f64> = expected
                    .counts
                    .iter()
                    .map(|(metric, n)| (metric.name().to_owned(), *n as f64))
                    .collect();
                let mut properties = vec!["requestId"];
                if let Some((class, pack)) = expected.http {
                    counts.insert("Requests".into(), 1.0);
                    let latency = line.value("Latency").unwrap_or(-1.0);
                    assert!(latency >= 0.0, "{at}");
                    assert_eq!(line.metrics["Latency"].1, "Milliseconds", "{at}");
                    counts.insert("Latency".into(), latency);
                    assert_eq!(line.property("statusClass"), Some(class), "{at}");
                    assert_eq!(line.property("packId"), pack.as_deref(), "{at}");
                    properties.push("statusClass");
                    if pack.is_some() {
                        properties.push("packId");
                    }
                }
                let recorded: BTreeMap<String, f64> = line
                    .metrics
                    .iter()
                    .map(|(name, (value, _))| (name.clone(), *value))
                    .collect();
                assert_eq!(recorded, counts, "{at}");
                // Nothing else: no token, e-mail or balance can be in the line.
                let mut keys: Vec<&str> = line.properties.keys().map(String::as_str).collect();
                keys.sort_unstable();
                properties.sort_unstable();
                assert_eq!(keys, properties, "{at}");
                assert!(line.property("requestId").is_some(), "{at}");
            }
            for line in log.lines().filter(|line| line.contains("\"_aws\"")) {
                for secret in &secrets {
                    assert!(!line.contains(secret), "{name} wrote {secret}: {line}");
                }
            }
        }
    }
}

#[tokio::test]
async fn a_flows_metrics_lines_count_what_each_invocation_did() {
    use Metric::*;
    let (env, proxy) = PurchaseEnv::behind_proxy().await;
    let mut drop = active("drop", 60);
    (drop.total_supply, drop.remaining, drop.max_per_user) = (2, 2, Some(1));
    let mut late = active("late", 60);
    (late.total_supply, late.remaining) = (1, 1);
    for pack in [&drop, &late, &active("gone", 60)] {
        testkit::packs::save(&env.store, pack).await;
    }
    let mut flow = Flow {
        env,
        proxy,
        functions: BTreeMap::new(),
        expected: BTreeMap::new(),
        tokens: BTreeMap::new(),
        stripe: StripeStub::start().await,
    };

    let first = flow
        .start("drop", "a", "k1", 201, &[(PurchasesStarted, 1)])
        .await;
    let id = first.body["purchase"]["id"].as_str().unwrap().to_owned();
    flow.start("drop", "a", "k1", 201, &[]).await;
    flow.start("drop", "a", "k2", 409, &[(PurchaseLimitReached, 1)])
        .await;
    flow.start("drop", "b", "k1", 201, &[(PurchasesStarted, 1)])
        .await;
    flow.start("drop", "c", "k1", 409, &[(PurchasesSoldOut, 1)])
        .await;
    let anonymous = start_event("drop", None, Some("k"), None);
    flow.call("start-purchase", anonymous, 401, &[]).await;

    // 1,000 cents credited, 499 paid: a balance of 501 that no line may show.
    credit(&flow.env.store, "a", 1000, "USD", "metrics-grant").await;
    let buyer = flow.token("a");
    let pay = || complete_event("drop", &id, &buyer);
    let paid = flow
        .call(COMPLETE, pay(), 200, &[(PurchasesCompleted, 1)])
        .await;
    assert_eq!(paid.body["cash"]["balance"]["amount"], 501);
    flow.call(COMPLETE, pay(), 200, &[]).await;
    let open = || ApiEvent::post(&format!("/api/packs/drop/purchases/{id}/open")).bearer(&buyer);
    flow.call(OPEN, open(), 200, &[(PacksOpened, 1)]).await;
    flow.call(OPEN, open(), 200, &[]).await;

    // The last unit of `late` held by a hold that ran out: a start releases it, then takes it.
    reserve(&flow.env.store, "d", "late", "k1", -60).await;
    let released = [(PurchasesStarted, 1), (HoldsReleased, 1)];
    flow.start("late", "e", "k1", 201, &released).await;
    // The sweep releases the others that ran out.
    for user in ["f", "g"] {
        reserve(&flow.env.store, user, "gone", "k1", -60).await;
    }
    let swept = flow.invoke("release-holds", &[(HoldsReleased, 2)]).await;
    assert_eq!(swept["released"], 2, "{swept}");

    // A top-up: created once (a replay counts nothing), then credited once by its signed
    // webhook however often Stripe delivers it.
    let top_up = || {
        ApiEvent::post("/api/me/cash/top-ups")
            .bearer(&buyer)
            .header("idempotency-key", "metrics-top-up")
            .json(r#"{"amount":1000,"currency":"USD"}"#)
    };
    let created = flow
        .call("cash-top-ups", top_up(), 201, &[(TopUpsCreated, 1)])
        .await;
    flow.call("cash-top-ups", top_up(), 201, &[]).await;
    let top_up_id = created.body["topUp"]["id"].as_str().unwrap().to_owned();
    // The stub's Checkout page is named after its session.
    let checkout = created.body["topUp"]["checkoutUrl"].as_str().unwrap();
    let session = checkout.rsplit('/').next().unwrap().to_owned();
    let paid = stripe::session_event(
        "evt_metrics",
        "checkout.session.completed",
        &session,
        &top_up_id,
        1000,
        "usd",
        "paid",
    );
    let delivery = || {
        let signature = stripe::python_signature(&paid, stripe::WEBHOOK_SECRET, stripe::now());
        ApiEvent::post("/api/webhooks/stripe")
            .header("stripe-signature", &signature)
            .json(&paid)
    };
    flow.call("stripe-webhook", delivery(), 200, &[(TopUpsCredited, 1)])
        .await;
    flow.call("stripe-webhook", delivery(), 200, &[]).await;

    // A transaction cancelled by a conflict, decided again: one conflict, one start.
    let conflict = Fault::Cancelled("TransactionConflict");
    flow.proxy
        .set_for_operation(conflict, "TransactWriteItems", 1);
    let conflicted = [(PurchasesStarted, 1), (TransactionConflicts, 1)];
    flow.start("p", "h", "k1", 201, &conflicted).await;
    // DynamoDB throttling the start's reads past the SDK's retries: a 503 (the rate counters
    // pass: a throttled counter is the limiter's 503, before the handler knows the pack).
    flow.proxy
        .set_for_operation(THROTTLING, "BatchGetItem", usize::MAX);
    flow.start("p", "i", "k1", 503, &[(DynamoDbThrottled, 1)])
        .await;
    flow.proxy.set(Fault::None);
    // Issue 19's top-ups join here, a line a step: `flow.call("<function>", event, 201,
    // &[(TopUpsCreated, 1)])`, the webhook's with `(TopUpsCredited, 1)`.

    flow.check().await;
}
