//! One failing or slow endpoint must not delay the others' deliveries (issue 46): the sender's
//! slots are shared (each invocation handles its batch at once, and invocations are capped), and
//! the attempts that hold a slot longest are a failing endpoint's (up to the 15 s timeout) and a
//! slow one's (a 2xx after 10 s holds it as long). So each instance lets an endpoint that is
//! failing (its streak runs) or slow have [`BOUNDED_IN_FLIGHT`] attempt in flight; its other
//! messages are put back on the queue for [`DEFERRED`] without an attempt. Across the sender's 50
//! invocations, such an endpoint then holds at most 50 of the 500 slots.
//!
//! Slow is what this instance saw, not a stored state (no write per attempt): an endpoint is slow
//! while its last attempt here took [`SLOW`] or longer, or one still in flight here has (so the
//! bound holds from the first slow attempt on, not after it), until an attempt here takes less.
//! A quick, healthy endpoint is not bounded: a cap for all would defer a busy endpoint's batches
//! for nothing.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use domain::webhooks::endpoint::{Endpoint, EndpointId};

/// Attempts a failing or slow endpoint may have in flight in one instance.
pub const BOUNDED_IN_FLIGHT: usize = 1;

/// How long a deferred message waits before it is received again.
pub const DEFERRED: Duration = Duration::from_secs(30);

/// An attempt this long makes its endpoint slow: a third of the 15 s timeout, 50 times a
/// receiver's usual 100 ms.
pub const SLOW: Duration = Duration::from_secs(5);

/// Each endpoint's attempts in flight in this instance, and which endpoints are slow.
#[derive(Debug, Clone)]
pub struct InFlight {
    held: Arc<Mutex<HashMap<EndpointId, Held>>>,
    slow_after: Duration,
}

/// One endpoint's attempts in flight here (when each began) and whether its last was slow.
#[derive(Debug, Default)]
struct Held {
    started: Vec<Instant>,
    slow: bool,
}

/// An attempt's hold on its endpoint's count, given back when dropped.
pub struct Slot {
    in_flight: InFlight,
    endpoint: EndpointId,
    started: Instant,
    /// How long the attempt took, once it was made (a message dropped before it judges nothing).
    took: Option<Duration>,
}

impl Default for InFlight {
    fn default() -> Self {
        Self::slow_after(SLOW)
    }
}

impl InFlight {
    /// Counts attempts of `slow_after` or longer as slow (the sender: [`SLOW`]).
    pub fn slow_after(slow_after: Duration) -> Self {
        Self {
            held: Arc::default(),
            slow_after,
        }
    }

    /// A slot for an attempt to `endpoint`, or `None` when it is failing or slow and has its
    /// bound in flight already.
    pub fn take(&self, endpoint: &Endpoint) -> Option<Slot> {
        let now = Instant::now();
        let mut held = self.lock();
        let entry = held.entry(endpoint.id.clone()).or_default();
        let slow = entry.slow
            || entry
                .started
                .iter()
                .any(|started| now.duration_since(*started) >= self.slow_after);
        let bounded = endpoint.failing_since.is_some() || slow;
        if bounded && entry.started.len() >= BOUNDED_IN_FLIGHT {
            return None;
        }
        entry.started.push(now);
        Some(Slot {
            in_flight: self.clone(),
            endpoint: endpoint.id.clone(),
            started: now,
            took: None,
        })
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<EndpointId, Held>> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Slot {
    /// The attempt was made: how long it took decides whether its endpoint is slow here.
    pub fn attempted(mut self) {
        self.took = Some(self.started.elapsed());
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut held = self.in_flight.lock();
        if let Some(entry) = held.get_mut(&self.endpoint) {
            if let Some(at) = entry.started.iter().position(|s| *s == self.started) {
                entry.started.swap_remove(at);
            }
            if let Some(took) = self.took {
                entry.slow = took >= self.in_flight.slow_after;
            }
            if entry.started.is_empty() && !entry.slow {
                held.remove(&self.endpoint);
            }
        }
    }
}
