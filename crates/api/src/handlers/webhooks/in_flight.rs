//! One failing endpoint must not delay the others' deliveries (issue 46): the sender's slots are
//! shared (each invocation handles its batch at once, and invocations are capped), and a failing
//! endpoint's attempts are the ones that hold a slot longest (up to the 15 s timeout). So each
//! instance lets an endpoint whose failing streak runs have [`FAILING_IN_FLIGHT`] attempt in
//! flight; its other messages are put back on the queue for [`DEFERRED`] without an attempt.
//! Across the sender's 50 invocations, a failing endpoint then holds at most 50 of the 500 slots.
//! A healthy endpoint is not bounded: its attempts end quickly.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use domain::webhooks::endpoint::{Endpoint, EndpointId};

/// Attempts a failing endpoint may have in flight in one instance.
pub const FAILING_IN_FLIGHT: usize = 1;

/// How long a deferred message waits before it is received again.
pub const DEFERRED: Duration = Duration::from_secs(30);

/// Each endpoint's attempts in flight in this instance.
#[derive(Debug, Default, Clone)]
pub struct InFlight(Arc<Mutex<HashMap<EndpointId, usize>>>);

/// An attempt's hold on its endpoint's count, given back when dropped.
pub struct Slot {
    counts: InFlight,
    endpoint: EndpointId,
}

impl InFlight {
    /// A slot for an attempt to `endpoint`, or `None` when it is failing and has its bound in
    /// flight already.
    pub fn take(&self, endpoint: &Endpoint) -> Option<Slot> {
        let mut counts = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let count = counts.entry(endpoint.id.clone()).or_default();
        if endpoint.failing_since.is_some() && *count >= FAILING_IN_FLIGHT {
            return None;
        }
        *count += 1;
        Some(Slot {
            counts: self.clone(),
            endpoint: endpoint.id.clone(),
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut counts = self.counts.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = counts.get_mut(&self.endpoint) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                counts.remove(&self.endpoint);
            }
        }
    }
}
