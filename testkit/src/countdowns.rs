//! The countdowns of issue 44 in tests: an answer's `<x>InMs`, the milliseconds from the answer
//! until its `<x>At`, checked against when its request was sent and answered; and answers made
//! at different times compared without them.

use std::future::Future;

use domain::timestamp::Timestamp;
use serde_json::Value;

/// When a request was sent and when its answer came back: the answer was made in between.
#[derive(Debug, Clone, Copy)]
pub struct Asked {
    pub sent: Timestamp,
    pub answered: Timestamp,
}

/// Runs `request`, noting when.
pub async fn asked<T>(request: impl Future<Output = T>) -> (T, Asked) {
    let sent = Timestamp::now();
    let answer = request.await;
    let answered = Timestamp::now();
    (answer, Asked { sent, answered })
}

impl Asked {
    /// Asserts that `object`'s `<x>InMs` counts down to its `<x>At`: null when that is, else
    /// the milliseconds until it from an instant of the request (0 for one passed before it).
    /// Gives the countdown.
    pub fn assert_counts_down(&self, object: &Value, x: &str) -> Option<u64> {
        let (at, countdown) = (&object[format!("{x}At")], &object[format!("{x}InMs")]);
        let Some(at) = at.as_str() else {
            assert_eq!(countdown, &Value::Null, "{x}At is null: {object}");
            return None;
        };
        let at = Timestamp::parse(at).expect("an instant");
        let millis = countdown
            .as_u64()
            .unwrap_or_else(|| panic!("{x}InMs is not a countdown: {object}"));
        let possible = self.answered.millis_until(at)..=self.sent.millis_until(at);
        assert!(
            possible.contains(&millis),
            "{x}InMs is {millis}, not in {possible:?}: {object}"
        );
        Some(millis)
    }
}

/// `answer` without its countdowns (every `...InMs` member, at any depth), so that answers made
/// at different times compare equal.
pub fn without_countdowns(mut answer: Value) -> Value {
    strip(&mut answer);
    answer
}

fn strip(value: &mut Value) {
    match value {
        Value::Object(members) => {
            members.retain(|name, _| !name.ends_with("InMs"));
            members.values_mut().for_each(strip);
        }
        Value::Array(values) => values.iter_mut().for_each(strip),
        _ => {}
    }
}
