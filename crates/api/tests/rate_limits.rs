//! The rate limits through the routers the functions serve: 2,000 starts from one fan on one
//! address spread over 8 instances (8 routers, each with its own limiter, sharing one store)
//! are served exactly the fan's quota, every other answer a 429 in the API's shape with
//! `Retry-After` and the fields; a fan pressing by hand on the same address is served; a
//! carrier NAT's fans share the address's quota exactly; a refused request is counted in
//! `RateLimited`; a window seen full refuses a flood with no store call; and with the counters
//! down starts fail closed and reads are served (counted in memory: issue 45).
//!
//! The 8 instances share a MemoryStore: the same conditional take as DynamoDB's (one contract
//! suite, `abuse_contract.rs`, runs both, racing takes included), and 2,000 requests through
//! moto behind the one-request-at-a-time proxy would make this test minutes long.

use std::sync::Arc;

use api::handlers::get_pack::GetPackState;
use api::http::layers::{ApiLayers, api_layers};
use api::http::limit::{Clock, Limiter};
use api::http::routes::{get_pack_routes, start_purchase_routes};
use api::state::PurchaseState;
use domain::ratelimit::{Counter, RatePolicy, RouteClass, Taken, Window, parse_class_policy};
use store::metrics::{self, Metric};
use store::ratelimit::TakeFromWindow;
use store::{MemoryStore, StoreError};
use testkit::events::ApiEvent;
use testkit::tokens::token;
use tower::ServiceExt;

const INSTANCES: usize = 8;
const SCRIPT_ADDRESS: &str = "198.51.100.7";

/// A clock fixed at the second second of the next minute, a window of every quota of the
/// defaults (their windows are 10 and 60 s): no window ends during the test, and none expires
/// from the memory store (its TTL is read on the real clock).
fn fixed_clock() -> (Clock, i64) {
    let now = i64::try_from(domain::timestamp::Timestamp::now().unix_seconds()).unwrap();
    let fixed = now - now.rem_euclid(60) + 61;
    (Arc::new(move || fixed), fixed)
}

fn purchase_state(store: MemoryStore) -> Arc<PurchaseState<MemoryStore>> {
    Arc::new(PurchaseState {
        store,
        verifier: testkit::tokens::verifier(),
        hold: std::time::Duration::from_secs(600),
        max_body_bytes: api::http::request::DEFAULT_MAX_BODY_BYTES,
        policy: testkit::purchases::ROOMY,
        human: None,
    })
}

async fn store_with_pack() -> MemoryStore {
    let store = MemoryStore::default();
    let mut pack = testkit::packs::active("p", 60);
    pack.total_supply = 10_000;
    pack.remaining = 10_000;
    testkit::packs::save(&store, &pack).await;
    store
}

/// `INSTANCES` start-purchase functions over `store`, each with its own limiter on `counters`.
fn instances<C: TakeFromWindow + Clone + 'static>(
    store: &MemoryStore,
    counters: &C,
    clock: &Clock,
) -> Vec<ApiLayers> {
    (0..INSTANCES)
        .map(|_| {
            let app = start_purchase_routes().function_app(purchase_state(store.clone()));
            let limiter = Limiter::new(counters.clone(), RatePolicy::default(), clock.clone());
            api_layers(app, Some(Arc::new(limiter)))
        })
        .collect()
}

/// A get-pack function over `store`, its limits counted on `counters` under `policy`.
fn get_pack_instance<C: TakeFromWindow + 'static>(
    store: &MemoryStore,
    counters: C,
    policy: RatePolicy,
    clock: &Clock,
) -> ApiLayers {
    let state = Arc::new(GetPackState {
        store: store.clone(),
        recent: Default::default(),
    });
    let limiter = Limiter::new(counters, policy, clock.clone());
    api_layers(
        get_pack_routes().function_app(state),
        Some(Arc::new(limiter)),
    )
}

struct Answer {
    status: u16,
    code: String,
    headers: axum::http::HeaderMap,
}

async fn send(router: &ApiLayers, event: ApiEvent) -> Answer {
    let response = router.clone().oneshot(event.request()).await.unwrap();
    let (parts, body) = response.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX).await.unwrap();
    let json: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
    Answer {
        status: parts.status.as_u16(),
        code: json["error"]["code"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
        headers: parts.headers,
    }
}

fn start(user: &str, key: &str, address: &str) -> ApiEvent {
    ApiEvent::post("/api/packs/p/purchases")
        .bearer(&token(user, None))
        .header("idempotency-key", key)
        .source_ip(address)
}

fn header<'a>(answer: &'a Answer, name: &str) -> &'a str {
    answer
        .headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_else(|| panic!("no {name}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_script_is_served_its_quota_exactly_across_instances_and_a_hand_alongside_is_served() {
    let store = store_with_pack().await;
    let (clock, now) = fixed_clock();
    let routers = Arc::new(instances(&store, &store, &clock));
    let policy = RatePolicy::default().start;
    let window_end = Window::at(now, policy.fan).end;

    // 2,000 requests, 50 at a time, spread over the instances; a hand presses 3 times meanwhile.
    let gate = Arc::new(tokio::sync::Semaphore::new(50));
    let mut script = tokio::task::JoinSet::new();
    for n in 0..2_000 {
        let (routers, gate) = (routers.clone(), gate.clone());
        script.spawn(async move {
            let _permit = gate.acquire_owned().await.unwrap();
            let event = start("script", &format!("s-{n}"), SCRIPT_ADDRESS);
            metrics::record(send(&routers[n % INSTANCES], event)).await
        });
    }
    let mut hand = Vec::new();
    for press in 0..3 {
        tokio::task::yield_now().await;
        let event = start("hand", &format!("h-{press}"), SCRIPT_ADDRESS);
        hand.push(send(&routers[press], event).await);
    }
    let answers = script.join_all().await;

    let served = answers.iter().filter(|(a, _)| a.status != 429).count();
    assert_eq!(
        served, policy.fan.quota as usize,
        "the fan's quota, exactly"
    );
    for (answer, recorded) in &answers {
        assert!(answer.headers.contains_key("ratelimit-policy"));
        assert!(answer.headers.contains_key("ratelimit"));
        if answer.status == 201 {
            assert_eq!(recorded.value(Metric::RateLimited), None);
            continue;
        }
        assert_eq!((answer.status, answer.code.as_str()), (429, "rate_limited"));
        let retry: i64 = header(answer, "retry-after").parse().unwrap();
        assert!(
            retry >= window_end - now,
            "Retry-After {retry} before the window's end"
        );
        assert!(
            retry <= window_end - now + 3,
            "jitter of at most 3 s: {retry}"
        );
        // Refused by the store, the address counted first; or from memory, the address spared.
        let fan_policy = format!("\"fan-start\";q={};w=10", policy.fan.quota);
        let both = format!(
            "\"addr-start\";q={};w=10, {fan_policy}",
            policy.address.quota
        );
        let policy_field = header(answer, "ratelimit-policy");
        assert!(
            policy_field == both || policy_field == fan_policy,
            "{policy_field}"
        );
        assert!(header(answer, "ratelimit").contains("\"fan-start\";r=0;t="));
        assert_eq!(recorded.value(Metric::RateLimited), Some(1.0));
    }
    for answer in &hand {
        assert_eq!(answer.status, 201, "the hand is served");
        assert!(header(answer, "ratelimit").contains("\"fan-start\";r="));
    }
    // The flood took from the shared address no more than the fan's quota: every refusal gave
    // its count back, or was refused from memory before counting.
    let after = send(&routers[0], start("hand", "h-last", SCRIPT_ADDRESS)).await;
    let expected = policy.address.quota - policy.fan.quota - 4;
    assert!(
        header(&after, "ratelimit").starts_with(&format!("\"addr-start\";r={expected};")),
        "{}",
        header(&after, "ratelimit")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_fans_behind_one_address_share_its_quota_exactly() {
    let store = store_with_pack().await;
    let (clock, _) = fixed_clock();
    let routers = Arc::new(instances(&store, &store, &clock));
    let policy = RatePolicy::default().start;
    // 30 fans behind one carrier NAT, each pressing 9 times (under a fan's quota): 270 starts.
    let mut presses = tokio::task::JoinSet::new();
    for n in 0..270 {
        let routers = routers.clone();
        presses.spawn(async move {
            let event = start(&format!("nat-{}", n % 30), &format!("k-{n}"), "100.64.0.1");
            send(&routers[n % INSTANCES], event).await.status
        });
    }
    let statuses = presses.join_all().await;
    let served = statuses.iter().filter(|status| **status != 429).count();
    assert_eq!(
        served, policy.address.quota as usize,
        "the address's quota, exactly"
    );
    // Another address is counted apart.
    assert_eq!(
        send(&routers[0], start("nat-0", "other", "100.64.0.2"))
            .await
            .status,
        201
    );
}

/// Counters that cannot be reached.
#[derive(Clone)]
struct Down;

impl TakeFromWindow for Down {
    async fn take(&self, _: &Counter, _: u32) -> Result<Taken, StoreError> {
        Err(StoreError::unavailable("counters down"))
    }
    async fn give_back(&self, _: &Counter) -> Result<(), StoreError> {
        Err(StoreError::unavailable("counters down"))
    }
}

#[tokio::test]
async fn with_the_counters_down_starts_fail_closed_and_reads_fail_open() {
    let store = store_with_pack().await;
    let (clock, _) = fixed_clock();
    let starts = instances(&store, &Down, &clock);
    let refused = send(&starts[0], start("fan", "k", "192.0.2.9")).await;
    assert_eq!(
        (refused.status, refused.code.as_str()),
        (503, "service_unavailable")
    );
    assert!(refused.headers.contains_key("retry-after"));
    // Nothing was started: the same key on a limiter that works starts it now.
    let working = instances(&store, &store, &clock);
    assert_eq!(
        send(&working[0], start("fan", "k", "192.0.2.9"))
            .await
            .status,
        201
    );

    let reads = get_pack_instance(&store, Down, RatePolicy::default(), &clock);
    let read = send(&reads, ApiEvent::get("/api/packs/p")).await;
    assert_eq!(
        read.status, 200,
        "a read is counted in the instance's memory, never by the store's counters"
    );
}

/// Issue 45: a read (and any write that spends nothing scarce) is counted in the instance's
/// memory: no call of the store's counters, and each instance refuses past its own quota, so
/// that across instances a fan or an address gets at most the quota once per instance.
#[tokio::test]
async fn reads_are_counted_in_each_instance_and_never_by_the_store() {
    let store = store_with_pack().await;
    let (clock, _) = fixed_clock();
    let counters = Tallied::over(&store);
    let mut policy = RatePolicy::default();
    *policy.of_mut(RouteClass::Read).unwrap() = parse_class_policy("fan=10/60,addr=3/60").unwrap();
    let instance = || get_pack_instance(&store, counters.clone(), policy, &clock);
    let (first, second) = (instance(), instance());
    let read = || ApiEvent::get("/api/packs/p").source_ip("203.0.113.70");
    let mut statuses = Vec::new();
    for router in [&first, &first, &first, &first, &second, &second] {
        let answer = send(router, read()).await;
        statuses.push(answer.status);
        if answer.status == 429 {
            assert_eq!(answer.code, "rate_limited");
            assert!(answer.headers.contains_key("retry-after"));
        }
    }
    assert_eq!(statuses, [200, 200, 200, 429, 200, 200]);
    assert_eq!(
        counters.calls.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "no store call"
    );
}

/// The store's counters, each call counted.
#[derive(Clone)]
struct Tallied {
    store: MemoryStore,
    calls: Arc<std::sync::atomic::AtomicUsize>,
}

impl Tallied {
    fn over(store: &MemoryStore) -> Self {
        Self {
            store: store.clone(),
            calls: Arc::default(),
        }
    }
}

impl TakeFromWindow for Tallied {
    async fn take(&self, counter: &Counter, quota: u32) -> Result<Taken, StoreError> {
        self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.store.take(counter, quota).await
    }
    async fn give_back(&self, counter: &Counter) -> Result<(), StoreError> {
        self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.store.give_back(counter).await
    }
}

#[tokio::test]
async fn a_window_seen_full_refuses_the_flood_without_a_store_call() {
    let store = store_with_pack().await;
    let (clock, _) = fixed_clock();
    let counters = Tallied::over(&store);
    let instance = instances(&store, &counters, &clock).remove(0);
    let quota = RatePolicy::default().start.fan.quota;
    let mut statuses = Vec::new();
    for n in 0..quota + 20 {
        let event = start("flood", &format!("f-{n}"), "192.0.2.77");
        statuses.push(send(&instance, event).await.status);
    }
    assert!(
        statuses[..quota as usize]
            .iter()
            .all(|status| *status == 201)
    );
    assert!(
        statuses[quota as usize..]
            .iter()
            .all(|status| *status == 429)
    );
    // Each served start took from the address and the fan; the first refused one took from
    // the address, found the fan's window full and gave the address's count back. The 19 after
    // it were refused from memory.
    let calls = counters.calls.load(std::sync::atomic::Ordering::SeqCst);
    assert_eq!(calls, 2 * quota as usize + 3);
}
