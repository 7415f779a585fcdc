//! Issue 45: what a request costs in DynamoDB calls, counted through the binaries (a fault proxy
//! in front of moto): a public read writes nothing (the edge limits it, no rate counter), a
//! signed-in read makes its own reads only, a start its own calls and its two counters (the
//! fan's and the address's: starts spend a drop's units, and are counted across instances). A
//! write that spends nothing scarce makes only its own write: `web3_link.rs` counts it. A change
//! writes its events in its own transaction (issue 46): one `BatchGetItem` of its subjects'
//! sequences more, and its one conditional write is a `TransactWriteItems`.

use std::collections::BTreeMap;

use testkit::events::ApiEvent;
use testkit::purchases::{PurchaseEnv, start_event};
use testkit::tokens::token;

const LIST_PACKS: &str = env!("CARGO_BIN_EXE_list-packs");
const ME_CASH: &str = env!("CARGO_BIN_EXE_me-cash");
const START_PURCHASE: &str = env!("CARGO_BIN_EXE_start-purchase");
const ME_PROFILE: &str = env!("CARGO_BIN_EXE_me-profile");
const ME_WALLETS: &str = env!("CARGO_BIN_EXE_me-wallets");

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
    // A warm instance (the app configuration read above, kept a few seconds): its balances
    // item, and the fan's sessions item, what every signed-in request reads to refuse an ended
    // session (one eventually consistent GetItem, docs/sessions.md).
    let (_, made) = proxy.counting(me_cash.call(&ask)).await;
    assert_eq!(
        made,
        testkit::fault_proxy::counts(&[("GetItem", 2)]),
        "{made:?}"
    );
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

fn counts(pairs: &[(&str, usize)]) -> BTreeMap<String, usize> {
    pairs
        .iter()
        .map(|(operation, count)| ((*operation).to_owned(), *count))
        .collect()
}

/// A fan's change (issue 46): its own reads, its event's sequence read (`BatchGetItem`) and one
/// transaction of the change with its event; a repeat that changes nothing writes nothing. Every
/// signed-in request also reads the fan's sessions item (one `GetItem`, issue 47).
#[tokio::test]
async fn a_fans_change_makes_its_own_calls_and_its_events_sequence_read() {
    let (env, proxy) = PurchaseEnv::behind_proxy().await;
    let fan = token("fan-change-costs", None);
    let profile = env.spawn(ME_PROFILE, &[]).await;
    // The first request (the profile created, the connection and configuration warmed).
    let first = profile.call(&ApiEvent::get("/api/me").bearer(&fan)).await;
    assert_eq!(first.status, 200, "{first:?}");
    let patch = ApiEvent::new("PATCH", "/api/me")
        .bearer(&fan)
        .json(r#"{"avatarUrl":"https://a.example/me.png"}"#);
    let (answer, made) = proxy.counting(profile.call(&patch)).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    let change = [("BatchGetItem", 1), ("TransactWriteItems", 1)];
    // The profile, the sessions and the cosmetics the answer shows (issue 48).
    assert_eq!(made, counts(&[&[("GetItem", 3)], &change[..]].concat()));
    let (answer, made) = proxy.counting(profile.call(&patch)).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(made, counts(&[("GetItem", 3)]), "a repeat reads only");
    // A locker room's put: the room read (Query), then the change.
    let put = ApiEvent::new("PUT", "/api/me/locker-room")
        .bearer(&fan)
        .json(r#"{"title":"Mine","items":[]}"#);
    let (answer, made) = proxy.counting(profile.call(&put)).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    let sessions = ("GetItem", 1);
    assert_eq!(
        made,
        counts(&[&[("Query", 1), sessions], &change[..]].concat())
    );
    let (_, made) = proxy.counting(profile.call(&put)).await;
    assert_eq!(
        made,
        counts(&[("Query", 1), sessions]),
        "a repeat reads only"
    );
    // A wallet's removal: the change only (it reads nothing first but the sessions).
    let user = testkit::ids::user("fan-change-costs");
    let identity = r#"{"address":"0x0000000000000000000000000000000000000001","chainId":1}"#;
    testkit::wallets::link(
        &env.store,
        &user,
        identity,
        domain::timestamp::Timestamp::now(),
        None,
    )
    .await
    .unwrap();
    let wallet = store::wallets::ListWallets::list_wallets(&env.store, &user)
        .await
        .unwrap()[0]
        .id
        .clone();
    let wallets = env.spawn(ME_WALLETS, &[]).await;
    let listed = wallets
        .call(&ApiEvent::get("/api/me/wallets").bearer(&fan))
        .await;
    assert_eq!(listed.status, 200, "{listed:?}");
    let delete = ApiEvent::new("DELETE", &format!("/api/me/wallets/{wallet}")).bearer(&fan);
    let (answer, made) = proxy.counting(wallets.call(&delete)).await;
    assert_eq!(answer.status, 204, "{answer:?}");
    assert_eq!(made, counts(&[&[sessions], &change[..]].concat()));
}
