//! `GET /api/me/export` over API Gateway events, on both stores (DynamoStore on moto_server and
//! MemoryStore): a scripted fan who made one of everything finds each item in the export,
//! walked page by page; a fan with hundreds of purchases gets every one once; another fan's
//! items never show; a cursor of another fan, or tampered with, is refused. And the two lists
//! the export added to the stores (top-ups and queue entries by fan) page newest first.

use std::collections::BTreeSet;
use std::sync::Arc;

use api::http::routes::account_routes;
use api::state::MeState;
use domain::cash::Money;
use domain::cash::parse_credit;
use domain::products::PayMethod;
use domain::products::order::{Order, order_id};
use domain::products::seed::parse_products;
use domain::profile::patch::{ProfilePatch, ProfilePatchBody};
use domain::quests::{Claim, Reward, grant};
use domain::queue::entry::QueueEntry;
use domain::sessions::Revocations;
use domain::timestamp::Timestamp;
use domain::topups::{TopUp, top_up_id};
use serde_json::Value;
use store::purchases::SeedPurchases;
use store::{MemoryStore, Store};
use testkit::events::{self, ApiEvent, parts};
use testkit::ids::{pack, user};
use testkit::mine::export_items as items;
use testkit::packs::at;
use testkit::tokens::token;
use testkit::waiting_room::signer;

use crate::locker_room_contract::body;

testkit::store_contract!(
    by_value:
    top_ups_and_queue_entries_list_by_fan_newest_first_page_by_page,
);

fn state<S>(store: S) -> Arc<MeState<S>> {
    Arc::new(MeState {
        store,
        verifier: testkit::tokens::verifier(),
        cursors: testkit::cursor_signer(),
        revealed: Default::default(),
    })
}

/// `GET /api/me/export?query` as `fan`.
async fn call(state: &Arc<MeState<impl Store + 'static>>, fan: &str, query: &str) -> (u16, Value) {
    let request = ApiEvent::get("/api/me/export")
        .query(query)
        .bearer(&token(fan, None))
        .request();
    parts(&events::call(account_routes(), state, request).await)
}

/// Every page of `fan`'s export, first to last.
async fn export(state: &Arc<MeState<impl Store + 'static>>, fan: &str) -> Vec<Value> {
    testkit::mine::pages("", |query| async move { call(state, fan, &query).await }).await
}

fn pending_top_up(fan: &str, key: &str, amount: u64) -> TopUp {
    let fan = user(fan);
    TopUp::pending(
        top_up_id(&fan, key),
        fan,
        Money {
            amount,
            currency: "USD".into(),
        },
        Timestamp::now(),
    )
}

/// `fan` makes one of everything: a profile with a name, a wallet link, an opened purchase, a
/// credit, a top-up, a card order, a quest's claim, a place in a line, a locker room and a logout of all.
async fn one_of_everything(store: &(impl Store + SeedPurchases), fan: &str, name: &str) {
    let fan_id = user(fan);
    let now = Timestamp::now();
    let patch: ProfilePatch =
        serde_json::from_value::<ProfilePatchBody>(serde_json::json!({"displayName": name}))
            .unwrap()
            .check()
            .unwrap();
    store
        .patch_profile(&fan_id, Some("fan@example.com"), &patch, now)
        .await
        .unwrap();
    testkit::wallets::link(
        store,
        &fan_id,
        &format!(r#"{{"address":"0x{fan}"}}"#),
        now,
        None,
    )
    .await
    .unwrap();
    testkit::quests::open_one(store, fan).await;
    let credit = parse_credit(fan, "500", "USD", &format!("grant-{fan}")).unwrap();
    store.credit_cash(&credit, now).await.unwrap();
    store
        .create_top_up(&pending_top_up(fan, "first", 1000))
        .await
        .unwrap();
    let frame = parse_products(include_bytes!("../../../infra/seed/products.json"))
        .unwrap()
        .into_iter()
        .find(|product| product.id.as_str() == "frame-gold")
        .unwrap();
    store
        .seed_products(std::slice::from_ref(&frame))
        .await
        .unwrap();
    let order = Order::place(
        order_id(&fan_id, "frame"),
        fan_id.clone(),
        &frame,
        frame.prices[0].clone(),
        PayMethod::Card,
        now,
    );
    store.place_order(&order, &frame).await.unwrap();
    let quest = testkit::quests::quest(
        "welcome",
        Reward::Cash {
            amount: 50,
            currency: "USD".into(),
        },
    );
    let granted = grant(&quest, &fan_id);
    let claim = Claim::new(&quest, &fan_id, "claim-1", &granted, now);
    store.claim_quest(&claim, &granted).await.unwrap();
    let entry = QueueEntry::new(pack("drop"), fan_id.clone(), at(-5), &signer());
    store.join_queue(&entry).await.unwrap();
    let opened = format!("{fan}-0004");
    store
        .put_locker_room(&fan_id, &body(Some("My room"), &[(&opened, 0)]), now)
        .await
        .unwrap();
    store
        .revise_revocations(&fan_id, |_| Revocations {
            // An hour ago: the tokens of this test, issued now, still pass.
            before: Some(at(-3600).unix_seconds() as i64),
            ..Revocations::default()
        })
        .await
        .unwrap();
}

async fn a_scripted_fan_finds_every_item_they_made(
    state: Arc<MeState<impl Store + SeedPurchases + 'static>>,
) {
    one_of_everything(&state.store, "fan-1", "Zoe.Hoops").await;
    one_of_everything(&state.store, "fan-2", "Max.Dunks").await;
    let pages = export(&state, "fan-1").await;
    let sections: Vec<&str> = pages
        .iter()
        .map(|page| page["section"].as_str().unwrap())
        .collect();
    assert_eq!(
        sections,
        [
            "profile",
            "links",
            "wallets",
            "lockerRoom",
            "balances",
            "ledger",
            "purchases",
            "topUps",
            "orders",
            "rewards",
            "queueEntries",
            "events",
            "sessions"
        ],
        "one page each, in order"
    );
    let one = |section: &str| {
        let found = items(&pages, section);
        assert_eq!(found.len(), 1, "{section}: {found:?}");
        found[0].clone()
    };
    let profile = one("profile");
    assert_eq!(
        (&profile["id"], &profile["displayName"], &profile["email"]),
        (
            &Value::from("fan-1"),
            &Value::from("Zoe.Hoops"),
            &Value::from("fan@example.com")
        )
    );
    assert_eq!(
        one("links")["payload"],
        serde_json::json!({"address": "0xfan-1"})
    );
    assert_eq!(
        one("wallets")["payload"],
        serde_json::json!({"address": "0xfan-1"})
    );
    let room = one("lockerRoom");
    assert_eq!(
        (&room["title"], &room["displayName"]),
        (&Value::from("My room"), &Value::from("Zoe.Hoops"))
    );
    assert_eq!(room["items"][0]["purchaseId"], "fan-1-0004");
    assert!(room["stats"].is_object());
    assert_eq!(
        one("balances"),
        serde_json::json!({"amount": 550, "currency": "USD"})
    );
    let ledger = items(&pages, "ledger");
    let mut amounts: Vec<u64> = ledger
        .iter()
        .map(|e| e["amount"].as_u64().unwrap())
        .collect();
    amounts.sort_unstable();
    assert_eq!(amounts, [50, 500], "the credit and the quest's reward");
    let purchase = one("purchases");
    assert_eq!(
        (&purchase["id"], &purchase["status"]),
        (&Value::from("fan-1-0004"), &Value::from("opened"))
    );
    assert!(
        !purchase["items"].as_array().unwrap().is_empty(),
        "with its items"
    );
    let top_up = one("topUps");
    assert_eq!(
        (&top_up["amount"], &top_up["status"]),
        (&Value::from(1000), &Value::from("pending"))
    );
    let order = one("orders");
    assert_eq!(
        (&order["productId"], &order["status"]),
        (&Value::from("frame-gold"), &Value::from("pending"))
    );
    assert_eq!(one("rewards")["questId"], "welcome");
    let entry = one("queueEntries");
    assert_eq!(
        (&entry["packId"], &entry["status"]),
        (&Value::from("drop"), &Value::from("waiting"))
    );
    let events: Vec<&str> = items(&pages, "events")
        .iter()
        .map(|event| event["type"].as_str().unwrap())
        .collect();
    for expected in ["profile.updated", "wallet.linked", "queue.joined"] {
        assert!(events.contains(&expected), "{expected} in {events:?}");
    }
    assert!(
        items(&pages, "events")
            .iter()
            .all(|event| event["subject"]["id"] == "fan-1"),
        "the fan's own events only"
    );
    assert!(one("sessions")["revokedBefore"].is_string());
    let text = serde_json::to_string(&pages).unwrap();
    assert!(
        !text.contains("fan-2") && !text.contains("Max.Dunks"),
        "nothing of fan-2's"
    );
}

/// `fan`'s export holds each of their `count` purchases once, and none of another fan's.
async fn many_purchases_come_out_whole_once(
    state: Arc<MeState<impl Store + SeedPurchases + 'static>>,
    count: u32,
) {
    let now = Timestamp::now();
    for (fan, offset) in [("fan-1", 0), ("fan-2", 30)] {
        let purchases: Vec<_> = (0..count)
            .map(|n| testkit::mine::purchase(fan, n, offset, false, now))
            .collect();
        for chunk in purchases.chunks(25) {
            state.store.seed_purchases(chunk).await.unwrap();
        }
    }
    let pages = export(&state, "fan-1").await;
    let ids: Vec<&str> = items(&pages, "purchases")
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    let distinct: BTreeSet<&str> = ids.iter().copied().collect();
    assert_eq!(
        (ids.len(), distinct.len()),
        (count as usize, count as usize),
        "no duplicate"
    );
    assert!(ids.iter().all(|id| id.starts_with("fan-1-")));
    let pages_of_purchases = pages.iter().filter(|p| p["section"] == "purchases").count();
    assert_eq!(pages_of_purchases, (count as usize).div_ceil(100).max(1));
}

async fn cursors_of_another_fan_or_tampered_are_refused(state: Arc<MeState<impl Store + 'static>>) {
    let (_, first) = call(&state, "fan-1", "").await;
    let cursor = first["nextCursor"].as_str().unwrap().to_owned();
    assert_eq!(
        call(&state, "fan-1", &format!("cursor={cursor}")).await.0,
        200
    );
    let refused = |answer: (u16, Value)| {
        assert_eq!(
            (answer.0, answer.1["error"]["code"].as_str()),
            (400, Some("invalid_cursor")),
            "{}",
            answer.1
        );
    };
    refused(call(&state, "fan-2", &format!("cursor={cursor}")).await);
    let (payload, tag) = cursor.split_once('.').unwrap();
    let flipped = |text: &str| {
        let mut chars: Vec<char> = text.chars().collect();
        chars[1] = if chars[1] == 'A' { 'B' } else { 'A' };
        chars.into_iter().collect::<String>()
    };
    for forged in [
        format!("{}.{tag}", flipped(payload)),
        format!("{payload}.{}", flipped(tag)),
        "abc".to_owned(),
        String::new(),
    ] {
        refused(call(&state, "fan-1", &format!("cursor={forged}")).await);
    }
    // A cursor of another list of the fan's.
    let signed = testkit::cursor_signer();
    let purchases = signed.encode_scoped(
        &domain::packs::listing::cursor_scope(&["purchases", "fan-1", "", ""]),
        "purchases",
    );
    refused(call(&state, "fan-1", &format!("cursor={purchases}")).await);
}

#[tokio::test]
async fn a_scripted_fan_finds_every_item_on_memory() {
    a_scripted_fan_finds_every_item_they_made(state(MemoryStore::default())).await;
}

#[tokio::test]
async fn a_scripted_fan_finds_every_item_on_dynamodb() {
    let (_one_at_a_time, store) = testkit::moto::atomic_table().await;
    a_scripted_fan_finds_every_item_they_made(state(store)).await;
}

#[tokio::test]
async fn two_hundred_fifty_purchases_come_out_once_on_memory() {
    many_purchases_come_out_whole_once(state(MemoryStore::default()), 250).await;
}

#[tokio::test]
async fn a_hundred_twenty_purchases_come_out_once_on_dynamodb() {
    let (_one_at_a_time, store) = testkit::moto::atomic_table().await;
    many_purchases_come_out_whole_once(state(store), 120).await;
}

#[tokio::test]
async fn bad_cursors_are_refused_on_memory() {
    cursors_of_another_fan_or_tampered_are_refused(state(MemoryStore::default())).await;
}

#[tokio::test]
async fn bad_cursors_are_refused_on_dynamodb() {
    let (_one_at_a_time, store) = testkit::moto::atomic_table().await;
    cursors_of_another_fan_or_tampered_are_refused(state(store)).await;
}

/// Three top-ups and three places in lines of one fan's (and one of another's), two a page.
async fn top_ups_and_queue_entries_list_by_fan_newest_first_page_by_page(store: impl Store) {
    let fan = user("fan-1");
    let mut top_ups = Vec::new();
    for (n, key) in ["a", "b", "c"].into_iter().enumerate() {
        let mut top_up = pending_top_up("fan-1", key, 100 + n as u64);
        top_up.created_at = at(-100 + n as i64);
        store.create_top_up(&top_up).await.unwrap();
        top_ups.push(top_up.id.to_string());
    }
    store
        .create_top_up(&pending_top_up("fan-2", "a", 100))
        .await
        .unwrap();
    let mut entries = Vec::new();
    for (n, drop) in ["d1", "d2", "d3"].into_iter().enumerate() {
        let entry = QueueEntry::new(pack(drop), fan.clone(), at(-50 + n as i64), &signer());
        store.join_queue(&entry).await.unwrap();
        entries.push(drop.to_owned());
    }
    let other = QueueEntry::new(pack("d1"), user("fan-2"), at(-1), &signer());
    store.join_queue(&other).await.unwrap();
    top_ups.reverse();
    entries.reverse();

    let first = store.list_my_top_ups(&fan, 2, None).await.unwrap();
    let next = first.next.clone().expect("a second page");
    let second = store.list_my_top_ups(&fan, 2, Some(&next)).await.unwrap();
    assert_eq!(second.next, None);
    let listed: Vec<String> = first
        .entries
        .iter()
        .chain(&second.entries)
        .map(|top_up| top_up.id.to_string())
        .collect();
    assert_eq!(listed, top_ups, "newest first, each once");

    let first = store.list_my_entries(&fan, 2, None).await.unwrap();
    let next = first.next.clone().expect("a second page");
    let second = store.list_my_entries(&fan, 2, Some(&next)).await.unwrap();
    assert_eq!(second.next, None);
    let listed: Vec<String> = first
        .entries
        .iter()
        .chain(&second.entries)
        .map(|entry| entry.pack_id.to_string())
        .collect();
    assert_eq!(listed, entries, "newest first, each once");
    assert!(
        first
            .entries
            .iter()
            .chain(&second.entries)
            .all(|e| e.user_id == fan),
        "the fan's own"
    );
}
