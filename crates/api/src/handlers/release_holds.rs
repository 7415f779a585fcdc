//! The scheduled sweep (`release-holds`, every minute): releases the holds that expired, in
//! bounded batches, within the function's time; publishes the server seed of each pack whose
//! seed is revealed on the pack's public item (get-purchase may read that, never a seed before
//! its reveal); and refreshes each listed pack's `remaining` summary from its shares, twice a
//! run, so that what list and get-pack show is at most about 30 seconds behind the supply
//! (BENCHMARKS.md, capacity).

use std::time::{Duration, Instant};

use serde::Serialize;

use domain::timestamp::Timestamp;
use store::packs::{PublishRevealedSeeds, RefreshRemaining};
use store::purchases::ReleaseHolds;

/// Holds released per batch (each is one transaction).
pub const BATCH: usize = 100;

/// What the sweep needs.
pub struct SweepState<S> {
    pub store: S,
    /// When to stop starting batches: well inside the function's timeout.
    pub budget: Duration,
    /// When, after the run's start, to refresh the summaries a second time (`None`: once, at
    /// the end): a schedule fires once a minute at most, so a second refresh halves the lag.
    pub refresh_again_after: Option<Duration>,
}

/// The sweep's counts, logged and returned to the scheduler.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Sweep {
    pub released: u64,
    pub lost_races: u64,
    pub skipped: u64,
    pub batches: u32,
    pub more: bool,
    /// Packs whose `remaining` summary changed.
    pub summaries: u64,
    /// Packs whose server seed was revealed and is now published on their public item.
    pub seeds_published: u64,
}

/// Releases expired holds batch by batch until none are left or the budget is spent. Any event
/// starts it (the schedule's payload carries nothing it needs).
pub async fn release_holds<S: ReleaseHolds + RefreshRemaining + PublishRevealedSeeds, E>(
    state: &SweepState<S>,
    _event: E,
) -> Result<Sweep, lambda_runtime::Error> {
    let started = Instant::now();
    let mut sweep = Sweep::default();
    loop {
        let report = state
            .store
            .release_holds(None, Timestamp::now(), BATCH)
            .await?;
        sweep.released += report.released;
        sweep.lost_races += report.lost_races;
        sweep.skipped += report.skipped;
        sweep.batches += 1;
        sweep.more = report.more;
        if !report.more || started.elapsed() >= state.budget {
            break;
        }
    }
    sweep.seeds_published = state.store.publish_revealed_seeds(Timestamp::now()).await?;
    sweep.summaries = state.store.refresh_remaining().await?;
    if let Some(again) = state.refresh_again_after
        && let Some(wait) = again.checked_sub(started.elapsed())
    {
        tokio::time::sleep(wait).await;
        sweep.summaries += state.store.refresh_remaining().await?;
    }
    tracing::info!(
        summaries = sweep.summaries,
        seeds_published = sweep.seeds_published,
        released = sweep.released,
        lost_races = sweep.lost_races,
        skipped = sweep.skipped,
        batches = sweep.batches,
        more = sweep.more,
        "holds swept"
    );
    Ok(sweep)
}
