//! A fan's own changes and a line's draw write their events, on both stores (DynamoStore on moto
//! through a one-request-at-a-time proxy, and MemoryStore): a join, a draw, a profile patch, a
//! locker room put and a wallet's removal each write exactly their event, with its data; a
//! repeat writes none, nor does a refused change; changes of one fan racing number their events
//! 1..n with no gap, one per change. (Admissions: `queue_keeper_contract`; links:
//! `events_contract`.)

use std::sync::Arc;

use domain::locker_room::LockerRoomBody;
use domain::profile::patch::{ProfilePatch, ProfilePatchBody};
use domain::queue::entry::QueueEntry;
use domain::timestamp::Timestamp;
use store::Store;
use store::profile::PatchProfileError;
use store::purchases::SeedPurchases;
use store::queue::Joined;
use store::wallets::Removal;
use testkit::event_log::{distinct, of_fan, of_pack, types};
use testkit::ids::{pack, user};
use testkit::mine::purchase;
use testkit::packs::at;
use testkit::waiting_room::{beacon, close_and_draw, line, queued_pack, signer};
use testkit::wallets::link;

use crate::locker_room_contract::body;

testkit::store_contract!(
    arc:
    a_join_writes_queue_joined_and_a_repeat_none,
    racing_joins_of_one_fan_write_one_event_and_of_many_lines_one_each,
    racing_keepers_draw_a_line_and_write_its_queue_drawn_once,
    a_patch_writes_the_fields_it_changed_and_a_repeat_or_refusal_none,
    racing_patches_of_one_fan_write_one_event_per_change,
    a_locker_room_put_writes_what_it_shows_and_a_repeat_or_refusal_none,
    racing_locker_room_puts_write_one_event_per_change,
    a_removal_writes_wallet_removed_and_a_removal_of_no_wallet_none,
);

async fn a_join_writes_queue_joined_and_a_repeat_none(store: Arc<impl Store>) {
    let (fan, drop) = (user("fan"), pack("drop"));
    let joined_at = at(-5);
    let entry = QueueEntry::new(drop.clone(), fan.clone(), joined_at, &signer());
    assert!(matches!(
        store.join_queue(&entry).await.unwrap(),
        Joined::New(_)
    ));
    let again = QueueEntry::new(drop.clone(), fan.clone(), at(-1), &signer());
    assert!(matches!(
        store.join_queue(&again).await.unwrap(),
        Joined::Replayed(_)
    ));
    let events = of_fan(&*store, &fan).await;
    assert_eq!(types(&events), ["queue.joined"], "the repeat wrote none");
    assert_eq!(events[0]["data"]["packId"], "drop");
    assert_eq!(events[0]["data"]["entryId"], entry.entry_id.as_str());
    assert_eq!(events[0]["occurredAt"], joined_at.rfc3339_millis());
}

async fn racing_joins_of_one_fan_write_one_event_and_of_many_lines_one_each(
    store: Arc<impl Store + 'static>,
) {
    let fan = user("fan");
    // Eight joins of one line: one entry, one event.
    let joined = testkit::at_once(8, |_| {
        let (store, fan) = (store.clone(), fan.clone());
        async move {
            let entry = QueueEntry::new(pack("drop"), fan, Timestamp::now(), &signer());
            matches!(store.join_queue(&entry).await.unwrap(), Joined::New(_))
        }
    })
    .await;
    assert_eq!(joined.iter().filter(|new| **new).count(), 1);
    assert_eq!(of_fan(&*store, &fan).await.len(), 1);
    // Eight lines at once: eight events, numbered 2..=9 with no gap (`of_fan` checks).
    testkit::at_once(8, |n| {
        let (store, fan) = (store.clone(), fan.clone());
        async move {
            let entry =
                QueueEntry::new(pack(&format!("line-{n}")), fan, Timestamp::now(), &signer());
            store.join_queue(&entry).await.unwrap();
        }
    })
    .await;
    let events = of_fan(&*store, &fan).await;
    assert_eq!(events.len(), 9);
    assert_eq!(distinct(&events, "packId"), 9, "one event per join");
}

async fn racing_keepers_draw_a_line_and_write_its_queue_drawn_once(
    store: Arc<impl Store + 'static>,
) {
    let (_stub, beacon) = beacon().await;
    let pack_id = line(&*store, &queued_pack("drawn", 5, 1), 3).await;
    let beacon = Arc::new(beacon);
    testkit::at_once(2, |_| {
        let (store, beacon) = (store.clone(), beacon.clone());
        async move { close_and_draw(&*store, &beacon).await }
    })
    .await;
    close_and_draw(&*store, &beacon).await;
    let events = of_pack(&*store, &pack_id).await;
    assert_eq!(types(&events), ["queue.drawn"]);
    assert_eq!(events[0]["data"]["packId"], "drawn");
    assert_eq!(events[0]["data"]["entrants"], 3);
}

fn patch(json: &str) -> ProfilePatch {
    serde_json::from_str::<ProfilePatchBody>(json)
        .unwrap()
        .check()
        .unwrap()
}

async fn patched(store: &impl Store, fan: &str, json: &str) -> Result<(), PatchProfileError> {
    store
        .patch_profile(&user(fan), None, &patch(json), Timestamp::now())
        .await
        .map(drop)
}

async fn a_patch_writes_the_fields_it_changed_and_a_repeat_or_refusal_none(store: Arc<impl Store>) {
    let fan = user("fan");
    patched(
        &*store,
        "fan",
        r#"{"displayName":"Hollow","avatarUrl":null}"#,
    )
    .await
    .unwrap();
    let events = of_fan(&*store, &fan).await;
    assert_eq!(types(&events), ["profile.updated"]);
    assert_eq!(
        events[0]["data"],
        serde_json::json!({"fields": ["displayName"]}),
        "the avatar was null and stays null: not changed"
    );
    // The same patch again changes nothing.
    patched(&*store, "fan", r#"{"displayName":"Hollow"}"#)
        .await
        .unwrap();
    // Another fan's name is refused: nothing written.
    patched(&*store, "other", r#"{"displayName":"Taken"}"#)
        .await
        .unwrap();
    assert_eq!(
        patched(
            &*store,
            "fan",
            r#"{"displayName":"taken","avatarUrl":"https://a.example/x.png"}"#
        )
        .await,
        Err(PatchProfileError::NameTaken)
    );
    assert_eq!(of_fan(&*store, &fan).await.len(), 1);
    patched(
        &*store,
        "fan",
        r#"{"displayName":null,"avatarUrl":"https://a.example/x.png"}"#,
    )
    .await
    .unwrap();
    let events = of_fan(&*store, &fan).await;
    assert_eq!(
        events[1]["data"]["fields"],
        serde_json::json!(["displayName", "avatarUrl"])
    );
    // A first patch that changes nothing creates the profile, with no event.
    patched(&*store, "quiet", r#"{"avatarUrl":null}"#)
        .await
        .unwrap();
    assert!(of_fan(&*store, &user("quiet")).await.is_empty());
}

async fn racing_patches_of_one_fan_write_one_event_per_change(store: Arc<impl Store + 'static>) {
    let fan = user("fan");
    // Eight different avatars at once: each patch is a change of the one before it.
    testkit::at_once(8, |n| {
        let store = store.clone();
        async move {
            let json = format!(r#"{{"avatarUrl":"https://a.example/{n}.png"}}"#);
            patched(&*store, "fan", &json).await.unwrap();
        }
    })
    .await;
    // The same patch eight times at once: one change.
    testkit::at_once(8, |_| {
        let store = store.clone();
        async move {
            patched(&*store, "fan", r#"{"displayName":"Racer"}"#)
                .await
                .unwrap();
        }
    })
    .await;
    let events = of_fan(&*store, &fan).await;
    assert_eq!(events.len(), 9, "{events:?}");
    let names = events
        .iter()
        .filter(|event| event["data"]["fields"] == serde_json::json!(["displayName"]))
        .count();
    assert_eq!(names, 1);
}

async fn put(store: &impl Store, room: &LockerRoomBody) -> bool {
    store
        .put_locker_room(&user("fan"), room, Timestamp::now())
        .await
        .is_ok()
}

/// Opened purchases `fan-0000` to `-0002`, seeded.
async fn pulls(store: &(impl Store + SeedPurchases)) {
    let now = Timestamp::now();
    let seeded: Vec<_> = (0..3).map(|n| purchase("fan", n, 0, true, now)).collect();
    store.seed_purchases(&seeded).await.unwrap();
}

async fn a_locker_room_put_writes_what_it_shows_and_a_repeat_or_refusal_none(
    store: Arc<impl Store + SeedPurchases>,
) {
    pulls(&*store).await;
    let fan = user("fan");
    // Nothing shown over nothing: no change.
    assert!(put(&*store, &body(None, &[])).await);
    assert!(of_fan(&*store, &fan).await.is_empty());
    let room = body(Some("Pulls"), &[("fan-0001", 0), ("fan-0000", 2)]);
    assert!(put(&*store, &room).await);
    assert!(put(&*store, &room).await, "a repeat answers");
    // An item not the fan's is refused: nothing written.
    assert!(!put(&*store, &body(None, &[("other-0001", 0)])).await);
    let events = of_fan(&*store, &fan).await;
    assert_eq!(types(&events), ["locker_room.updated"]);
    assert_eq!(events[0]["data"], serde_json::json!({"shown": 2}));
    // The same items under another title: a change.
    assert!(put(&*store, &body(None, &[("fan-0001", 0), ("fan-0000", 2)])).await);
    assert_eq!(of_fan(&*store, &fan).await[1]["data"]["shown"], 2);
}

async fn racing_locker_room_puts_write_one_event_per_change(
    store: Arc<impl Store + SeedPurchases + 'static>,
) {
    pulls(&*store).await;
    // Eight puts of one room at once: one change; then eight of eight other rooms: eight.
    for distinct in [false, true] {
        testkit::at_once(8, |n| {
            let store = store.clone();
            async move {
                let title = if distinct {
                    format!("Room {n}")
                } else {
                    "Room".to_owned()
                };
                assert!(put(&*store, &body(Some(&title), &[("fan-0002", 1)])).await);
            }
        })
        .await;
    }
    // `of_fan` checks 1..=9 with no gap.
    assert_eq!(of_fan(&*store, &user("fan")).await.len(), 9);
}

fn identity(n: u32) -> String {
    format!(r#"{{"address":"0x{n:040x}","chainId":1}}"#)
}

async fn a_removal_writes_wallet_removed_and_a_removal_of_no_wallet_none(store: Arc<impl Store>) {
    let fan = user("fan");
    link(&*store, &fan, &identity(1), at(-20), None)
        .await
        .unwrap();
    let wallet_id = store.list_wallets(&fan).await.unwrap()[0].id.clone();
    let removed_at = at(-10);
    assert_eq!(
        store.delete_wallet(&fan, &wallet_id, removed_at).await,
        Ok(Removal::Removed)
    );
    assert_eq!(
        store.delete_wallet(&fan, &wallet_id, at(-5)).await,
        Ok(Removal::NotHeld)
    );
    let events = of_fan(&*store, &fan).await;
    assert_eq!(types(&events), ["wallet.linked", "wallet.removed"]);
    assert_eq!(
        events[1]["data"],
        serde_json::json!({"walletId": wallet_id.as_str()})
    );
    assert_eq!(events[1]["occurredAt"], removed_at.rfc3339_millis());
}
