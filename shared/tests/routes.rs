//! `openapi.yaml` documents exactly the routes of `shared::http::routes::ROUTES`, their paths and
//! methods. (template.yaml's events, the `cargo lambda watch` router and the event fixtures are
//! generated from the declaration by `scripts/gen`, whose test keeps them current; this check goes
//! once openapi.yaml is generated too.) The checker takes the file's text and returns the
//! disagreements, so the tests also prove, on altered copies of the real file, that one is caught.

mod support;

use std::collections::BTreeSet;

use serde_norway::Value;
use shared::http::routes::ROUTES;
use support::{assert_each_alteration_caught, assert_none, read};

/// openapi.yaml: its paths and their operations are exactly the routes.
fn openapi_problems(openapi_text: &str) -> Vec<String> {
    const OPERATIONS: [&str; 8] = [
        "get", "put", "post", "delete", "options", "head", "patch", "trace",
    ];
    let openapi: Value = serde_norway::from_str(openapi_text).expect("openapi.yaml parses");
    let mut problems = Vec::new();
    let mut documented = BTreeSet::new();
    for (path, item) in openapi["paths"].as_mapping().expect("paths") {
        let path = path.as_str().unwrap_or_default();
        let methods: Vec<String> = item
            .as_mapping()
            .into_iter()
            .flatten()
            .filter_map(|(key, _)| key.as_str())
            .filter(|key| OPERATIONS.contains(key))
            .map(str::to_ascii_uppercase)
            .collect();
        if methods.is_empty() {
            problems.push(format!(
                "openapi.yaml documents {path} without an operation"
            ));
        }
        documented.extend(methods.into_iter().map(|method| format!("{method} {path}")));
    }
    let routes: BTreeSet<String> = ROUTES
        .iter()
        .map(|route| format!("{} {}", route.method, route.path))
        .collect();
    problems.extend(
        documented
            .difference(&routes)
            .map(|route| format!("openapi.yaml documents {route}, which ROUTES does not have")),
    );
    problems.extend(
        routes
            .difference(&documented)
            .map(|route| format!("openapi.yaml lacks {route} of ROUTES")),
    );
    problems
}

#[test]
fn openapi_paths_are_the_route_table() {
    assert_none(openapi_problems(&read("openapi.yaml")));
}

#[test]
fn an_openapi_that_documents_otherwise_is_caught() {
    let openapi = read("openapi.yaml");
    assert_each_alteration_caught(
        &openapi,
        &[
            ("  /api/packs/{packId}:\n", "  /api/packs/{id}:\n"),
            (
                "  /api/web3-link:\n    post:",
                "  /api/web3-link:\n    put:",
            ),
            (
                "  /api/web3-link:\n    post:",
                "  /api/web3-link:\n    get:\n      responses: {}\n    post:",
            ),
            (
                "\npaths:\n",
                "\npaths:\n  /api/other:\n    get:\n      responses: {}\n",
            ),
        ],
        openapi_problems,
    );
}
