//! The waiting room's store operations, run against both stores (DynamoStore on moto_server
//! through the one-request-at-a-time proxy, MemoryStore): seeding a queued pack writes its state
//! and a commitment that later seeding never changes; one entry per fan, whatever races; the
//! entrants are not there before the close.

use std::collections::HashSet;
use std::sync::Arc;

use domain::ids::UserId;
use domain::packs::Pack;
use domain::queue::entry::{QueueEntry, ReceiptSigner};
use domain::queue::state::StoredStatus;
use domain::timestamp::Timestamp;
use store::Store;
use store::packs::seed;
use store::queue::Joined;
use testkit::ids;
use testkit::packs::{active, queued};

testkit::store_contract!(
    arc:
    a_queued_pack_is_seeded_with_a_commitment_that_reseeding_keeps,
    a_fan_joins_once_and_joining_again_gives_their_entry_back,
    twenty_racing_joins_of_one_fan_make_one_entry_and_many_fans_many,
    no_entrants_before_the_close,
);

fn signer() -> ReceiptSigner {
    ReceiptSigner::from_seed(&[7; 32]).unwrap()
}

fn entry(pack: &str, fan: &UserId) -> QueueEntry {
    QueueEntry::new(ids::pack(pack), fan.clone(), Timestamp::now(), &signer())
}

async fn seeded(store: &impl Store, pack: &Pack) {
    seed(store, pack, Timestamp::now()).await.unwrap();
}

async fn a_queued_pack_is_seeded_with_a_commitment_that_reseeding_keeps(store: Arc<impl Store>) {
    let pack = queued("drop", 3600, 7200);
    seeded(&*store, &pack).await;
    let terms = pack.queue.unwrap();
    let view = store.get_queue(&ids::pack("drop")).await.unwrap().unwrap();
    assert_eq!(view.terms, terms);
    assert_eq!(view.state.status, StoredStatus::Open);
    assert_eq!(view.state.beacon_round, terms.beacon_round());
    assert_eq!(view.state.closes_at, terms.closes_at);
    assert_eq!(
        (view.state.entrants, view.state.admitted_through),
        (None, 0)
    );
    assert_eq!((view.total_supply, view.remaining), (100, 100));

    // Before the freeze, new terms move the close and the round, never the seed's hash.
    let mut moved = pack.clone();
    let later = queued("drop", 3600, 9000);
    moved.sale_starts_at = later.sale_starts_at;
    moved.queue = later.queue;
    seeded(&*store, &moved).await;
    let again = store.get_queue(&ids::pack("drop")).await.unwrap().unwrap();
    assert_eq!(
        again.state.seed_hash, view.state.seed_hash,
        "committed once"
    );
    assert_eq!(
        again.state.beacon_round,
        later.queue.unwrap().beacon_round()
    );
    assert_ne!(again.state.beacon_round, view.state.beacon_round);

    // A pack without a queue has none; taken off before the freeze, the line goes.
    seeded(&*store, &active("plain", 60)).await;
    assert_eq!(store.get_queue(&ids::pack("plain")).await.unwrap(), None);
    assert_eq!(store.get_queue(&ids::pack("nope")).await.unwrap(), None);
    seeded(
        &*store,
        &Pack {
            queue: None,
            ..moved
        },
    )
    .await;
    assert_eq!(store.get_queue(&ids::pack("drop")).await.unwrap(), None);

    // A second queued pack commits to a seed of its own.
    seeded(&*store, &queued("other", 3600, 7200)).await;
    let other = store.get_queue(&ids::pack("other")).await.unwrap().unwrap();
    assert_ne!(other.state.seed_hash, view.state.seed_hash);
}

async fn a_fan_joins_once_and_joining_again_gives_their_entry_back(store: Arc<impl Store>) {
    seeded(&*store, &queued("drop", -60, 3600)).await;
    let fan = ids::user("auth0|fan");
    let first = entry("drop", &fan);
    assert_eq!(
        store.join_queue(&first).await.unwrap(),
        Joined::New(first.clone())
    );
    let retry = entry("drop", &fan);
    assert_ne!(retry.entry_id, first.entry_id);
    assert_eq!(
        store.join_queue(&retry).await.unwrap(),
        Joined::Replayed(first.clone()),
        "the first entry stands"
    );
    assert_eq!(
        store.queue_entry(&ids::pack("drop"), &fan).await.unwrap(),
        Some(first.clone())
    );
    assert_eq!(
        store
            .queue_entry(&ids::pack("drop"), &ids::user("stranger"))
            .await
            .unwrap(),
        None
    );
    // The same fan in another pack's line is another entry.
    seeded(&*store, &queued("other", -60, 3600)).await;
    let elsewhere = entry("other", &fan);
    assert_eq!(
        store.join_queue(&elsewhere).await.unwrap(),
        Joined::New(elsewhere)
    );
}

async fn twenty_racing_joins_of_one_fan_make_one_entry_and_many_fans_many(
    store: Arc<impl Store + 'static>,
) {
    seeded(&*store, &queued("drop", -60, 3600)).await;
    let fan = ids::user("auth0|racer");
    let racers: Vec<_> = (0..20)
        .map(|_| {
            let (store, entry) = (store.clone(), entry("drop", &fan));
            tokio::spawn(async move { store.join_queue(&entry).await.unwrap() })
        })
        .collect();
    let mut new = Vec::new();
    let mut replayed = Vec::new();
    for racer in racers {
        match racer.await.unwrap() {
            Joined::New(entry) => new.push(entry),
            Joined::Replayed(entry) => replayed.push(entry),
        }
    }
    assert_eq!(new.len(), 1, "exactly one join wrote: {new:?}");
    assert_eq!(replayed.len(), 19);
    assert!(replayed.iter().all(|entry| *entry == new[0]));
    assert_eq!(
        store.queue_entry(&ids::pack("drop"), &fan).await.unwrap(),
        Some(new[0].clone())
    );

    let fans: Vec<_> = (0..20)
        .map(|n| {
            let (store, entry) = (
                store.clone(),
                entry("drop", &ids::user(&format!("fan-{n}"))),
            );
            tokio::spawn(async move { store.join_queue(&entry).await.unwrap() })
        })
        .collect();
    let mut entry_ids = HashSet::new();
    for fan in fans {
        let Joined::New(entry) = fan.await.unwrap() else {
            panic!("a fan's first join is new");
        };
        entry_ids.insert(entry.entry_id);
    }
    assert_eq!(entry_ids.len(), 20, "distinct entries");
}

async fn no_entrants_before_the_close(store: Arc<impl Store>) {
    seeded(&*store, &queued("drop", -60, 3600)).await;
    store
        .join_queue(&entry("drop", &ids::user("fan")))
        .await
        .unwrap();
    assert_eq!(
        store.entrant_page(&ids::pack("drop"), 0).await.unwrap(),
        None
    );
    assert_eq!(
        store.entrants_index(&ids::pack("drop")).await.unwrap(),
        None,
        "no index before the close"
    );
}
