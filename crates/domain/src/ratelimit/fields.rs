//! The `RateLimit-Policy` and `RateLimit` fields of draft-ietf-httpapi-ratelimit-headers-11:
//! each a Structured Fields List of Items, one per policy, named `"<scope>-<class>"`:
//! `RateLimit-Policy: "fan-start";q=10;w=10, "addr-start";q=200;w=10` (quota `q` per window
//! of `w` seconds) and `RateLimit: "fan-start";r=7;t=4, "addr-start";r=180;t=4` (`r` left,
//! `t` seconds until the window ends).

use super::{Quota, RouteClass, Scope, Standing};
use crate::decimal::decimal_len;

/// A List of one Item per window: its name (`"<scope>-<class>"`, a Structured Fields String)
/// and two integer parameters. Written by hand, not with `format!`: every answer of a limited
/// route carries two of these, and the formatting machinery was a tenth of local-api's work on
/// a read (BENCHMARKS.md). Into a `String` of exactly its length: `HeaderValue` takes one whose
/// capacity is its length as it is, and any other with a second allocation.
fn list(
    class: RouteClass,
    items: impl Iterator<Item = (Scope, [u32; 2])> + Clone,
    params: [&str; 2],
) -> String {
    let mut text = String::with_capacity(list_len(class, items.clone(), params));
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

/// The length of [`list`]'s text.
fn list_len(
    class: RouteClass,
    items: impl Iterator<Item = (Scope, [u32; 2])>,
    params: [&str; 2],
) -> usize {
    let item = |(scope, values): (Scope, [u32; 2])| {
        let name = 3 + scope.name().len() + class.name().len();
        let params: usize = params
            .iter()
            .zip(values)
            .map(|(param, value)| 2 + param.len() + decimal_len(value.into()))
            .sum();
        name + params
    };
    items
        .enumerate()
        .map(|(index, each)| if index > 0 { 2 } else { 0 } + item(each))
        .sum()
}

/// The `RateLimit-Policy` value of windows of these scopes and quotas.
pub fn policy(class: RouteClass, windows: impl Iterator<Item = (Scope, Quota)> + Clone) -> String {
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

    #[test]
    fn a_list_is_written_into_exactly_its_length() {
        for values in [[0, 0], [9, 10], [99, 100], [u32::MAX, 1_000_000_000]] {
            for items in [
                &[][..],
                &[(Scope::Address, values)],
                &[(Scope::Fan, values); 2],
            ] {
                let text = list(RouteClass::Read, items.iter().copied(), ["r", "t"]);
                assert_eq!(
                    list_len(RouteClass::Read, items.iter().copied(), ["r", "t"]),
                    text.len(),
                    "{text}"
                );
                assert_eq!(text.capacity(), text.len(), "{text}");
            }
        }
    }
}
