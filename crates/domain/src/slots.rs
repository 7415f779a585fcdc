//! Numbered slots that free themselves when their time has passed: a fan's unpaid holds
//! ([`crate::purchases::take_hold_slot`]) and pending top-ups
//! ([`crate::topups::pending::take_pending_slot`]), each item of which a write takes one of.

/// The first of the `max` slots that is free: empty, or taken by one that `ended`.
pub fn first_free<T>(slots: &[Option<T>], max: u32, ended: impl Fn(&T) -> bool) -> Option<u32> {
    (0..max).find(|&k| {
        slots
            .get(k as usize)
            .and_then(Option::as_ref)
            .is_none_or(&ended)
    })
}
