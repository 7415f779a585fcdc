//! The real `release-holds` binary, run through a Lambda Runtime API emulator against
//! moto_server with the schedule's event fixture; the holds it releases are started by the real
//! `start-purchase` binary.

use std::time::Duration;
use testkit::ids;

use domain::purchases::PurchaseStatus;
use serde_json::json;
use store::packs::GetPack;
use store::purchases::GetPurchase;
use testkit::fault_proxy::{Fault, THROTTLING};
use testkit::packs::active;
use testkit::purchases::{Function, PurchaseEnv, fixture, reserve, sibling_binary, start_event};
use testkit::runtime_api::Outcome;
use testkit::tokens::token;

const BINARY: &str = env!("CARGO_BIN_EXE_release-holds");

/// The sweep, against `env`'s table (it needs nothing else).
async fn sweeper(env: &PurchaseEnv) -> Function {
    Function::spawn(
        BINARY,
        &[
            ("TABLE_NAME".into(), env.store.table().into()),
            ("AWS_ENDPOINT_URL_DYNAMODB".into(), env.endpoint.clone()),
            ("RUST_LOG".into(), "warn".into()),
            ("SUMMARY_REFRESH_AGAIN_SECONDS".into(), "0".into()),
        ],
    )
    .await
}

async fn remaining(env: &PurchaseEnv, pack: &str) -> u64 {
    testkit::packs::remaining(&env.store, pack).await
}

#[tokio::test]
async fn the_scheduled_event_releases_the_expired_holds_and_only_those() {
    let env = PurchaseEnv::new().await;
    testkit::packs::save(&env.store, &active("p", 10)).await;
    let start = env
        .spawn(
            sibling_binary(BINARY, "start-purchase").to_str().unwrap(),
            &[("PURCHASE_HOLD_SECONDS", "1")],
        )
        .await;
    let buyer = token("buyer", None);
    let started = start
        .call(&start_event("p", Some(&buyer), Some("key-1"), None))
        .await;
    assert_eq!(started.status, 201, "{started:?}");
    let id = started.body["purchase"]["id"].as_str().unwrap().to_owned();
    // A hold that runs on: not released.
    let kept = reserve(&env.store, "other-buyer", "p", "key-1", 600).await;
    assert_eq!(remaining(&env, "p").await, 98);

    tokio::time::sleep(Duration::from_millis(1200)).await;
    let sweep = sweeper(&env).await;
    let outcome = sweep.invoke(fixture("release-holds", None)).await;
    assert_eq!(
        outcome,
        Outcome::Response(
            json!({"released": 1, "lostRaces": 0, "skipped": 0, "batches": 1, "more": false, "summaries": 1, "seedsPublished": 0})
        )
    );
    assert_eq!(remaining(&env, "p").await, 99);
    assert_eq!(
        env.store
            .get_pack(&testkit::ids::pack("p"))
            .await
            .unwrap()
            .unwrap()
            .pack
            .remaining,
        99,
        "the pack's summary refreshed from its shares"
    );
    let purchase = env
        .store
        .get_purchase(&ids::user("buyer"), &ids::purchase(&id))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(purchase.status, PurchaseStatus::Expired);
    let kept = env
        .store
        .get_purchase(&ids::user("other-buyer"), &kept.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(kept.status, PurchaseStatus::Reserved);

    // Nothing left to release: safe to run again.
    let outcome = sweep.invoke(fixture("release-holds", None)).await;
    assert_eq!(
        outcome,
        Outcome::Response(
            json!({"released": 0, "lostRaces": 0, "skipped": 0, "batches": 1, "more": false, "summaries": 0, "seedsPublished": 0})
        )
    );
    assert_eq!(remaining(&env, "p").await, 99);
}

#[tokio::test]
async fn missing_table_name_stops_the_function_with_a_clear_message() {
    testkit::runtime_api::assert_init_fails_naming(BINARY, &[], "TABLE_NAME").await;
}

/// DynamoDB throttling: the invocation fails (the scheduler retries it), the process stays and
/// sweeps on the next one.
#[tokio::test]
async fn a_dynamodb_outage_fails_the_invocation_and_the_next_one_sweeps() {
    let (env, proxy) = PurchaseEnv::behind_proxy().await;
    reserve(&env.store, "buyer", "p", "key-1", 1).await;
    let mut sweep = sweeper(&env).await;
    tokio::time::sleep(Duration::from_millis(1200)).await;
    proxy.set(THROTTLING);
    let outcome = sweep.invoke(fixture("release-holds", None)).await;
    assert!(matches!(outcome, Outcome::Error(_)), "{outcome:?}");
    proxy.set(Fault::None);
    let outcome = sweep.invoke(fixture("release-holds", None)).await;
    assert_eq!(
        outcome,
        Outcome::Response(
            json!({"released": 1, "lostRaces": 0, "skipped": 0, "batches": 1, "more": false, "summaries": 0, "seedsPublished": 0})
        )
    );
    assert!(sweep.is_running(), "the function process is still running");
}
