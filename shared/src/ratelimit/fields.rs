//! The `RateLimit-Policy` and `RateLimit` fields of draft-ietf-httpapi-ratelimit-headers-11:
//! each a Structured Fields List of Items, one per policy, named `"<scope>-<class>"`:
//! `RateLimit-Policy: "fan-start";q=10;w=10, "addr-start";q=200;w=10` (quota `q` per window
//! of `w` seconds) and `RateLimit: "fan-start";r=7;t=4, "addr-start";r=180;t=4` (`r` left,
//! `t` seconds until the window ends).

use super::{RouteClass, Standing};

/// A List of one Item per standing: its name (`"<scope>-<class>"`, a Structured Fields String)
/// and two integer parameters. Written by hand, not with `format!`: every answer of a limited
/// route carries two of these, and the formatting machinery was a tenth of local-api's work on
/// a read (BENCHMARKS.md).
fn list(
    class: RouteClass,
    standings: &[Standing],
    params: [&str; 2],
    values: impl Fn(&Standing) -> [u32; 2],
) -> String {
    let mut text = String::with_capacity(standings.len() * 32);
    let mut digits = itoa::Buffer::new();
    for (index, standing) in standings.iter().enumerate() {
        if index > 0 {
            text.push_str(", ");
        }
        text.push('"');
        text.push_str(standing.scope.name());
        text.push('-');
        text.push_str(class.name());
        text.push('"');
        for (param, value) in params.iter().zip(values(standing)) {
            text.push(';');
            text.push_str(param);
            text.push('=');
            text.push_str(digits.format(value));
        }
    }
    text
}

/// The `RateLimit-Policy` value.
pub fn policy(class: RouteClass, standings: &[Standing]) -> String {
    list(class, standings, ["q", "w"], |standing| {
        [standing.quota.quota, standing.quota.window_seconds]
    })
}

/// The `RateLimit` value.
pub fn limit(class: RouteClass, standings: &[Standing]) -> String {
    list(class, standings, ["r", "t"], |standing| {
        [standing.remaining, standing.reset]
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ratelimit::{Quota, Scope};

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
            policy(RouteClass::Start, &standings),
            r#""fan-start";q=5;w=10, "addr-start";q=100;w=10"#
        );
        assert_eq!(
            limit(RouteClass::Start, &standings),
            r#""fan-start";r=3;t=7, "addr-start";r=98;t=7"#
        );
    }
}
