//! The storage contract, run against both stores: DynamoStore on a real DynamoDB-compatible server
//! (moto_server on loopback) and the local API's MemoryStore. Plus DynamoDB's own failure modes.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use domain::links::WEB3_PROVIDER;
use domain::packs::document::PackDocument;
use domain::packs::listing::{ListingKey, PackFilter, Page, PageRequest};
use domain::packs::seed::{ReseedRefusal, SeedWrite};
use domain::packs::{Odds, Pack, PackItem, PackStatus};
use store::Store;
use store::packs::{GetPack, ListActivePacks};
use store::packs::{SeedFailure, SeedPackError, seed};
use store::{DynamoStore, MemoryStore, StoreError};

use domain::timestamp::Timestamp;
use testkit::fault_proxy::{Fault, FaultProxy};
use testkit::moto::{MotoServer, client_for};
use testkit::packs::{active, ending, with_status};

mod seeding;
use seeding::*;

testkit::store_contract!(
    by_ref:
    lists_exactly_the_active_packs_in_order,
    pages_walk_the_whole_list_without_gaps_or_repeats,
    a_full_last_page_has_no_next_cursor,
    a_pack_leaving_active_status_leaves_the_list,
    a_pack_whose_sale_start_moves_is_listed_once,
    a_pack_reads_back_field_for_field_with_items_and_a_seed,
    reseeding_a_pack_on_sale_keeps_remaining_and_its_seed,
    reseeding_refuses_to_change_what_buyers_pay_for,
    a_pack_before_its_sale_is_replaced_whole,
    a_pack_whose_sale_starts_within_the_freeze_keeps_its_terms,
    a_seeding_write_over_a_stale_read_changes_nothing,
    linking_again_replaces_the_payload_and_keeps_linked_at,
    every_json_value_round_trips_exactly,
);

async fn save_all(store: &impl Store, packs: &[Pack]) {
    for pack in packs {
        testkit::packs::save(store, pack).await;
    }
}

async fn try_page(
    store: &impl ListActivePacks,
    limit: usize,
    after: Option<ListingKey>,
) -> Result<Page, StoreError> {
    store
        .list_active_packs(&PageRequest {
            now: Timestamp::now(),
            limit,
            after,
            filter: PackFilter::default(),
        })
        .await
}

async fn page(store: &impl Store, limit: usize, after: Option<ListingKey>) -> Page {
    try_page(store, limit, after).await.expect("list")
}

/// `packs` as a list page holds them: without items.
fn as_listed(packs: impl IntoIterator<Item = Pack>) -> Vec<Pack> {
    packs
        .into_iter()
        .map(|mut pack| {
            // Pages show neither the items nor how the supply is split.
            pack.items.clear();
            pack.supply_shards = None;
            pack
        })
        .collect()
}

fn whole(packs: &[PackDocument]) -> Vec<Pack> {
    packs
        .iter()
        .map(|p| p.to_pack().expect("a whole pack"))
        .collect()
}

fn ids(packs: &[PackDocument]) -> Vec<String> {
    whole(packs).into_iter().map(|p| p.id).collect()
}

/// Packs on every side of the activeness rule.
fn mixed_packs() -> Vec<Pack> {
    let mut sold_out = active("sold-out", 500);
    sold_out.remaining = 0;
    vec![
        active("b-same-start", 3600),
        active("a-same-start", 3600),
        active("newest", 60),
        active("oldest", 86_400 * 400),
        sold_out,
        ending(active("ends-later", 7200), 3600),
        ending(active("ended", 7200), -1),
        active("future", -3600),
        with_status(active("draft", 100), PackStatus::Draft),
        with_status(active("archived", 100), PackStatus::Archived),
    ]
}

async fn lists_exactly_the_active_packs_in_order(store: &impl Store) {
    let packs = mixed_packs();
    save_all(store, &packs).await;

    let listed = page(store, 50, None).await;
    assert_eq!(
        ids(&listed.packs),
        [
            "newest",
            "sold-out",
            "a-same-start",
            "b-same-start",
            "ends-later",
            "oldest"
        ]
    );
    assert_eq!(listed.next, None);

    // The store and the domain rule agree, and packs come back whole.
    let now = Timestamp::now();
    let mut expected: Vec<Pack> = packs.into_iter().filter(|p| p.is_active_at(now)).collect();
    expected.sort_by_key(ListingKey::of);
    assert_eq!(whole(&listed.packs), as_listed(expected));
}

async fn pages_walk_the_whole_list_without_gaps_or_repeats(store: &impl Store) {
    let mut packs: Vec<Pack> = (0..7)
        .map(|i| active(&format!("p{i}"), 100 * (i + 1)))
        .collect();
    packs.push(ending(active("ended-between", 250), -5));
    save_all(store, &packs).await;

    let signer = testkit::cursor_signer();
    let mut seen = Vec::new();
    let mut after = None;
    for pages in 1.. {
        let result = page(store, 3, after).await;
        assert!(result.packs.len() <= 3);
        seen.extend(ids(&result.packs));
        // Through the cursor a client would send back.
        after = result.next.map(|key| {
            signer
                .decode(&signer.encode(&key), Timestamp::now())
                .unwrap()
        });
        if after.is_none() {
            break;
        }
        assert!(pages < 10, "pagination must end");
    }
    assert_eq!(seen, ["p0", "p1", "p2", "p3", "p4", "p5", "p6"]);
}

async fn a_full_last_page_has_no_next_cursor(store: &impl Store) {
    save_all(store, &[active("x", 10), active("y", 20)]).await;
    let result = page(store, 2, None).await;
    assert_eq!(ids(&result.packs), ["x", "y"]);
    assert_eq!(result.next, None);
    let result = page(store, 1, None).await;
    assert_eq!(ids(&result.packs), ["x"]);
    assert_eq!(result.next.as_ref().map(ListingKey::pack_id), Some("x"));
}

async fn a_pack_leaving_active_status_leaves_the_list(store: &impl Store) {
    let pack = active("p", 10);
    save_all(store, std::slice::from_ref(&pack)).await;
    assert_eq!(page(store, 10, None).await.packs.len(), 1);
    testkit::packs::save(store, &with_status(pack.clone(), PackStatus::Archived)).await;
    assert!(page(store, 10, None).await.packs.is_empty());
    assert_eq!(
        store
            .get_pack(&testkit::ids::pack("p"))
            .await
            .unwrap()
            .map(|p| p.pack.status),
        Some(PackStatus::Archived)
    );
    assert_eq!(
        store.get_pack(&testkit::ids::pack("nope")).await.unwrap(),
        None
    );
}

async fn a_pack_whose_sale_start_moves_is_listed_once(store: &impl Store) {
    // Until 5 minutes before its sale a pack's start may move (after that, it is frozen).
    save_all(store, &[active("moving", -1000), active("other", 50)]).await;
    assert_eq!(ids(&page(store, 10, None).await.packs), ["other"]);
    testkit::packs::save(store, &active("moving", 10)).await;
    assert_eq!(ids(&page(store, 10, None).await.packs), ["moving", "other"]);
}

async fn upsert(
    store: &impl Store,
    user_id: &str,
    payload: &str,
    at: Timestamp,
    email: Option<&str>,
) {
    testkit::wallets::link(store, &testkit::ids::user(user_id), payload, at, email)
        .await
        .expect("upsert link");
}

async fn linking_again_replaces_the_payload_and_keeps_linked_at(store: &impl Store) {
    let t1 = testkit::packs::at(-60);
    upsert(
        store,
        "user_1",
        r#"{"address":"0xabc"}"#,
        t1,
        Some("fan@example.com"),
    )
    .await;
    let link = store
        .get_link(&testkit::ids::user("user_1"), WEB3_PROVIDER)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((link.linked_at, link.updated_at), (t1, t1));
    assert_eq!(link.payload, r#"{"address":"0xabc"}"#);
    assert_eq!(link.email.as_deref(), Some("fan@example.com"));

    let t2 = Timestamp::now();
    upsert(store, "user_1", "[1,2]", t2, None).await;
    let link = store
        .get_link(&testkit::ids::user("user_1"), WEB3_PROVIDER)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((link.linked_at, link.updated_at), (t1, t2));
    assert_eq!(link.payload, "[1,2]");
    assert_eq!(link.email, None);
    assert_eq!(
        (link.user_id.as_str(), link.provider.as_str()),
        ("user_1", WEB3_PROVIDER)
    );
    assert!(
        store
            .get_link(&testkit::ids::user("user_2"), WEB3_PROVIDER)
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        store
            .get_link(&testkit::ids::user("user_1"), "other-provider")
            .await
            .unwrap()
            .is_none()
    );
}

async fn every_json_value_round_trips_exactly(store: &impl Store) {
    for (i, json) in [
        "1e400",
        "-1e-400",
        "123456789012345678901234567890.123456789012345678901234567890",
        "5e-324",
        "1.0",
        r#""unicode ✓ \u0000 \ud83d\ude00 \"quoted\"""#,
        r#"{"b":1,"a":[true,{"nested":{"deep":[1.50,"x"]}}],"b2":null}"#,
        r#"{ "spaced" :  [ 1 , 2 ] }"#,
        "[]",
        "{}",
        "true",
        r#""0""#,
    ]
    .into_iter()
    .enumerate()
    {
        let user = format!("user_{i}");
        upsert(store, &user, json, Timestamp::now(), None).await;
        assert_eq!(
            store
                .get_link(&testkit::ids::user(&user), WEB3_PROVIDER)
                .await
                .unwrap()
                .unwrap()
                .payload,
            json
        );
    }
}

// --- DynamoDB only ---

/// A new table, read directly, and a store on it through a proxy whose first TransactWriteItems
/// meets `fault`.
async fn seeding_through(fault: Fault) -> (DynamoStore, FaultProxy, DynamoStore) {
    let direct = testkit::moto::shared_table().await;
    let proxy = FaultProxy::start(testkit::moto::shared_endpoint()).await;
    let store = DynamoStore::new(client_for(&proxy.endpoint()).await, direct.table());
    proxy.set_for_operation(fault, "TransactWriteItems", 1);
    (direct, proxy, store)
}

/// A seeding transaction applied whose answer is lost: the SDK's retry carries the same
/// ClientRequestToken and is answered as applied (DynamoDB's idempotency, which testkit's moto
/// keeps), not refused as a repeat (seen once in the cargo lambda watch smoke test, on a moto
/// that did not keep it).
#[tokio::test]
async fn a_seeding_write_whose_answer_was_lost_is_answered_as_applied() {
    let (direct, proxy, store) =
        seeding_through(Fault::ErrorAfterForwarding(500, "InternalServerError")).await;
    let pack = pack_with_items("lost");
    let written = seed(&store, &pack, Timestamp::now()).await.unwrap();
    assert_eq!(proxy.operation_count("TransactWriteItems"), 2);
    let stored = direct
        .get_pack(&testkit::ids::pack("lost"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (stored.pack.name, stored.revision),
        (pack.name, 1),
        "{written:?}"
    );
}

/// A seeding write refused because the pack changed since it was read (another writer came
/// between) is decided again on the pack as it now stands.
#[tokio::test]
async fn a_seeding_write_refused_for_a_change_is_decided_again() {
    let (direct, proxy, store) = seeding_through(Fault::Cancelled("ConditionalCheckFailed")).await;
    let pack = pack_with_items("changed");
    seed(&store, &pack, Timestamp::now()).await.unwrap();
    assert_eq!(proxy.operation_count("TransactWriteItems"), 2);
    let stored = direct
        .get_pack(&testkit::ids::pack("changed"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.pack.name, pack.name);
}

#[tokio::test]
async fn an_unreachable_table_is_unavailable_within_seconds() {
    let client = client_for(&format!("http://127.0.0.1:{}", testkit::free_port())).await;
    let store = DynamoStore::new(client, "fan-api");
    let started = Instant::now();
    let result = try_page(&store, 5, None).await;
    assert!(
        matches!(result, Err(StoreError::Unavailable { .. })),
        "{result:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[tokio::test]
async fn a_missing_table_is_an_internal_error() {
    let moto = MotoServer::start().await;
    let store = DynamoStore::new(moto.client().await, "no-such-table");
    let result = try_page(&store, 5, None).await;
    let Err(error @ StoreError::Internal { .. }) = result else {
        panic!("{result:?}");
    };
    // The SDK's error is kept as the source: the log line names what DynamoDB said.
    assert!(std::error::Error::source(&error).is_some());
    assert!(
        error.detail().contains("ResourceNotFoundException"),
        "{}",
        error.detail()
    );
}

#[tokio::test]
async fn memory_store_can_start_with_packs() {
    let store = MemoryStore::with_packs(&[
        active("a", 1),
        with_status(active("b", 1), PackStatus::Draft),
    ]);
    assert_eq!(ids(&page(&store, 10, None).await.packs), ["a"]);
    assert!(
        store
            .get_pack(&testkit::ids::pack("b"))
            .await
            .unwrap()
            .is_some()
    );
}

#[tokio::test]
async fn unreadable_pack_items_are_skipped_and_the_rest_listed_whole() {
    use aws_sdk_dynamodb::types::AttributeValue;
    use store::dynamo::pack_item;
    use store::schema::{PACK_DOC, PACK_REMAINING};

    let moto = MotoServer::start().await;
    let store = moto.new_table().await;
    let good = [active("good-1", 10), active("good-2", 50)];
    save_all(&store, &good).await;
    type Corruption = fn(&mut HashMap<String, AttributeValue>);
    let corruptions: [(&str, Corruption); 6] = [
        ("not-json", |item| {
            item.insert(PACK_DOC.into(), AttributeValue::S("{\"id\":".into()));
        }),
        ("array", |item| {
            item.insert(PACK_DOC.into(), AttributeValue::S("[1]".into()));
        }),
        ("remaining-inside", |item| {
            item.insert(
                PACK_DOC.into(),
                AttributeValue::S("{\"id\":\"x\",\"remaining\":1}".into()),
            );
        }),
        ("no-doc", |item| {
            item.remove(PACK_DOC);
        }),
        ("doc-a-number", |item| {
            item.insert(PACK_DOC.into(), AttributeValue::N("1".into()));
        }),
        ("negative-remaining", |item| {
            item.insert(PACK_REMAINING.into(), AttributeValue::N("-1".into()));
        }),
    ];
    for (index, (id, corrupt)) in corruptions.into_iter().enumerate() {
        let pack = active(id, 20 + index as i64);
        let mut item = pack_item(&testkit::ids::pack(id), &pack, 1);
        corrupt(&mut item);
        store
            .client()
            .put_item()
            .table_name(store.table())
            .set_item(Some(item))
            .send()
            .await
            .unwrap();
    }
    let listed = page(&store, 50, None).await;
    assert_eq!(whole(&listed.packs), as_listed(good.clone()));
    // Pages of one, around the corrupt items, still walk to the end.
    let (mut seen, mut after) = (Vec::new(), None);
    for _ in 0..20 {
        let result = page(&store, 1, after).await;
        seen.extend(ids(&result.packs));
        after = result.next;
        if after.is_none() {
            break;
        }
    }
    assert_eq!(
        (seen, after),
        (vec!["good-1".to_owned(), "good-2".to_owned()], None)
    );
    assert!(
        store
            .get_pack(&testkit::ids::pack("not-json"))
            .await
            .is_err()
    );
}

/// Every item a flow writes (pack, shares, draw inputs, Cash and its credit, the start's count,
/// unpaid holds and purchase, the debit, a link) carries the schema version of its record, so
/// that a later release can tell which format it reads.
#[tokio::test]
async fn every_item_written_carries_its_schema_version() {
    use domain::cash::{Credit, Money};
    use store::cash::CreditCash;
    use store::purchases::{CompletePurchase, OpenPurchase};
    let moto = MotoServer::start().await;
    let store = moto.new_table().await;
    let pack = active("versioned", 60);
    testkit::packs::save(&store, &pack).await;
    let credit = Credit {
        user_id: testkit::ids::user("fan"),
        amount: Money {
            amount: 100_000,
            currency: pack.price.currency.clone(),
        },
        reference: "versioned-credit".into(),
    };
    store.credit_cash(&credit, Timestamp::now()).await.unwrap();
    let purchase = testkit::purchases::reserve(&store, "fan", "versioned", "key-1", 600).await;
    let (user, pack_id) = (testkit::ids::user("fan"), testkit::ids::pack("versioned"));
    store
        .complete_purchase(&user, &pack_id, &purchase.id, Timestamp::now())
        .await
        .unwrap();
    store
        .open_purchase(&user, &pack_id, &purchase.id, Timestamp::now())
        .await
        .unwrap();
    testkit::wallets::link(
        &store,
        &user,
        r#"{"address":"0xabc"}"#,
        Timestamp::now(),
        None,
    )
    .await
    .unwrap();
    let items = client_for(&moto.endpoint)
        .await
        .scan()
        .table_name(store.table())
        .send()
        .await
        .unwrap()
        .items
        .unwrap_or_default();
    let entities: Vec<String> = items
        .iter()
        .map(|item| {
            let entity = item
                .get("entity")
                .and_then(|e| e.as_s().ok())
                .cloned()
                .unwrap_or_default();
            assert_eq!(
                item.get("schemaVersion").and_then(|v| v.as_n().ok()),
                Some(&"1".to_owned()),
                "{entity} {:?} has no schemaVersion",
                item.get("SK")
            );
            entity
        })
        .collect();
    for entity in [
        "pack", "supply", "draw", "cash", "credit", "buys", "purchase", "debit", "link",
    ] {
        assert!(
            entities.iter().any(|e| e == entity),
            "no {entity} item in {entities:?}"
        );
    }
}
