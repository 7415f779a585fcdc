//! The queue keeper's contract (issue 29), on both stores (DynamoDB on moto behind the
//! one-request-at-a-time proxy, and the in-memory store): a line closes, draws with a real
//! quicknet round served by testkit's drand stub, and admits by position; a start on the queued
//! pack needs an admitted entry with its window open; and admission's three guarantees: never
//! more live admitted fans (not yet bought) than units left, never a unit unsold while a fan
//! waits unadmitted after a pass, every fan admitted at most once (two keepers racing).

use std::sync::Arc;

use api::handlers::queue_keeper::{KeeperRun, admit, pass};
use domain::ids::PackId;
use domain::purchases::StartRefusal;
use domain::queue::admission::{AdmissionRefusal, Allowance, demand};
use domain::queue::commit::order;
use domain::queue::entry::EntryStatus;
use domain::queue::events::Admit;
use domain::queue::state::StoredStatus;
use domain::timestamp::Timestamp;
use store::Store;
use store::purchases::{StartError, Started};
use store::queue_keeper::AdmitQueue;
use testkit::event_log::{of_fan, types};
use testkit::ids;
use testkit::waiting_room::{
    PASS_SECONDS, ROUND, beacon, by_position, close_and_draw, fan, line, queued_pack, start,
};

testkit::store_contract!(
    arc:
    a_line_closes_draws_admits_and_sells_to_admitted_fans_only,
    admission_counts_what_live_fans_may_still_buy,
    a_pass_after_windows_run_out_admits_the_next_fans,
    two_keepers_racing_admit_each_fan_at_most_once,
    racing_buyers_and_keepers_never_exceed_the_units_left,
);

async fn a_line_closes_draws_admits_and_sells_to_admitted_fans_only<S>(store: Arc<S>)
where
    S: Store,
{
    let (stub, beacon) = beacon().await;
    let pack = queued_pack("queued-drop", 5, 1);
    let pack_id = line(&*store, &pack, 12).await;
    let run = close_and_draw(&*store, &beacon).await;
    assert_eq!((run.closed, run.drawn), (1, 1));
    assert!(
        stub.received()
            .iter()
            .any(|path| path.ends_with(&format!("/public/{ROUND}"))),
        "the draw asked the relay for its round"
    );
    let view = store.admission_view(&pack_id).await.unwrap().unwrap();
    let state = view.state;
    assert_eq!(state.status, StoredStatus::Drawn);
    assert_eq!(state.entrants, Some(12));
    let seed = state.seed.expect("revealed");
    let round = testkit::drand::round(ROUND);
    assert_eq!(
        domain::packs::draw::lower_hex(&state.beacon.clone().unwrap().randomness),
        round.randomness
    );
    // Positions are the draw's, recomputed from the public seed and beacon.
    let entries = by_position(&*store, &pack_id, 12).await;
    let expected = order(
        &seed,
        &state.beacon.unwrap().randomness,
        entries
            .iter()
            .map(|e| (e.entry_id.clone(), e.user_id.clone()))
            .collect(),
    );
    for (at, (entry, drawn)) in entries.iter().zip(&expected).enumerate() {
        assert_eq!(entry.position, Some(at as u64 + 1));
        assert_eq!(entry.entry_id, drawn.entry_id);
        assert_eq!(entry.status, EntryStatus::Queued);
    }
    // Before admission: no one may buy.
    let now = Timestamp::now();
    let first = entries[0].user_id.clone();
    let refused = store
        .start_purchase(&start(&first, &pack_id, "k0", now))
        .await;
    assert!(matches!(
        refused,
        Err(StartError::Refused(StartRefusal::NotAdmitted(
            AdmissionRefusal::NotYetAdmitted
        )))
    ));
    // The first pass admits five fans: one unit each.
    let mut run = KeeperRun::default();
    pass(&*store, &beacon, now, &mut run).await.unwrap();
    assert_eq!(run.admitted, 5);
    let entries = by_position(&*store, &pack_id, 12).await;
    assert!(
        entries[..5]
            .iter()
            .all(|e| e.status == EntryStatus::Admitted)
    );
    assert!(entries[5..].iter().all(|e| e.status == EntryStatus::Queued));
    let started = store
        .start_purchase(&start(&first, &pack_id, "k1", now))
        .await;
    assert!(matches!(started, Ok(Started::Created(_))), "{started:?}");
    // At their limit: the limit says so first (their entry is done).
    let again = store
        .start_purchase(&start(&first, &pack_id, "k2", now))
        .await;
    assert!(
        matches!(again, Err(StartError::Refused(StartRefusal::LimitReached))),
        "{again:?}"
    );
    let entry = store.queue_entry(&pack_id, &first).await.unwrap().unwrap();
    assert_eq!((entry.status, entry.bought), (EntryStatus::Done, 1));
    let sixth = entries[5].user_id.clone();
    let waiting = store
        .start_purchase(&start(&sixth, &pack_id, "k3", now))
        .await;
    assert!(matches!(
        waiting,
        Err(StartError::Refused(StartRefusal::NotAdmitted(
            AdmissionRefusal::NotYetAdmitted
        )))
    ));
    let stranger = ids::user("stranger");
    let not_joined = store
        .start_purchase(&start(&stranger, &pack_id, "k4", now))
        .await;
    assert!(matches!(
        not_joined,
        Err(StartError::Refused(StartRefusal::NotAdmitted(
            AdmissionRefusal::NotJoined
        )))
    ));
    // A window that ran out: lapsed, at the start and then by the keeper.
    let late = now.plus_seconds(i64::from(PASS_SECONDS) + 1).unwrap();
    let second = entries[1].user_id.clone();
    let lapsed = store
        .start_purchase(&start(&second, &pack_id, "k5", late))
        .await;
    assert!(matches!(
        lapsed,
        Err(StartError::Refused(StartRefusal::NotAdmitted(
            AdmissionRefusal::Lapsed
        )))
    ));
    let mut run = KeeperRun::default();
    pass(&*store, &beacon, late, &mut run).await.unwrap();
    assert_eq!(
        (run.lapsed, run.admitted),
        (4, 4),
        "four lapsed, four units back in play"
    );
    let view = store.admission_view(&pack_id).await.unwrap().unwrap();
    assert_eq!(view.state.admitted_through, 9);
    assert_eq!(
        (
            view.state.admitted_through,
            view.state.lapsed,
            view.state.bought
        ),
        (9, 4, 1)
    );
}

async fn admission_counts_what_live_fans_may_still_buy<S>(store: Arc<S>)
where
    S: Store,
{
    let (_stub, beacon) = beacon().await;
    let pack = queued_pack("two-each", 4, 2);
    let pack_id = line(&*store, &pack, 10).await;
    close_and_draw(&*store, &beacon).await;
    let now = Timestamp::now();
    let admission = admit(&*store, &pack_id, now).await.unwrap();
    // Two fans of two units each cover the four units.
    assert_eq!(admission.admitted, 2);
    let entries = by_position(&*store, &pack_id, 10).await;
    let first = entries[0].user_id.clone();
    for key in ["a", "b"] {
        let started = store
            .start_purchase(&start(&first, &pack_id, key, now))
            .await;
        assert!(matches!(started, Ok(Started::Created(_))), "{started:?}");
    }
    // The fan not yet bought still has their two units.
    live_within_left(&*store, &pack_id, now).await;
    let admission = admit(&*store, &pack_id, now).await.unwrap();
    // The second fan buys their two: had a third fan been let in for them, that fan would now
    // be admitted with no unit left.
    let second = entries[1].user_id.clone();
    for key in ["c", "d"] {
        let started = store
            .start_purchase(&start(&second, &pack_id, key, now))
            .await;
        assert!(matches!(started, Ok(Started::Created(_))), "{started:?}");
    }
    live_within_left(&*store, &pack_id, now).await;
    assert_eq!(
        admission.admitted, 0,
        "the two units left are the second fan's"
    );
}

/// The guarantee: admitted fans with an open window who have not bought are never more than the
/// units left.
async fn live_within_left<S: AdmitQueue>(store: &S, pack_id: &PackId, now: Timestamp) {
    let view = store.admission_view(pack_id).await.unwrap().unwrap();
    let unbought = view
        .admitted
        .iter()
        .filter(|e| e.status == EntryStatus::Admitted)
        .filter(|e| e.pass_expires_at.is_some_and(|end| end > now))
        .filter(|e| e.bought == 0)
        .count() as u64;
    assert!(
        unbought <= view.left,
        "{unbought} fans admitted and not yet bought for {} units",
        view.left
    );
}

async fn a_pass_after_windows_run_out_admits_the_next_fans<S>(store: Arc<S>)
where
    S: Store,
{
    let (_stub, beacon) = beacon().await;
    let pack = queued_pack("lapses", 3, 1);
    let pack_id = line(&*store, &pack, 10).await;
    close_and_draw(&*store, &beacon).await;
    let now = Timestamp::now();
    assert_eq!(admit(&*store, &pack_id, now).await.unwrap().admitted, 3);
    let late = now.plus_seconds(i64::from(PASS_SECONDS)).unwrap();
    let admission = admit(&*store, &pack_id, late).await.unwrap();
    assert_eq!((admission.lapsed, admission.admitted), (3, 3));
    // After the pass: no unit is left unsold while a fan waits unadmitted.
    let view = store.admission_view(&pack_id).await.unwrap().unwrap();
    let live = view
        .admitted
        .iter()
        .filter(|e| e.status == EntryStatus::Admitted)
        .map(|e| e.bought);
    let waiting = view.state.entrants.unwrap() - view.state.admitted_through;
    assert!(waiting > 0);
    assert!(
        demand(view.allowance, live) >= view.left,
        "units idle while fans wait"
    );
    assert_eq!(view.allowance, Allowance::of(Some(1)));
    // Windows after windows: everyone gets their turn, then the line finishes.
    let mut at = late;
    let mut passes = 0;
    let finished = loop {
        at = at.plus_seconds(i64::from(PASS_SECONDS)).unwrap();
        let admission = admit(&*store, &pack_id, at).await.unwrap();
        passes += 1;
        if admission.finished || passes == 5 {
            break admission.finished;
        }
    };
    assert!(finished && passes == 3, "finished after {passes} passes");
    assert!(store.admission_view(&pack_id).await.unwrap().is_none());
    let entries = by_position(&*store, &pack_id, 10).await;
    assert!(entries.iter().all(|e| e.status == EntryStatus::Lapsed));
}

async fn two_keepers_racing_admit_each_fan_at_most_once<S>(store: Arc<S>)
where
    S: Store + 'static,
{
    let (_stub, beacon) = beacon().await;
    let pack = queued_pack("racing", 6, 1);
    let pack_id = line(&*store, &pack, 20).await;
    close_and_draw(&*store, &beacon).await;
    let now = Timestamp::now();
    let expires = now.plus_seconds(600).unwrap();
    // A keeper claimed six positions and stopped before admitting them: two keepers then find
    // the same six queued fans in their views, and both admit them.
    assert!(store.claim_positions(&pack_id, 0, 6, now).await.unwrap());
    let order = store.ordered(&pack_id, 1, 6).await.unwrap();
    let admitted = testkit::at_once(2, |_| {
        let (store, pack_id, order) = (store.clone(), pack_id.clone(), order.clone());
        async move {
            let mut admitted = 0;
            for (position, entry) in (1..).zip(&order) {
                let admit = Admit {
                    user_id: entry.user_id.clone(),
                    position,
                    at: now,
                    until: expires,
                };
                if store.admit_entry(&pack_id, &admit).await.unwrap() {
                    admitted += 1;
                }
            }
            admitted
        }
    })
    .await;
    assert_eq!(admitted.iter().sum::<u64>(), 6, "{admitted:?}");
    // Whole passes racing too.
    let passes = testkit::at_once(4, |_| {
        let (store, pack_id) = (store.clone(), pack_id.clone());
        async move { admit(&*store, &pack_id, now).await.unwrap() }
    })
    .await;
    assert_eq!(passes.iter().map(|p| p.admitted).sum::<u64>(), 0);
    let view = store.admission_view(&pack_id).await.unwrap().unwrap();
    let admitted_entries = by_position(&*store, &pack_id, 20)
        .await
        .iter()
        .filter(|e| e.status == EntryStatus::Admitted)
        .count() as u64;
    assert_eq!(
        view.state.admitted_through, admitted_entries,
        "every position claimed is admitted, once"
    );
    assert_eq!(admitted_entries, 6);
    // Each admission wrote its fan's one `queue.admitted`, however many keepers raced for it.
    for (position, entry) in (1..).zip(&order) {
        let events = of_fan(&*store, &entry.user_id).await;
        assert_eq!(types(&events), ["queue.joined", "queue.admitted"]);
        assert_eq!(events[1]["data"]["position"], position);
        assert_eq!(events[1]["data"]["until"], expires.to_string());
    }
}

async fn racing_buyers_and_keepers_never_exceed_the_units_left<S>(store: Arc<S>)
where
    S: Store + 'static,
{
    let (_stub, beacon) = beacon().await;
    let pack = queued_pack("crowd", 8, 2);
    let fans = 24;
    let pack_id = line(&*store, &pack, fans).await;
    close_and_draw(&*store, &beacon).await;
    let now = Timestamp::now();
    for round in 0..6 {
        // Two keepers and every fan at once: admitted fans buy, the others are refused.
        let keepers = {
            let (store, pack_id) = (store.clone(), pack_id.clone());
            tokio::spawn(async move {
                testkit::at_once(2, |_| {
                    let (store, pack_id) = (store.clone(), pack_id.clone());
                    async move { admit(&*store, &pack_id, now).await.unwrap() }
                })
                .await
            })
        };
        testkit::at_once(fans, |n| {
            let (store, pack_id) = (store.clone(), pack_id.clone());
            async move {
                let key = format!("r{round}");
                let _ = store
                    .start_purchase(&start(&fan(n), &pack_id, &key, now))
                    .await;
            }
        })
        .await;
        keepers.await.unwrap();
        live_within_left(&*store, &pack_id, now).await;
    }
    let view = store.admission_view(&pack_id).await;
    if let Some(view) = view.unwrap() {
        assert_eq!(view.left, 0, "every unit held once the line moved on");
    }
}

/// Issue 42, G1: a drop of 30,000 units (4 a fan) and 189,000 entrants admits its first 7,500
/// fans (30,000 / 4) in the first pass after the draw, each once, and nobody after them. In
/// memory: moto would take hours to take 189,000 joins.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_big_drop_admits_every_fan_its_units_serve_in_the_first_pass() {
    let store = store::MemoryStore::default();
    let (_stub, beacon) = beacon().await;
    let pack_id = line(&store, &queued_pack("all-star", 30_000, 4), 189_000).await;
    close_and_draw(&store, &beacon).await;
    let pass = admit(&store, &pack_id, Timestamp::now()).await.unwrap();
    assert_eq!(pass.admitted, 7_500, "{pass:?}");
    let view = store.admission_view(&pack_id).await.unwrap().unwrap();
    assert_eq!(view.state.admitted_through, 7_500);
    let (last_in, first_out) = (
        store.ordered(&pack_id, 7_500, 2).await.unwrap(),
        [EntryStatus::Admitted, EntryStatus::Queued],
    );
    for (ordered, status) in last_in.iter().zip(first_out) {
        let entry = store::queue::GetQueueEntry::queue_entry(&store, &pack_id, &ordered.user_id)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(entry.status, status);
    }
    // The next pass lets in nobody more: the admitted fans' allowances cover every unit.
    assert_eq!(
        admit(&store, &pack_id, Timestamp::now())
            .await
            .unwrap()
            .admitted,
        0
    );
}
