//! The queue keeper stopped between the writes of one step, on DynamoDB (moto behind the
//! one-request-at-a-time proxy, which fails the step's later write as a crash would leave it):
//! the next pass completes the step, no fan is admitted twice and no unit is sold twice. The
//! in-memory store takes each step under one lock, so it has no such window.

use api::handlers::queue_keeper::{KeeperRun, admit, pass};
use domain::queue::commit::order;
use domain::queue::entry::EntryStatus;
use domain::queue::state::StoredStatus;
use domain::timestamp::Timestamp;
use store::DynamoStore;
use store::purchases::{CompletePurchase, StartPurchase, Started};
use store::queue::GetQueue;
use store::queue_keeper::{AdmitQueue, PendingQueues};
use testkit::fault_proxy::Fault;
use testkit::waiting_room::{
    beacon, by_position, close_and_draw, line, on_time, queued_pack, start,
};

/// What a keeper that stopped mid-step leaves: its request refused as DynamoDB refuses one it
/// never applies (not retried by the SDK), so the step's earlier writes stand and its later
/// ones never happen.
const STOPPED: Fault = Fault::Error(400, "ValidationException");

async fn status(store: &DynamoStore, pack: &str) -> StoredStatus {
    let view = store.get_queue(&testkit::ids::pack(pack)).await.unwrap();
    view.expect("a queued pack").state.status
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_keeper_stopped_after_finishing_marks_the_waiting_fans_sold_out_on_its_next_pass() {
    let (proxy, store) = testkit::moto::atomic_table().await;
    let (_stub, beacon) = beacon().await;
    let pack_id = line(&store, &queued_pack("stopped-finish", 2, 1), 6).await;
    close_and_draw(&store, &beacon).await;
    let now = Timestamp::now();
    assert_eq!(admit(&store, &pack_id, now).await.unwrap().admitted, 2);
    // The two admitted fans buy and pay: every unit is paid for, the sale is over.
    for entry in &by_position(&store, &pack_id, 6).await[..2] {
        let Ok(Started::Created(purchase)) = store
            .start_purchase(&start(&entry.user_id, &pack_id, "k", now))
            .await
        else {
            panic!("an admitted fan starts");
        };
        let fan = entry.user_id.as_str();
        testkit::purchases::credit(&store, fan, 10_000, "USD", &format!("grant-{fan}")).await;
        store
            .complete_purchase(&entry.user_id, &pack_id, &purchase.id, now)
            .await
            .unwrap();
    }

    // The pass that finishes the line writes the state, then stops before the fans still
    // queued are marked.
    proxy.set_for_operation(STOPPED, "BatchWriteItem", 1);
    assert!(admit(&store, &pack_id, now).await.is_err());
    assert_eq!(
        status(&store, "stopped-finish").await,
        StoredStatus::Finished
    );
    let waiting = by_position(&store, &pack_id, 6).await;
    assert!(waiting[2..].iter().all(|e| e.status == EntryStatus::Queued));

    // The next pass finds the line still pending and marks them.
    let mut run = KeeperRun::default();
    pass(&store, &beacon, now, &mut run).await.unwrap();
    assert_eq!((run.sold_out, run.admitted), (4, 0), "{run:?}");
    let entries = by_position(&store, &pack_id, 6).await;
    let statuses: Vec<_> = entries.iter().map(|e| (e.status, e.bought)).collect();
    assert_eq!(
        statuses,
        [
            (EntryStatus::Done, 1),
            (EntryStatus::Done, 1),
            (EntryStatus::SoldOut, 0),
            (EntryStatus::SoldOut, 0),
            (EntryStatus::SoldOut, 0),
            (EntryStatus::SoldOut, 0),
        ]
    );
    assert!(store.pending_queues().await.unwrap().is_empty());
    let view = store.get_queue(&pack_id).await.unwrap().unwrap();
    assert_eq!(
        (view.state.bought, view.state.admitted_through),
        (2, 2),
        "each fan admitted once, each unit sold once"
    );
    assert_eq!(testkit::packs::remaining(&store, "stopped-finish").await, 0);
    // And a pass after that has nothing left to do.
    let mut again = KeeperRun::default();
    pass(&store, &beacon, now, &mut again).await.unwrap();
    assert_eq!((again.sold_out, again.finished, again.admitted), (0, 0, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_draw_stopped_after_its_first_writes_is_drawn_whole_once_its_lease_runs_out() {
    let (proxy, store) = testkit::moto::atomic_table().await;
    let (_stub, beacon) = beacon().await;
    // 60 entries: three BatchWriteItems of positions, one of them refused.
    let pack_id = line(&store, &queued_pack("stopped-draw", 5, 1), 60).await;
    let now = Timestamp::now();
    let mut run = KeeperRun::default();
    pass(&store, &beacon, on_time(), &mut run).await.unwrap();
    assert_eq!(run.closed, 1);
    proxy.set_for_operation(STOPPED, "BatchWriteItem", 1);
    assert!(pass(&store, &beacon, now, &mut run).await.is_err());
    assert_eq!(status(&store, "stopped-draw").await, StoredStatus::Closed);

    // Within its lease no other pass draws; after it, one draws the line whole.
    pass(&store, &beacon, now.plus_seconds(60).unwrap(), &mut run)
        .await
        .unwrap();
    assert_eq!(run.drawn, 0, "the stopped draw's lease still holds");
    let later = now.plus_seconds(91).unwrap();
    pass(&store, &beacon, later, &mut run).await.unwrap();
    assert_eq!(run.drawn, 1);
    let view = store.get_queue(&pack_id).await.unwrap().unwrap();
    assert_eq!(view.state.status, StoredStatus::Drawn);
    let entries = by_position(&store, &pack_id, 60).await;
    let drawn = order(
        &view.state.seed.unwrap(),
        &view.state.beacon.unwrap().randomness,
        entries
            .iter()
            .map(|e| (e.entry_id.clone(), e.user_id.clone()))
            .collect(),
    );
    for (at, (entry, expected)) in (1..).zip(entries.iter().zip(&drawn)) {
        assert_eq!(entry.position, Some(at));
        assert_eq!(entry.entry_id, expected.entry_id);
        assert_eq!(entry.status, EntryStatus::Queued);
    }
    // Admission then lets in the units' worth, once each.
    assert_eq!(admit(&store, &pack_id, later).await.unwrap().admitted, 5);
    let admission = store.admission_view(&pack_id).await.unwrap().unwrap();
    assert_eq!(admission.state.admitted_through, 5);
}

/// Writes applied whose answers are lost (DynamoDB's 500 after the write): the SDK retries each,
/// and its condition then fails (the claim's `admittedThrough`, an admission's `queued`). Every
/// fan claimed is still admitted exactly once, by this pass or the next, and the report's
/// `admitted` (`admittedThrough`) counts each once: no counter could count one twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn admissions_whose_answers_were_lost_admit_each_fan_once() {
    let (proxy, store) = testkit::moto::atomic_table().await;
    let (_stub, beacon) = beacon().await;
    let pack_id = line(&store, &queued_pack("lost-answer", 3, 1), 5).await;
    close_and_draw(&store, &beacon).await;
    // The claim's answer and the first admission's.
    proxy.set_for_operation(
        Fault::ErrorAfterForwarding(500, "InternalServerError"),
        "UpdateItem",
        2,
    );
    let mut admitted = 0;
    for _ in 0..3 {
        admitted += admit(&store, &pack_id, Timestamp::now())
            .await
            .unwrap()
            .admitted;
    }
    assert!(admitted <= 3, "{admitted}");
    let view = store.get_queue(&pack_id).await.unwrap().unwrap();
    assert_eq!(view.state.admitted_through, 3);
    let statuses: Vec<_> = by_position(&store, &pack_id, 5)
        .await
        .iter()
        .map(|e| e.status)
        .collect();
    use EntryStatus::{Admitted, Queued};
    assert_eq!(statuses, [Admitted, Admitted, Admitted, Queued, Queued]);
}
