//! Events on both stores (DynamoStore on moto through a one-request-at-a-time proxy, and
//! MemoryStore): a change writes its events in its own write, each its subject's next with no
//! gap however changes race; a refused change writes none; the feeds read them back by subject
//! and by time. Each aggregate's own events are tested beside its other contracts.

use std::sync::Arc;

use domain::events::{EventId, Subject};
use domain::timestamp::Timestamp;
use domain::wallets::WalletWrite;
use store::Store;
use store::events::EventCursor;
use testkit::event_log::{distinct, of_fan, types};
use testkit::ids::user;
use testkit::packs::at;
use testkit::wallets::link;

testkit::store_contract!(
    arc:
    a_link_writes_its_wallet_linked_event_and_a_relink_the_next,
    concurrent_changes_of_one_fan_number_their_events_without_gap,
    a_refused_change_writes_no_event,
    the_feed_by_time_pages_every_event_of_an_hour_once,
    an_event_is_read_by_its_id,
);

fn identity(n: u32) -> String {
    format!(r#"{{"address":"0x{n:040x}","chainId":1}}"#)
}

async fn a_link_writes_its_wallet_linked_event_and_a_relink_the_next(store: Arc<impl Store>) {
    let (fan, linked) = (user("fan"), at(-20));
    link(&*store, &fan, &identity(1), linked, None)
        .await
        .unwrap();
    link(&*store, &fan, &identity(1), at(-10), None)
        .await
        .unwrap();
    let events = of_fan(&*store, &fan).await;
    assert_eq!(types(&events), ["wallet.linked", "wallet.linked"]);
    assert_eq!(events[0]["data"]["added"], true);
    assert_eq!(events[1]["data"]["added"], false);
    assert_eq!(events[0]["data"]["provider"], "web3");
    assert_eq!(events[0]["occurredAt"], linked.rfc3339_millis());
    // Another fan's change is theirs alone.
    assert!(of_fan(&*store, &user("other")).await.is_empty());
}

async fn concurrent_changes_of_one_fan_number_their_events_without_gap(
    store: Arc<impl Store + 'static>,
) {
    let fan = user("fan");
    let links = (0..8).map(|n| {
        let (store, fan) = (store.clone(), fan.clone());
        tokio::spawn(async move { link(&*store, &fan, &identity(n), at(-5), None).await })
    });
    for outcome in futures_util::future::join_all(links).await {
        assert_eq!(outcome.unwrap(), Ok(WalletWrite::Add));
    }
    // `of_fan` checks 1..=8 with no gap and no twin.
    let events = of_fan(&*store, &fan).await;
    assert_eq!(events.len(), 8);
    assert_eq!(distinct(&events, "walletId"), 8, "one event per link");
}

async fn a_refused_change_writes_no_event(store: Arc<impl Store>) {
    let fan = user("fan");
    let cap = domain::wallets::MAX_WALLETS_PER_FAN;
    for n in 0..cap {
        link(&*store, &fan, &identity(n), at(-5), None)
            .await
            .unwrap();
    }
    assert!(
        link(&*store, &fan, &identity(cap), at(-4), None)
            .await
            .is_err()
    );
    assert_eq!(
        of_fan(&*store, &fan).await.len(),
        usize::try_from(cap).unwrap()
    );
}

async fn the_feed_by_time_pages_every_event_of_an_hour_once(store: Arc<impl Store>) {
    let now = Timestamp::now();
    let hour_start = Timestamp::from_unix_nanos(
        i128::from(now.unix_millis().div_euclid(3_600_000)) * 3_600_000_000_000,
    )
    .unwrap();
    for (n, name) in ["a", "b", "c"].into_iter().enumerate() {
        link(
            &*store,
            &user(name),
            &identity(u32::try_from(n).unwrap()),
            now,
            None,
        )
        .await
        .unwrap();
    }
    let mut cursor = EventCursor::Since(hour_start);
    let mut seen: Vec<EventId> = Vec::new();
    for _ in 0..4 {
        let page = store.events_from(&cursor, 2, now).await.unwrap();
        assert!(page.events.len() <= 2);
        seen.extend(page.events.iter().map(|event| event.id.clone()));
        cursor = page.next;
    }
    let mut sorted = seen.clone();
    sorted.sort();
    assert_eq!(seen, sorted, "in id order");
    assert_eq!(seen.len(), 3, "each event once: {seen:?}");
    // The hour is not over: the cursor stays after the last event, not in the next hour.
    assert_eq!(cursor, EventCursor::After(seen[2].clone()));
}

async fn an_event_is_read_by_its_id(store: Arc<impl Store>) {
    let fan = user("fan");
    link(&*store, &fan, &identity(1), Timestamp::now(), None)
        .await
        .unwrap();
    let listed = store
        .subject_events(&Subject::fan(&fan), 0, 10)
        .await
        .unwrap();
    let read = store.get_event(&listed[0].id).await.unwrap();
    assert_eq!(read.as_ref(), Some(&listed[0]));
    let unknown = EventId::new(Timestamp::now());
    assert_eq!(store.get_event(&unknown).await.unwrap(), None);
}
