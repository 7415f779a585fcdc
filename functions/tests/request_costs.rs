//! Issue 45: what a request costs in DynamoDB calls, counted through the binaries (a fault proxy
//! in front of moto): a public read writes nothing (the edge limits it, no rate counter), a
//! signed-in read makes its own reads only, a start its own calls and its two counters (the
//! fan's and the address's: starts spend a drop's units, and are counted across instances). A
//! write that spends nothing scarce makes only its own write: `web3_link.rs` counts it.

use std::collections::BTreeMap;

use testkit::events::ApiEvent;
use testkit::purchases::{PurchaseEnv, start_event};
use testkit::tokens::token;

const LIST_PACKS: &str = env!("CARGO_BIN_EXE_list-packs");
const ME_CASH: &str = env!("CARGO_BIN_EXE_me-cash");
const START_PURCHASE: &str = env!("CARGO_BIN_EXE_start-purchase");

/// The writes among `made`, by operation.
fn writes(made: &BTreeMap<String, usize>) -> BTreeMap<String, usize> {
    let writing = [
        "PutItem",
        "UpdateItem",
        "DeleteItem",
        "TransactWriteItems",
        "BatchWriteItem",
    ];
    made.iter()
        .filter(|(operation, _)| writing.contains(&operation.as_str()))
        .map(|(operation, count)| (operation.clone(), *count))
        .collect()
}

/// get-pack's own count is `get_pack.rs`'s: one `BatchGetItem`, then none while its copy lasts.
#[tokio::test]
async fn a_public_read_writes_nothing() {
    let (env, proxy) = PurchaseEnv::behind_proxy().await;
    let list_packs = env
        .spawn(LIST_PACKS, &[("CURSOR_SECRET", testkit::CURSOR_SECRET)])
        .await;
    let (listed, made) = proxy
        .counting(list_packs.call(&ApiEvent::get("/api/packs")))
        .await;
    assert_eq!(listed.status, 200, "{listed:?}");
    assert_eq!(writes(&made), BTreeMap::new(), "{made:?}");
    // Limited all the same: in the instance's memory, by the address.
    assert_eq!(
        listed.header("ratelimit-policy"),
        Some(r#""addr-read";q=6000;w=60"#)
    );
}

#[tokio::test]
async fn a_signed_in_read_makes_its_own_reads_only() {
    let (env, proxy) = PurchaseEnv::behind_proxy().await;
    let me_cash = env
        .spawn(ME_CASH, &[("CURSOR_SECRET", testkit::CURSOR_SECRET)])
        .await;
    let ask = ApiEvent::get("/api/me/cash").bearer(&token("fan-costs", None));
    let (answer, made) = proxy.counting(me_cash.call(&ask)).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(writes(&made), BTreeMap::new(), "{made:?}");
    assert_eq!(
        answer.header("ratelimit-policy"),
        Some(r#""addr-read";q=6000;w=60, "fan-read";q=300;w=60"#)
    );
}

#[tokio::test]
async fn a_start_makes_its_own_calls_and_its_two_counters() {
    let (env, proxy) = PurchaseEnv::behind_proxy().await;
    let start = env.spawn(START_PURCHASE, &[]).await;
    let fan = token("fan-start-costs", None);
    let event = start_event("p", Some(&fan), Some("costs-1"), None).source_ip("198.51.100.21");
    let (answer, made) = proxy.counting(start.call(&event)).await;
    assert_eq!(answer.status, 201, "{answer:?}");
    assert_eq!(made.get("UpdateItem"), Some(&2), "{made:?}");
    // Its read, and since its `purchase.reserved` (issue 46) the fan's event sequence: one
    // BatchGetItem more than before; the event is written in the start's one transaction.
    assert_eq!(made.get("BatchGetItem"), Some(&2), "{made:?}");
    assert_eq!(made.get("TransactWriteItems"), Some(&1), "{made:?}");
}
