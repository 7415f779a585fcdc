//! The queue keeper (`queue-keeper`, every minute; issue 29): moves every line not yet finished
//! one step on each pass, and passes again every few seconds within the run, so that admission
//! follows purchases, lapses and released holds within seconds, not a minute.
//!
//! - an `open` line past its close (and a grace for joins under way): the close commits its
//!   entrants (a close too late for the terms' beacon round moves the round: see
//!   [`domain::queue::state::round_for_commit`]);
//! - a `closed` line: once its beacon round is out, the draw; a round still missing
//!   [`BEACON_LATE_SECONDS`] after its time counts `QueueBeaconLate` (alarmed on) and the draw
//!   waits: it never falls back to a local random number;
//! - a `drawn` line: an admission pass ([`admit`]);
//! - a `finished` line still pending: the finish again, its fans still queued marked sold out
//!   (a keeper stopped between the finish's writes).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Serialize;

use clients::beacon::BeaconClient;
use domain::beacon::quicknet;
use domain::ids::PackId;
use futures_util::{StreamExt, stream};
use store::metrics::{self, Metric};

use domain::queue::admission::{
    Supply, WindowEnd, demand, entry_over, to_admit, window_end, window_open,
};
use domain::queue::entry::EntryStatus;
use domain::queue::events::Admit;
use domain::queue::state::{Beacon, QueueState, StoredStatus};
use domain::timestamp::Timestamp;
use store::StoreError;
use store::queue_keeper::{Ended, QueueKeeper};

/// How long after a line's close the keeper waits before committing its entrants: a join that
/// checked the clock just before the close may still be landing.
pub const CLOSE_GRACE_SECONDS: i64 = 10;

/// Admissions a pass has in flight at once: a wave of 7,500 fans (30,000 units, 4 a fan) is 7,500
/// conditional writes on as many keys, about 300 round trips of 25 (a few seconds), where one at
/// a time would outlast the keeper's run.
pub const ADMISSIONS_IN_FLIGHT: usize = 25;

/// How long after its round's time a beacon may be missing before it counts as late.
pub const BEACON_LATE_SECONDS: i64 = 600;

/// What the keeper needs.
pub struct KeeperState<S> {
    pub store: S,
    /// drand's relays (deployed), or the local beacon (scripts/local).
    pub beacon: BeaconClient,
    /// How long before its invocation's deadline a run stops starting passes: time for a pass
    /// under way to finish.
    pub reserve: Duration,
    /// The pause between passes.
    pub every: Duration,
}

/// One admission pass's counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Admission {
    pub admitted: u64,
    pub lapsed: u64,
    pub done: u64,
    pub sold_out: u64,
    pub finished: bool,
}

/// A run's counts, logged and returned to the scheduler.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KeeperRun {
    pub passes: u32,
    pub closed: u64,
    pub drawn: u64,
    pub beacons_late: u64,
    pub admitted: u64,
    pub lapsed: u64,
    pub sold_out: u64,
    pub finished: u64,
}

impl KeeperRun {
    fn add(&mut self, admission: Admission) {
        self.admitted += admission.admitted;
        self.lapsed += admission.lapsed;
        self.sold_out += admission.sold_out;
        self.finished += u64::from(admission.finished);
    }
}

/// Passes until `reserve` before the invocation's `deadline` (at least one). Any event starts
/// it.
pub async fn keep_queues<S: QueueKeeper, E>(
    state: &KeeperState<S>,
    _event: E,
    deadline: SystemTime,
) -> Result<KeeperRun, lambda_runtime::Error> {
    let stop_at = deadline.checked_sub(state.reserve).unwrap_or(UNIX_EPOCH);
    let mut run = KeeperRun::default();
    loop {
        pass(&state.store, &state.beacon, Timestamp::now(), &mut run).await?;
        if SystemTime::now() + state.every >= stop_at {
            break;
        }
        tokio::time::sleep(state.every).await;
    }
    tracing::info!(
        passes = run.passes,
        closed = run.closed,
        drawn = run.drawn,
        admitted = run.admitted,
        lapsed = run.lapsed,
        finished = run.finished,
        "queue keeper ran"
    );
    Ok(run)
}

/// One pass over every pending line at `now`.
pub async fn pass<S: QueueKeeper>(
    store: &S,
    beacon: &BeaconClient,
    now: Timestamp,
    run: &mut KeeperRun,
) -> Result<(), StoreError> {
    run.passes += 1;
    for queue in store.pending_queues().await? {
        step(store, beacon, &queue, now, run).await?;
    }
    Ok(())
}

/// Moves one line on by a step.
async fn step<S: QueueKeeper>(
    store: &S,
    beacon: &BeaconClient,
    queue: &QueueState,
    now: Timestamp,
    run: &mut KeeperRun,
) -> Result<(), StoreError> {
    let pack_id = &queue.pack_id;
    match queue.status {
        StoredStatus::Open => {
            let due = queue.closes_at.plus_seconds(CLOSE_GRACE_SECONDS);
            if due.is_none_or(|due| now < due) {
                return Ok(());
            }
            if let Some(closed) = store.close_queue(pack_id, now).await? {
                run.closed += 1;
                if closed.round != queue.beacon_round {
                    // Closed too late for the terms' round (a keeper down for minutes): drawn
                    // with a later one, so that the set still precedes the randomness.
                    tracing::warn!(pack_id = %pack_id, terms_round = queue.beacon_round, round = closed.round, "line committed late: its beacon round moved");
                }
            }
        }
        StoredStatus::Closed => match beacon.fetch(queue.beacon_round).await {
            Ok(found) => {
                if store
                    .draw_queue(pack_id, &drawn_with(found), now)
                    .await?
                    .is_some()
                {
                    run.drawn += 1;
                }
            }
            Err(error) => {
                // Not out yet, or no relay gave one that verifies: the draw waits either way.
                let late = quicknet::time_of(queue.beacon_round) + BEACON_LATE_SECONDS;
                if i64::try_from(now.unix_seconds()).is_ok_and(|now| now >= late) {
                    metrics::count(Metric::QueueBeaconLate);
                    tracing::warn!(pack_id = %pack_id, round = queue.beacon_round, error = %error, "beacon late");
                    run.beacons_late += 1;
                }
            }
        },
        StoredStatus::Drawn => run.add(admit(store, pack_id, now).await?),
        // Still pending: a keeper stopped after the finish's first write; this one completes it.
        StoredStatus::Finished => {
            run.sold_out += store.finish_queue(pack_id, queue.admitted_through).await?;
        }
    }
    Ok(())
}

/// The beacon as the line's state keeps it.
fn drawn_with(beacon: domain::beacon::Beacon) -> Beacon {
    Beacon {
        chain: beacon.chain,
        round: beacon.round,
        randomness: beacon.randomness,
        signature: beacon.signature,
    }
}

/// An admission pass over `pack_id`'s drawn line at `now`: the windows that ran out are ended,
/// fans a keeper claimed but did not admit (it stopped between the two writes) are admitted,
/// then the next fans by position while the live fans' demand is under the units left
/// ([`to_admit`]); the line finishes when every unit is paid for, or when everyone was admitted
/// and no one is live (the fans still queued are then `sold_out`).
pub async fn admit<S: QueueKeeper>(
    store: &S,
    pack_id: &PackId,
    now: Timestamp,
) -> Result<Admission, StoreError> {
    let mut pass = Admission::default();
    let Some(view) = store.admission_view(pack_id).await? else {
        return Ok(pass);
    };
    let through = view.state.admitted_through;
    let expires = now
        .plus_seconds(i64::from(view.pass_seconds))
        .ok_or_else(|| StoreError::internal("admission: window beyond the calendar"))?;
    let admitting = |user_id, position| Admit {
        user_id,
        position,
        at: now,
        until: expires,
    };
    let mut live = Vec::new();
    let mut over_through = view.over_through;
    let mut ended = Ended::default();
    let mut over_so_far = true;
    for (at, entry) in (view.over_through + 1..).zip(&view.admitted) {
        let over = match (entry_over(entry, now), entry.status) {
            (Some(end), _) => Some(end),
            (None, EntryStatus::Admitted) if !window_open(entry, now) => {
                match store.end_window(entry, now).await? {
                    Some(WindowEnd::Lapsed) => pass.lapsed += 1,
                    Some(WindowEnd::Done) => pass.done += 1,
                    None => {}
                }
                Some(window_end(entry.bought))
            }
            // Every unit is paid for and the line finishes below: nothing is left for a live fan
            // to buy, so the mark passes them and the report counts what they bought.
            (None, EntryStatus::Admitted | EntryStatus::Done) if view.all_sold => {
                Some(window_end(entry.bought))
            }
            // Live: admitted, or done inside their window (no demand, but a hold of theirs
            // released unpaid gives them a unit back).
            (None, EntryStatus::Admitted | EntryStatus::Done) => {
                live.push(entry.bought);
                None
            }
            (None, EntryStatus::Queued) => {
                // Claimed by a keeper that stopped before admitting it.
                let position = entry.position.unwrap_or(at);
                if store
                    .admit_entry(pack_id, &admitting(entry.user_id.clone(), position))
                    .await?
                {
                    pass.admitted += 1;
                }
                live.push(0);
                None
            }
            // Not drawn: not in the admitted range.
            (None, _) => None,
        };
        over_so_far &= over.is_some();
        if over_so_far {
            over_through = at;
            match over {
                Some(WindowEnd::Lapsed) => ended.lapsed += 1,
                _ => ended.bought += u64::from(entry.bought),
            }
        }
    }
    if over_through > view.over_through {
        store
            .advance_over_through(pack_id, view.over_through, over_through, ended)
            .await?;
    }
    let entrants = view.state.entrants.unwrap_or(0);
    let supply = Supply {
        left: view.left,
        demand: demand(view.allowance, live.iter().copied()),
        waiting: entrants.saturating_sub(through),
    };
    let count = to_admit(supply, view.allowance);
    if count > 0
        && store
            .claim_positions(pack_id, through, through + count, now)
            .await?
    {
        let wave = store.ordered(pack_id, through + 1, count).await?;
        // Owned entries, not borrowed ones: a closure over a borrow makes the pass's future not
        // `Send` for every lifetime (rustc's higher-ranked closure inference).
        let admits = (through + 1..)
            .zip(wave)
            .map(|(position, entry)| admitting(entry.user_id, position));
        let mut admissions = stream::iter(
            admits.map(|admit| async move { store.admit_entry(pack_id, &admit).await }),
        )
        .buffer_unordered(ADMISSIONS_IN_FLIGHT);
        // A failed write leaves its fan `queued` under the claim: the next pass admits them.
        let mut failed = None;
        while let Some(admitted) = admissions.next().await {
            match admitted {
                Ok(true) => pass.admitted += 1,
                Ok(false) => {}
                Err(error) => failed = Some(error),
            }
        }
        return failed.map_or(Ok(pass), Err);
    }
    let everyone_served = supply.waiting == 0 && live.is_empty();
    if view.all_sold || everyone_served {
        pass.sold_out = store.finish_queue(pack_id, through).await?;
        pass.finished = true;
    }
    Ok(pass)
}
