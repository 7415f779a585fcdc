//! The real `start-purchase` binary, run through a Lambda Runtime API emulator against
//! moto_server, with its JWKS fetched from a loopback identity-provider stub.

use store::packs::ReadSupply;
use testkit::countdowns::without_countdowns;
use testkit::fault_proxy::{Fault, THROTTLING};
use testkit::moto::{MotoServer, Rollback};
use testkit::packs::active;
use testkit::purchases::{PurchaseEnv, fixture, seed_pack, start_event};
use testkit::tokens::token;

const BINARY: &str = env!("CARGO_BIN_EXE_start-purchase");

async fn remaining(env: &PurchaseEnv, pack: &str) -> u64 {
    testkit::packs::remaining(&env.store, pack).await
}

#[tokio::test]
async fn starts_replays_and_refuses_over_the_runtime_api() {
    let env = PurchaseEnv::new().await;
    let mut last_one = active("last-one", 10);
    (last_one.total_supply, last_one.remaining) = (1, 1);
    for pack in [active("p", 10), last_one] {
        testkit::packs::save(&env.store, &pack).await;
    }
    let mut function = env.spawn(BINARY, &[]).await;
    let buyer = token("buyer", None);

    // 201, with the purchase's address and the purchase, reserved.
    let seeded = Some(r#"{"clientSeed":"lucky 7"}"#);
    let first = function
        .call(&start_event("p", Some(&buyer), Some("key-1"), seeded))
        .await;
    assert_eq!(first.status, 201, "{first:?}");
    let purchase = &first.body["purchase"];
    let id = purchase["id"].as_str().expect("an id");
    assert_eq!(
        first.header("location"),
        Some(format!("/api/packs/p/purchases/{id}").as_str())
    );
    assert_eq!(first.header("idempotent-replayed"), None);
    assert_eq!(purchase["packId"], "p");
    assert_eq!(purchase["status"], "reserved");
    assert_eq!(purchase["clientSeed"], "lucky 7");
    assert_eq!(purchase["nonce"], 1);
    assert_eq!(
        purchase["price"],
        serde_json::json!({"amount": 499, "currency": "USD"})
    );
    assert_eq!(purchase["completedAt"], serde_json::Value::Null);
    assert_eq!(remaining(&env, "p").await, 99);

    // The same key again: the same answer, marked as a replay; nothing changes.
    let again = function
        .call(&start_event("p", Some(&buyer), Some("key-1"), seeded))
        .await;
    assert_eq!(again.status, 201, "{again:?}");
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    assert_eq!(
        without_countdowns(again.body.clone()),
        without_countdowns(first.body.clone())
    );
    assert_eq!(again.header("location"), first.header("location"));
    assert_eq!(remaining(&env, "p").await, 99);

    // The same key for another start: 422.
    let reused = function
        .call(&start_event(
            "p",
            Some(&buyer),
            Some("key-1"),
            Some(r#"{"clientSeed":"another"}"#),
        ))
        .await;
    assert_eq!(
        (reused.status, reused.code()),
        (422, Some("idempotency_key_reused"))
    );

    // No token; no key.
    let anonymous = function
        .call(&start_event("p", None, Some("key-2"), None))
        .await;
    assert_eq!(
        (anonymous.status, anonymous.code()),
        (401, Some("missing_token"))
    );
    assert!(anonymous.header("www-authenticate").is_some());
    let keyless = function
        .call(&start_event("p", Some(&buyer), None, None))
        .await;
    assert_eq!(
        (keyless.status, keyless.code()),
        (400, Some("missing_idempotency_key"))
    );

    // The last unit: held by one buyer, sold out for the next.
    let held = function
        .call(&start_event("last-one", Some(&buyer), Some("key-3"), None))
        .await;
    assert_eq!(held.status, 201, "{held:?}");
    let late = function
        .call(&start_event(
            "last-one",
            Some(&token("late-buyer", None)),
            Some("key-3"),
            None,
        ))
        .await;
    assert_eq!((late.status, late.code()), (409, Some("sold_out")));
    assert_eq!(remaining(&env, "last-one").await, 0);

    let unknown = function
        .call(&start_event(
            "no-such-pack",
            Some(&buyer),
            Some("key-4"),
            None,
        ))
        .await;
    assert_eq!(
        (unknown.status, unknown.code()),
        (404, Some("pack_not_found"))
    );
    assert!(function.is_running());
}

/// `infra/events/start-purchase.json` (with a token for `me`) starts the purchase that the
/// get-purchase and complete-purchase fixtures name, of the shipped seed's pack.
#[tokio::test]
async fn the_event_fixture_starts_the_purchase_the_other_fixtures_name() {
    let env = PurchaseEnv::new().await;
    testkit::packs::save(&env.store, &seed_pack("nba-rookie-2026")).await;
    let function = env.spawn(BINARY, &[]).await;
    let me = token("me", None);
    let answer = function
        .call_json(fixture("start-purchase", Some(&me)))
        .await;
    assert_eq!(answer.status, 201, "{answer:?}");
    for other in ["get-purchase", "complete-purchase"] {
        assert_eq!(
            answer.header("location"),
            fixture(other, None)["rawPath"].as_str(),
            "{other}.json names another purchase"
        );
    }
}

#[tokio::test]
async fn missing_or_bad_settings_stop_the_function_with_a_clear_message() {
    testkit::runtime_api::assert_init_needs_auth(BINARY).await;
    testkit::runtime_api::assert_init_fails_naming(
        BINARY,
        &[("TABLE_NAME", "fan-api"), ("PURCHASE_HOLD_SECONDS", "0")],
        "PURCHASE_HOLD_SECONDS",
    )
    .await;
}

#[tokio::test]
async fn a_dynamodb_outage_is_a_503_and_the_same_process_serves_again_after_it() {
    let (env, proxy) = PurchaseEnv::behind_proxy().await;
    let mut function = env.spawn(BINARY, &[]).await;
    let buyer = token("buyer", None);
    for (n, fault) in [THROTTLING, Fault::Hangup].into_iter().enumerate() {
        proxy.set(fault.clone());
        let key = format!("outage-{n}");
        let answer = function
            .call(&start_event("p", Some(&buyer), Some(&key), None))
            .await;
        answer.assert_unavailable();
        assert!(answer.header("retry-after").is_some(), "{answer:?}");
        proxy.set(Fault::None);
        let answer = function
            .call(&start_event("p", Some(&buyer), Some(&key), None))
            .await;
        assert_eq!(answer.status, 201, "after {fault:?}: {answer:?}");
    }
    assert!(
        function.is_running(),
        "the function process is still running"
    );
}

/// Concurrent instances, as Lambda runs them: eight start-purchase processes, 1,500 buyers at
/// once on 1,000 units split over 10 shares. Exactly as many reservations as units, the rest
/// sold out (each start that met an emptied share went on to the others first), every share
/// empty and the books balanced. DynamoDB is moto reached one request at a time, as DynamoDB
/// applies requests (moto alone does not), rolling a cancelled transaction back by the items it
/// names (moto's whole-table copy would take over a second per transaction at this size). A
/// buyer answered 503 (moto's queue outran the functions' attempt timeout) does what a client is
/// told to: tries again with the same key.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_instances_sell_exactly_the_units_there_are_over_ten_shares() {
    const INSTANCES: usize = 8;
    const RETRIES: usize = 5;
    let (units, buyers) = drop_size();
    let moto = MotoServer::start_with(Rollback::NamedItems).await;
    let (serial, store) = testkit::moto::atomic_table_at(&moto.endpoint).await;
    let mut pack = active("drop", 60);
    (pack.remaining, pack.total_supply, pack.supply_shards) = (units, units, Some(10));
    testkit::packs::save(&store, &pack).await;
    let env = PurchaseEnv::with(store, &serial.endpoint()).await;
    let mut instances = Vec::new();
    // Holds of the longest allowed length: on a machine slow enough that the drop outlasts the
    // default 600 s, the first holds would run out and their units, released by later starts, sell
    // again (a run under heavy load answered 1,100 reservations for 1,000 units that way).
    for _ in 0..INSTANCES {
        instances.push(
            // Every buyer's event comes from one sourceIp: the address's start quota is raised
            // so that this test counts units, not rate limits (crates/api/tests/rate_limits.rs).
            env.spawn(
                BINARY,
                &[
                    ("PURCHASE_HOLD_SECONDS", "3600"),
                    ("RATE_LIMIT_START", "fan=10/10,addr=1000000/10"),
                ],
            )
            .await,
        );
    }
    // Each instance takes one invocation at a time, as on Lambda: its buyers in turn.
    let mut calls = tokio::task::JoinSet::new();
    for (first, instance) in instances.into_iter().enumerate() {
        calls.spawn(async move {
            let mut answers = Vec::new();
            for buyer in (first..buyers).step_by(INSTANCES) {
                let token = token(&format!("buyer-{buyer}"), None);
                let event = start_event("drop", Some(&token), Some("one-buy"), None);
                let mut answer = instance.call(&event).await;
                for _ in 0..RETRIES {
                    if answer.status != 503 {
                        break;
                    }
                    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
                    answer = instance.call(&event).await;
                }
                answers.push(answer);
            }
            answers
        });
    }
    let answers: Vec<_> = calls.join_all().await.into_iter().flatten().collect();
    let reserved = answers.iter().filter(|a| a.status == 201).count() as u64;
    let sold_out = answers
        .iter()
        .filter(|a| (a.status, a.code()) == (409, Some("sold_out")))
        .count() as u64;
    assert_eq!(
        (reserved, sold_out),
        (units, buyers as u64 - units),
        "{:?}",
        answers
            .iter()
            .filter(|a| a.status != 201 && a.status != 409)
            .take(3)
            .collect::<Vec<_>>()
    );
    let supply = env
        .store
        .read_supply(&testkit::ids::pack("drop"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(supply.shares, [0; 10]);
    assert_eq!((supply.held, supply.sold), (units, 0), "the books balance");
}

/// The drop's units and buyers: 1,000 and 1,500 by default; `DROP_UNITS` and `DROP_BUYERS` ask
/// for others.
fn drop_size() -> (u64, usize) {
    let read = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    (read("DROP_UNITS", 1000), read("DROP_BUYERS", 1500) as usize)
}

/// One fan's burst at a window's start fills their address's window for a moment, and the fan's
/// refusals give the counts back: the address is refused only while its stored count is at its
/// quota, so three other fans behind it are served after the burst, on the very instances that
/// met it full (docs/rate-limits.md: a script behind a NAT spends only its own quota). Eight
/// instances on moto, reached one request at a time; starts of 3 a fan and 6 an address per 30 s.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_fans_burst_leaves_the_rest_of_their_address_to_the_others_behind_it() {
    const INSTANCES: usize = 8;
    const WINDOW: u64 = 30;
    const NAT: &str = "100.64.0.9";
    let (serial, store) = testkit::moto::atomic_table().await;
    testkit::packs::save(&store, &active("p", 10)).await;
    let env = PurchaseEnv::with(store, &serial.endpoint()).await;
    let limits = format!("fan=3/{WINDOW},addr=6/{WINDOW}");
    let mut instances = Vec::new();
    for n in 0..INSTANCES {
        let instance = env.spawn(BINARY, &[("RATE_LIMIT_START", &limits)]).await;
        // Warm (its keys fetched, its connection open), from an address of its own.
        let warm = token(&format!("warm-{n}"), None);
        let event = start_event("p", Some(&warm), Some("warm"), None)
            .source_ip(&format!("192.0.2.{}", 10 + n));
        assert_eq!(instance.call(&event).await.status, 201);
        instances.push(instance);
    }
    // The burst at a window's start: the window outlasts what follows by far.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    if now.as_secs() % WINDOW > 2 {
        let next = (now.as_secs() / WINDOW + 1) * WINDOW;
        tokio::time::sleep(std::time::Duration::from_secs(next) - now).await;
    }
    let instances = std::sync::Arc::new(instances);
    let burst = testkit::at_once(10, |n| {
        let instances = instances.clone();
        async move {
            let burst = token("burst", None);
            let event =
                start_event("p", Some(&burst), Some(&format!("b-{n}")), None).source_ip(NAT);
            (n % INSTANCES, instances[n % INSTANCES].call(&event).await)
        }
    })
    .await;
    // Refused by the address (the fan never counted): the instances that met the address full.
    let met_full: Vec<usize> = burst
        .iter()
        .filter(|(_, answer)| answer.status == 429)
        .filter(|(_, answer)| {
            !answer
                .header("ratelimit")
                .unwrap_or_default()
                .contains("fan-start")
        })
        .map(|(instance, _)| *instance)
        .collect();
    assert!(
        !met_full.is_empty(),
        "the burst filled the address for a moment: {burst:?}"
    );
    // The fan's 3 were counted, the rest given back: 3 of the address's 6 are left.
    for (n, left) in (0..3).zip([2, 1, 0]) {
        let neighbour = token(&format!("neighbour-{n}"), None);
        let event = start_event("p", Some(&neighbour), Some("k"), None).source_ip(NAT);
        let answer = instances[met_full[n % met_full.len()]].call(&event).await;
        assert_eq!(answer.status, 201, "neighbour {n}: {answer:?}");
        let field = answer.header("ratelimit").unwrap_or_default();
        assert!(
            field.starts_with(&format!("\"addr-start\";r={left};")),
            "neighbour {n}: {field}"
        );
    }
}
