//! docs/operations.md's configuration table, per function, against the repository: a row for
//! every function of `functions/src/bin`, and in its last column exactly the variables
//! `template.yaml` sets on that function (beside the globals), so that the table an operator
//! reads cannot fall behind the stack again.

use crate::support;

use std::collections::{BTreeMap, BTreeSet};

use support::{assert_each_alteration_caught, assert_none, parse, resources, text};

const HEADER: &str = "| Function | Reads | The template sets |";

/// The table's rows: each function named in the first column, with the names in backticks of the
/// last (`PREFIX_*` stands for every variable that begins with `PREFIX_`).
fn documented(doc: &str) -> Option<BTreeMap<String, Vec<String>>> {
    let mut lines = doc.lines().skip_while(|line| *line != HEADER).skip(2);
    let mut rows = BTreeMap::new();
    for line in lines.by_ref().take_while(|line| line.starts_with('|')) {
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        let names: Vec<String> = cells[cells.len() - 1]
            .split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_owned)
            .collect();
        for function in cells[0].split(", ") {
            let function = function.trim_end_matches(" (no route)");
            rows.insert(function.to_owned(), names.clone());
        }
    }
    (!rows.is_empty()).then_some(rows)
}

/// Each function's binary with the variables the template sets on it.
fn set_by_template() -> BTreeMap<String, BTreeSet<String>> {
    let template = parse(&support::read("template.yaml"));
    resources(&template, "AWS::Serverless::Function")
        .into_iter()
        .map(|(_, function)| {
            let binary = text(&function["Metadata"]["BuildProperties"]["Binary"]);
            let variables = function["Properties"]["Environment"]["Variables"]
                .as_mapping()
                .map(|variables| variables.keys().map(text).collect())
                .unwrap_or_default();
            (binary, variables)
        })
        .collect()
}

fn covers(name: &str, variable: &str) -> bool {
    match name.strip_suffix('*') {
        Some(prefix) => variable.starts_with(prefix),
        None => name == variable,
    }
}

fn problems(doc: &str) -> Vec<String> {
    let Some(rows) = documented(doc) else {
        return vec![format!("no table headed {HEADER}")];
    };
    let set = set_by_template();
    let binaries: BTreeSet<String> = std::fs::read_dir(format!(
        "{}/../../functions/src/bin",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
    .map(|entry| {
        let name = entry.unwrap().file_name().into_string().unwrap();
        name.trim_end_matches(".rs").to_owned()
    })
    .collect();
    let mut problems = Vec::new();
    for function in binaries.iter().chain(set.keys()) {
        if !rows.contains_key(function) {
            problems.push(format!("{function} has no row"));
        }
    }
    for (function, names) in &rows {
        let Some(variables) = set.get(function) else {
            problems.push(format!("{function} is no function of template.yaml"));
            continue;
        };
        for variable in variables {
            if !names.iter().any(|name| covers(name, variable)) {
                problems.push(format!("{function}: the template sets {variable}"));
            }
        }
        for name in names {
            if !variables.iter().any(|variable| covers(name, variable)) {
                problems.push(format!("{function}: the template does not set {name}"));
            }
        }
    }
    problems
}

#[test]
fn the_configuration_table_has_every_function_and_what_the_template_sets_on_it() {
    assert_none(problems(&support::read("docs/operations.md")));
}

#[test]
fn a_function_or_a_variable_left_out_of_the_table_is_caught() {
    assert_each_alteration_caught(
        &support::read("docs/operations.md"),
        &[
            (
                "| me-wallets, leaderboards, dashboard |",
                "| me-wallets, leaderboards |",
            ),
            (
                "| `AUTH_*`, `QUEUE_RECEIPT_KEY`, `TURNSTILE_SECRET`, `HUMAN_CHECK_HOSTNAMES` |\n",
                "| `AUTH_*`, `TURNSTILE_SECRET`, `HUMAN_CHECK_HOSTNAMES` |\n",
            ),
            (
                "| list-packs, catalog | `CURSOR_SECRET` | `CURSOR_SECRET` |",
                "| list-packs, catalog | `CURSOR_SECRET` | nothing more |",
            ),
            (
                "| get-pack, locker-rooms, misc | nothing more | nothing more |",
                "| get-pack, locker-rooms, misc | nothing more | `CURSOR_SECRET` |",
            ),
        ],
        problems,
    );
}
