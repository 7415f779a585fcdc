//! The `RateLimit-Policy` and `RateLimit` fields of draft-ietf-httpapi-ratelimit-headers-11:
//! each a Structured Fields List of Items, one per policy, named `"<scope>-<class>"`:
//! `RateLimit-Policy: "fan-start";q=10;w=10, "addr-start";q=200;w=10` (quota `q` per window
//! of `w` seconds) and `RateLimit: "fan-start";r=7;t=4, "addr-start";r=180;t=4` (`r` left,
//! `t` seconds until the window ends).

use super::{Quota, RouteClass, Scope, Standing};

/// A List of one Item per window: its name (`"<scope>-<class>"`, a Structured Fields String)
/// and two integer parameters. Written by hand, not with `format!`: every answer of a limited
/// route carries two of these, and the formatting machinery was a tenth of local-api's work on
/// a read (BENCHMARKS.md).
fn list(
    class: RouteClass,
    items: impl ExactSizeIterator<Item = (Scope, [u32; 2])>,
    params: [&str; 2],
) -> String {
    let mut text = String::with_capacity(items.len() * 32);
    let mut digits = itoa::Buffer::new();
    for (index, (scope, values)) in items.enumerate() {
        if index > 0 {
            text.push_str(", ");
        }
        text.push('"');
        text.push_str(scope.name());
        text.push('-');
        text.push_str(class.name());
        text.push('"');
        for (param, value) in params.iter().zip(values) {
            text.push(';');
            text.push_str(param);
            text.push('=');
            text.push_str(digits.format(value));
        }
    }
    text
}

/// The `RateLimit-Policy` value of windows of these scopes and quotas.
pub fn policy(class: RouteClass, windows: impl ExactSizeIterator<Item = (Scope, Quota)>) -> String {
    let items = windows.map(|(scope, quota)| (scope, [quota.quota, quota.window_seconds]));
    list(class, items, ["q", "w"])
}

/// The `RateLimit` value.
pub fn limit(class: RouteClass, standings: &[Standing]) -> String {
    let items = standings
        .iter()
        .map(|standing| (standing.scope, [standing.remaining, standing.reset]));
    list(class, items, ["r", "t"])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_lists_of_named_items() {
        let standings = [
            Standing {
                scope: Scope::Fan,
                quota: Quota {
                    quota: 5,
                    window_seconds: 10,
                },
                remaining: 3,
                reset: 7,
                refused: false,
            },
            Standing {
                scope: Scope::Address,
                quota: Quota {
                    quota: 100,
                    window_seconds: 10,
                },
                remaining: 98,
                reset: 7,
                refused: false,
            },
        ];
        assert_eq!(
            policy(
                RouteClass::Start,
                standings.iter().map(|s| (s.scope, s.quota))
            ),
            r#""fan-start";q=5;w=10, "addr-start";q=100;w=10"#
        );
        assert_eq!(
            limit(RouteClass::Start, &standings),
            r#""fan-start";r=3;t=7, "addr-start";r=98;t=7"#
        );
    }
}
