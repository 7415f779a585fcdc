//! template.yaml: each routed function's HttpApi events (one per route, and the `$default`
//! catch-all on the default function), in the region `events of <function>` under its `Events:`.
//! The rest of the template (policies, alarms, settings) is written by hand.

use std::collections::BTreeSet;
use std::fmt::Write;

use crate::examples::event;
use crate::markers::{fill, markers, regions};
use crate::routes::RouteSpec;

const FILE: &str = "template.yaml";
const EVENTS_OF: &str = "events of ";

/// `template` with every routed function's events generated.
pub fn with_events(template: &str, routes: &[RouteSpec], default: &str) -> Result<String, String> {
    check_regions(template, routes)?;
    fill(FILE, template, |name| {
        let function = name.strip_prefix(EVENTS_OF).unwrap_or(name);
        events(routes, function, default)
    })
}

/// One region per routed function, inside that function's resource, and no HttpApi event
/// elsewhere (a route is declared, not written into the template).
fn check_regions(template: &str, routes: &[RouteSpec]) -> Result<(), String> {
    let regions = regions(FILE, template)?;
    let mut problems = Vec::new();
    let functions: BTreeSet<&str> = routes.iter().map(|route| route.function.as_str()).collect();
    for function in functions {
        let name = format!("{EVENTS_OF}{function}");
        if !regions.iter().any(|region| region.name == name) {
            problems.push(format!(
                "{FILE}: the function {function} has no {} under its `Events:`",
                markers(&name)
            ));
        }
    }
    for (i, region) in regions.iter().enumerate() {
        let Some(function) = region.name.strip_prefix(EVENTS_OF) else {
            problems.push(format!("{FILE}: unknown region {:?}", region.name));
            continue;
        };
        if !routes.iter().any(|route| route.function == function) {
            problems.push(format!("{FILE}: {function} serves no route"));
        }
        if regions[..i]
            .iter()
            .any(|earlier| earlier.name == region.name)
        {
            problems.push(format!("{FILE}: region {:?} twice", region.name));
        }
        // The resource's Metadata (with its binary) comes before its Properties.
        let binary = template[..region.body.start]
            .lines()
            .rev()
            .find_map(|line| line.trim().strip_prefix("Binary: "));
        if binary != Some(function) {
            problems.push(format!(
                "{FILE}: the events of {function} are in the resource of {binary:?}"
            ));
        }
    }
    let mut offset = 0;
    for line in template.split_inclusive('\n') {
        let generated = regions.iter().any(|region| region.body.contains(&offset));
        if line.trim() == "Type: HttpApi" && !generated {
            problems.push(format!(
                "{FILE}, line {}: an HttpApi event outside the generated regions (declare the route instead)",
                template[..offset].lines().count() + 1
            ));
        }
        offset += line.len();
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

/// The events of `function`, at the indentation of a resource's `Events:` entries.
fn events(routes: &[RouteSpec], function: &str, default: &str) -> Result<String, String> {
    let mut yaml = String::new();
    for route in routes.iter().filter(|route| route.function == function) {
        let _ = write!(
            yaml,
            "        {}:\n          Type: HttpApi\n          Properties:\n            ApiId: !Ref HttpApi\n            Path: {}\n            Method: {}\n",
            event(route),
            route.path,
            route.method
        );
        if let Some(throttle) = route.extra.throttle {
            let _ = write!(
                yaml,
                "            # Tighter than the API's default: see {throttle}RateLimit.\n            RouteSettings:\n              ThrottlingRateLimit: !Ref {throttle}RateLimit\n              ThrottlingBurstLimit: !Ref {throttle}BurstLimit\n"
            );
        }
    }
    if function == default {
        yaml.push_str("        NotFound:\n          Type: HttpApi\n          Properties:\n            ApiId: !Ref HttpApi\n");
    }
    Ok(yaml)
}
