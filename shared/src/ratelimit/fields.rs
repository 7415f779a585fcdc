//! The `RateLimit-Policy` and `RateLimit` fields of draft-ietf-httpapi-ratelimit-headers-11:
//! each a Structured Fields List of Items, one per policy, named `"<scope>-<class>"`:
//! `RateLimit-Policy: "fan-start";q=10;w=10, "addr-start";q=200;w=10` (quota `q` per window
//! of `w` seconds) and `RateLimit: "fan-start";r=7;t=4, "addr-start";r=180;t=4` (`r` left,
//! `t` seconds until the window ends).

use super::{RouteClass, Standing};

/// The name of a policy: scope and class, a Structured Fields String.
fn name(class: RouteClass, standing: &Standing) -> String {
    format!("\"{}-{}\"", standing.scope.name(), class.name())
}

/// The `RateLimit-Policy` value.
pub fn policy(class: RouteClass, standings: &[Standing]) -> String {
    standings
        .iter()
        .map(|standing| {
            format!(
                "{};q={};w={}",
                name(class, standing),
                standing.quota.quota,
                standing.quota.window_seconds
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The `RateLimit` value.
pub fn limit(class: RouteClass, standings: &[Standing]) -> String {
    standings
        .iter()
        .map(|standing| {
            format!(
                "{};r={};t={}",
                name(class, standing),
                standing.remaining,
                standing.reset
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
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
