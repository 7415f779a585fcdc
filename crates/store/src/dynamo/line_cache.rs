//! What a warm instance knows of whether a pack's line has finished: a start by an entrant whose
//! entry does not admit them asks (after the line, the units left sell to its entrants). A
//! finished line stays finished, so that is kept; a line not finished is asked again after
//! [`LINE_STATE_MEMORY`], so that a drop's early presses read its state item at most once per
//! instance per that long, never once a press. Never anything of a user.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use domain::ids::PackId;

/// How long an instance takes a line for unfinished without reading its state again: the units
/// left go on sale to its entrants at most this much after the keeper finishes it.
pub const LINE_STATE_MEMORY: Duration = Duration::from_secs(5);

#[derive(Debug, Default)]
pub(crate) struct LineCache {
    lines: Mutex<HashMap<PackId, Known>>,
}

#[derive(Debug, Clone, Copy)]
enum Known {
    Finished,
    NotFinishedAt(Instant),
}

impl LineCache {
    /// Whether `pack_id`'s line has finished, when known.
    pub(crate) fn finished(&self, pack_id: &PackId) -> Option<bool> {
        let lines = self.lines.lock().unwrap_or_else(PoisonError::into_inner);
        match lines.get(pack_id)? {
            Known::Finished => Some(true),
            Known::NotFinishedAt(at) => (at.elapsed() < LINE_STATE_MEMORY).then_some(false),
        }
    }

    pub(crate) fn learn(&self, pack_id: &PackId, finished: bool) {
        let known = if finished {
            Known::Finished
        } else {
            Known::NotFinishedAt(Instant::now())
        };
        self.lines
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(pack_id.clone(), known);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_finished_line_is_kept_and_an_open_one_asked_again() {
        let cache = LineCache::default();
        let pack = PackId::parse("drop").unwrap();
        assert_eq!(cache.finished(&pack), None);
        cache.learn(&pack, false);
        assert_eq!(cache.finished(&pack), Some(false));
        cache.lines.lock().unwrap().insert(
            pack.clone(),
            Known::NotFinishedAt(Instant::now() - LINE_STATE_MEMORY),
        );
        assert_eq!(cache.finished(&pack), None, "asked again once stale");
        cache.learn(&pack, true);
        assert_eq!(cache.finished(&pack), Some(true));
    }
}
