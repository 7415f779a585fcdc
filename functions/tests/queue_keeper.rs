//! The real `queue-keeper` binary, run through a Lambda Runtime API emulator against moto_server
//! with the schedule's event fixture and testkit's drand relay stubs (`DRAND_URLS`), each
//! invocation given a deadline that leaves it one pass: it closes a line whose `closesAt`
//! passed, waits while no relay serves a beacon that verifies (a lying relay skipped, the round
//! late: `QueueBeaconLate` counted, the alarm's metric), draws once the round is served, admits.

use std::time::Duration;

use domain::beacon::quicknet;
use domain::ids::{PackId, UserId};
use domain::packs::draw::lower_hex;
use domain::queue::entry::EntryStatus;
use domain::queue::state::{QueueState, StoredStatus};
use serde_json::{Value, json};
use store::queue::{GetQueue, GetQueueEntry};
use store::queue_keeper::CloseQueue;
use testkit::drand::{self, DrandStub, Mode};
use testkit::ids;
use testkit::purchases::{Function, PurchaseEnv, fixture};
use testkit::queue::{closed_for_round, join_directly};
use testkit::runtime_api::Outcome;
use testkit::waiting_room::on_time;

const BINARY: &str = env!("CARGO_BIN_EXE_queue-keeper");

/// A recorded quicknet round (testkit::drand): a line's round must be a real one the stub serves.
const ROUND: u64 = 9_367_912;

/// The function's timeout for these runs: `RESERVE` (10 s) plus 2 s, so that a run stops after
/// its first pass (the next would start 5 s later, past the reserve).
const ONE_PASS: Duration = Duration::from_secs(12);

fn fans(n: usize) -> Vec<UserId> {
    (0..n).map(|i| ids::user(&format!("fan-{i}"))).collect()
}

/// The keeper against `env`'s table, asking `relays` in order; its log kept.
async fn keeper(env: &PurchaseEnv, relays: &[&DrandStub]) -> Function {
    let urls: Vec<String> = relays.iter().map(|relay| relay.url()).collect();
    let keeper = env
        .spawn_logged(BINARY, &[("DRAND_URLS", &urls.join(","))])
        .await;
    keeper.runtime.set_timeout(ONE_PASS);
    keeper
}

/// One scheduled run's counts.
async fn run(keeper: &Function) -> Value {
    match keeper.invoke(fixture("queue-keeper", None)).await {
        Outcome::Response(counts) => counts,
        other => panic!("the run failed: {other:?}"),
    }
}

/// A run's counts: one pass, these steps.
fn counts(closed: u64, drawn: u64, late: u64, admitted: u64) -> Value {
    json!({"passes": 1, "closed": closed, "drawn": drawn, "beaconsLate": late,
        "admitted": admitted, "lapsed": 0, "soldOut": 0, "finished": 0})
}

/// The line's state, read as the public read does.
async fn state(env: &PurchaseEnv, pack_id: &PackId) -> QueueState {
    let view = env.store.get_queue(pack_id).await.unwrap();
    view.expect("a queued pack").state
}

/// How many times the stub was asked for [`ROUND`].
fn asked(relay: &DrandStub) -> usize {
    let path = format!("/{}/public/{ROUND}", drand::CHAIN_HASH);
    relay.received().iter().filter(|p| **p == path).count()
}

/// `QueueBeaconLate` of each metrics line the keeper wrote, once stopped.
async fn late_counts(keeper: Function) -> Vec<f64> {
    let log = keeper.stop().await;
    testkit::emf::lines(&log)
        .into_iter()
        .filter_map(|line| line.value("QueueBeaconLate"))
        .collect()
}

/// A line of 3 units, one a fan, closed for [`ROUND`] (years ago), that `fans` joined.
async fn joined(env: &PurchaseEnv, id: &str, fans: &[UserId]) -> PackId {
    let pack = closed_for_round(id, 3, 1, ROUND);
    testkit::packs::save(&env.store, &pack).await;
    let pack_id = ids::pack(&pack.id);
    join_directly(&env.store, &pack_id, fans).await;
    pack_id
}

/// [`joined`], its entrants committed by a keeper on time for [`ROUND`] (a keeper closing it
/// today would be years late for that round and move it).
async fn line(env: &PurchaseEnv, id: &str, fans: &[UserId]) -> PackId {
    let pack_id = joined(env, id, fans).await;
    let closed = env.store.close_queue(&pack_id, on_time()).await.unwrap();
    assert_eq!(closed.expect("closed").round, ROUND);
    pack_id
}

#[tokio::test]
async fn closes_then_waits_out_a_lying_relay_then_draws_and_admits() {
    let env = PurchaseEnv::new().await;
    let fans = fans(5);
    let pack_id = line(&env, "keeper-drop", &fans).await;
    // The first relay lies (the true signature, one bit of the randomness flipped); the second
    // is honest but does not have the round yet.
    let liar = DrandStub::start_with(Mode::TamperedRandomness).await;
    let honest = DrandStub::start().await;
    honest.set_latest(ROUND - 1);
    let keeper = keeper(&env, &[&liar, &honest]).await;
    assert_eq!(state(&env, &pack_id).await.status, StoredStatus::Closed);

    // The liar's beacon fails verification and is skipped; the honest relay has none: no draw,
    // and the round (long past) is late.
    assert_eq!(run(&keeper).await, counts(0, 0, 1, 0));
    assert_eq!((asked(&liar), asked(&honest)), (1, 1));
    let closed = state(&env, &pack_id).await;
    assert_eq!(closed.status, StoredStatus::Closed);
    assert_eq!((closed.seed, closed.beacon), (None, None));

    // The honest relay serves the round: drawn with its beacon, the liar skipped again.
    honest.set_latest(ROUND);
    assert_eq!(run(&keeper).await, counts(0, 1, 0, 0));
    assert_eq!((asked(&liar), asked(&honest)), (2, 2));
    let drawn = state(&env, &pack_id).await;
    assert_eq!(drawn.status, StoredStatus::Drawn);
    let beacon = drawn.beacon.expect("the draw's beacon");
    assert_eq!(
        lower_hex(&beacon.randomness),
        drand::round(ROUND).randomness
    );
    assert_eq!(lower_hex(&beacon.signature), drand::round(ROUND).signature);

    // Admission: three units, one a fan, so the fans at positions 1-3.
    assert_eq!(run(&keeper).await, counts(0, 0, 0, 3));
    let mut entries = Vec::new();
    for fan in &fans {
        entries.push(env.store.queue_entry(&pack_id, fan).await.unwrap().unwrap());
    }
    entries.sort_by_key(|entry| entry.position);
    let positions: Vec<_> = entries.iter().filter_map(|e| e.position).collect();
    assert_eq!(positions, [1, 2, 3, 4, 5]);
    let statuses: Vec<_> = entries.iter().map(|e| e.status).collect();
    use EntryStatus::{Admitted, Queued};
    assert_eq!(statuses, [Admitted, Admitted, Admitted, Queued, Queued]);

    // The one late round counted once, in the second run's metrics line: the alarm's metric.
    assert_eq!(late_counts(keeper).await, [1.0]);
}

#[tokio::test]
async fn without_a_beacon_the_line_is_never_drawn_and_the_round_is_late() {
    let env = PurchaseEnv::new().await;
    let pack_id = line(&env, "no-beacon", &fans(2)).await;
    let down = DrandStub::start_with(Mode::Down).await;
    let keeper = keeper(&env, &[&down]).await;

    for _ in 0..2 {
        assert_eq!(run(&keeper).await, counts(0, 0, 1, 0));
    }
    assert_eq!(asked(&down), 2);
    let waiting = state(&env, &pack_id).await;
    assert_eq!(waiting.status, StoredStatus::Closed, "never a local draw");
    assert_eq!((waiting.seed, waiting.admitted_through), (None, 0));
    assert_eq!(late_counts(keeper).await, [1.0, 1.0]);
}

#[tokio::test]
async fn a_line_closed_after_its_round_is_never_drawn_with_that_round() {
    let env = PurchaseEnv::new().await;
    let pack_id = joined(&env, "keeper-late", &fans(3)).await;
    // The relay serves the terms' round: a keeper that drew with it would draw with randomness
    // that existed before the set was fixed.
    let relay = DrandStub::start().await;
    relay.set_latest(ROUND);
    let keeper = keeper(&env, &[&relay]).await;

    // The close (years after the round) commits the set and moves the round to the one due 5
    // minutes after the commit.
    assert_eq!(run(&keeper).await, counts(1, 0, 0, 0));
    let closed = state(&env, &pack_id).await;
    assert_eq!(closed.status, StoredStatus::Closed);
    let committed_at = closed.committed_at.expect("the commit's time");
    let committed = i64::try_from(committed_at.unix_seconds()).unwrap();
    assert_eq!(closed.beacon_round, quicknet::round_at(committed + 300));
    assert!(quicknet::time_of(closed.beacon_round) - committed >= 60);

    // The next run waits for the moved round (5 minutes away: not late, and not even asked for),
    // and never asks for the terms' one, which the relay has.
    assert_eq!(run(&keeper).await, counts(0, 0, 0, 0));
    assert_eq!(relay.received(), Vec::<String>::new());
    let waiting = state(&env, &pack_id).await;
    assert_eq!(
        (waiting.status, waiting.beacon),
        (StoredStatus::Closed, None)
    );
    keeper.stop().await;
}
