//! Cargo.toml's `cargo lambda watch` router, in the region `the cargo lambda watch router`: it
//! routes as API Gateway does. Each routed path sends each method to its route's function, and
//! every other method to the default function (the `$default` route's JSON 404/405): cargo lambda
//! does not pass a method that a per-method path leaves out on to the catch-all, so every method
//! is listed. A path whose methods all go to one function is that function alone. Every other path
//! goes to the default function (`/{*path}`, matchit's catch-all).

use std::fmt::Write;

use crate::routes::{METHODS, RouteSpec};

pub const REGION: &str = "the cargo lambda watch router";

/// The router table, its header included.
pub fn router(routes: &[RouteSpec], default: &str) -> String {
    let mut toml = String::from("[workspace.metadata.lambda.watch.router]\n");
    let mut paths: Vec<&str> = Vec::new();
    for route in routes {
        if !paths.contains(&route.path.as_str()) {
            paths.push(&route.path);
        }
    }
    for path in paths {
        let routed: Vec<&RouteSpec> = routes.iter().filter(|r| r.path == path).collect();
        // The path's routes first, in declaration order, then the other methods.
        let mut entries: Vec<(&str, &str)> = routed
            .iter()
            .map(|route| (route.method.as_str(), route.function.as_str()))
            .collect();
        for method in METHODS {
            if !routed.iter().any(|route| route.method == method) {
                entries.push((method, default));
            }
        }
        if entries.iter().all(|(_, function)| *function == default) {
            let _ = writeln!(toml, "\"{path}\" = \"{default}\"");
            continue;
        }
        let _ = writeln!(toml, "\"{path}\" = [");
        for (method, function) in entries {
            let _ = writeln!(
                toml,
                "  {{ method = \"{method}\", function = \"{function}\" }},"
            );
        }
        toml.push_str("]\n");
    }
    let _ = writeln!(toml, "\"/{{*path}}\" = \"{default}\"");
    toml
}
