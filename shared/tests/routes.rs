//! `shared::http::routes::routes()` (with `DEFAULT_FUNCTION`) is the one declaration of the API's
//! routes; every other place that routes must say the same, and these tests fail when one does not:
//! - `template.yaml`: the HttpApi events of each function (what API Gateway deploys), and the
//!   catch-all (`$default`) event on the default function;
//! - `Cargo.toml`'s `cargo lambda watch` router: each route to its function, every other method of
//!   a routed path and every other path to the default function;
//! - `openapi.yaml`: exactly the routes' paths and methods;
//! - `infra/events/<function>.json`: an event of a route that function serves (and
//!   `release-holds.json`, the schedule's event);
//! - each function's IAM policy: exactly the DynamoDB actions it uses, on only the key prefixes it
//!   reads or writes (`dynamodb:LeadingKeys`), and no server seed (`DRAW#`) within reach but of
//!   the functions that must read one.
//!
//! Each checker takes the file's text and returns the disagreements, so the tests also prove, on
//! altered copies of the real files, that a disagreement is caught.

mod support;

use std::collections::{BTreeMap, BTreeSet};

use serde_norway::Value;
use shared::http::routes::{DEFAULT_FUNCTION, resolve, routes};
use support::{altered, assert_each_alteration_caught, assert_none, read};

/// The methods a client may send to a routed path.
const METHODS: [&str; 7] = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];

/// (method, path template, function).
type Route = (String, String, String);

fn table_routes() -> Vec<Route> {
    let mut routes: Vec<Route> = routes()
        .iter()
        .map(|r| (r.method.to_string(), r.path.clone(), r.function.to_owned()))
        .collect();
    routes.sort();
    routes
}

/// The function the route table sends `method` on the path template `path` to: the route's, or
/// the default function (which answers 404/405).
fn expected_function(method: &str, path: &str) -> &'static str {
    routes()
        .iter()
        .find(|r| r.method.as_str() == method && r.path == path)
        .map_or(DEFAULT_FUNCTION, |r| r.function)
}

fn routed_paths() -> BTreeSet<&'static str> {
    routes().iter().map(|r| r.path.as_str()).collect()
}

/// Problems when `found` (sorted here) is not the route table.
fn compare(place: &str, mut found: Vec<Route>) -> Vec<String> {
    found.sort();
    let expected = table_routes();
    let mut problems = Vec::new();
    for route in &found {
        if !expected.contains(route) {
            problems.push(format!(
                "{place} routes {route:?}, which ROUTES does not have"
            ));
        }
    }
    for route in &expected {
        match found.iter().filter(|r| *r == route).count() {
            0 => problems.push(format!("{place} lacks {route:?} of ROUTES")),
            1 => {}
            n => problems.push(format!("{place} routes {route:?} {n} times")),
        }
    }
    problems
}

fn text(value: &Value) -> Option<String> {
    value.as_str().map(str::to_owned)
}

/// template.yaml: every HttpApi event of every function, against ROUTES; the catch-all event
/// (no Path, no Method) exactly once, on the default function; all events on one API.
fn template_problems(template_text: &str) -> Vec<String> {
    let template: Value = serde_norway::from_str(template_text).expect("template.yaml parses");
    let mut problems = Vec::new();
    let mut routes = Vec::new();
    let mut catch_all = Vec::new();
    let mut apis = BTreeSet::new();
    let resources = template["Resources"].as_mapping().expect("Resources");
    for (name, resource) in resources {
        if resource["Type"].as_str() != Some("AWS::Serverless::Function") {
            continue;
        }
        let name = text(name).unwrap_or_default();
        let Some(binary) = text(&resource["Metadata"]["BuildProperties"]["Binary"]) else {
            problems.push(format!("{name} has no Metadata.BuildProperties.Binary"));
            continue;
        };
        let Some(events) = resource["Properties"]["Events"].as_mapping() else {
            continue;
        };
        for (event_name, event) in events {
            if event["Type"].as_str() != Some("HttpApi") {
                continue;
            }
            let properties = &event["Properties"];
            apis.insert(serde_norway::to_string(&properties["ApiId"]).unwrap());
            match (text(&properties["Method"]), text(&properties["Path"])) {
                (Some(method), Some(path)) => routes.push((method, path, binary.clone())),
                (None, None) => catch_all.push(binary.clone()),
                _ => problems.push(format!(
                    "{name}.{event_name:?}: an HttpApi event has both Path and Method or neither"
                )),
            }
        }
    }
    problems.extend(compare("template.yaml", routes));
    if catch_all != [DEFAULT_FUNCTION] {
        problems.push(format!(
            "template.yaml's catch-all ($default) events are on {catch_all:?}, not on [{:?}] alone",
            DEFAULT_FUNCTION
        ));
    }
    if apis.len() != 1 {
        problems.push(format!(
            "template.yaml's HttpApi events are on several APIs: {apis:?}"
        ));
    }
    problems
}

/// What the `cargo lambda watch` router says for one path: one function for every method, or a
/// function per listed method (an unlisted method is cargo lambda's own 404, not the API's).
#[derive(Debug)]
enum WatchRoutes {
    All(String),
    PerMethod(BTreeMap<String, String>),
}

fn watch_router(cargo_toml: &str) -> Result<BTreeMap<String, WatchRoutes>, String> {
    let document = toml_edit::Document::parse(cargo_toml).map_err(|e| e.to_string())?;
    let router = document["workspace"]["metadata"]["lambda"]["watch"]["router"]
        .as_table_like()
        .ok_or("no [workspace.metadata.lambda.watch.router] table")?;
    let mut paths = BTreeMap::new();
    for (path, item) in router.iter() {
        let routes = if let Some(function) = item.as_str() {
            WatchRoutes::All(function.to_owned())
        } else if let Some(array) = item.as_array() {
            let mut methods = BTreeMap::new();
            for entry in array {
                let entry = entry
                    .as_inline_table()
                    .ok_or(format!("{path}: not a table"))?;
                let field = |name| {
                    entry
                        .get(name)
                        .and_then(|v| v.as_str())
                        .map(str::to_owned)
                        .ok_or(format!("{path}: an entry without `{name}`"))
                };
                if methods
                    .insert(field("method")?, field("function")?)
                    .is_some()
                {
                    return Err(format!("{path}: a method listed twice"));
                }
            }
            WatchRoutes::PerMethod(methods)
        } else {
            return Err(format!("{path}: neither a function nor a list of methods"));
        };
        paths.insert(path.to_owned(), routes);
    }
    Ok(paths)
}

/// Cargo.toml's watch router: the routed paths (the same `{name}` templates, matchit's syntax)
/// and one catch-all `/{*name}`, nothing else; on a routed path every method goes where ROUTES
/// sends it (its route's function, else the default function); the catch-all to the default.
fn router_problems(cargo_toml: &str) -> Vec<String> {
    let router = match watch_router(cargo_toml) {
        Ok(router) => router,
        Err(problem) => return vec![format!("Cargo.toml's watch router: {problem}")],
    };
    let mut problems = Vec::new();
    let routed = routed_paths();
    let is_catch_all = |path: &str| {
        path.strip_prefix("/{*")
            .and_then(|rest| rest.strip_suffix('}'))
            .is_some_and(|name| !name.is_empty() && !name.contains(['/', '{', '}']))
    };
    let catch_alls: Vec<&String> = router.keys().filter(|p| is_catch_all(p)).collect();
    if catch_alls.len() != 1 {
        problems.push(format!(
            "the watch router has {} catch-all paths (`/{{*path}}`), not one",
            catch_alls.len()
        ));
    }
    for path in &routed {
        if !router.contains_key(*path) {
            problems.push(format!("the watch router lacks the path {path}"));
        }
    }
    for (path, routes) in &router {
        let routed_path = routed.contains(path.as_str());
        if !routed_path && !is_catch_all(path) {
            problems.push(format!(
                "the watch router routes {path}, which ROUTES does not have"
            ));
            continue;
        }
        let expected = |method: &str| {
            if routed_path {
                expected_function(method, path)
            } else {
                DEFAULT_FUNCTION
            }
        };
        let methods: BTreeSet<&str> = match routes {
            WatchRoutes::All(_) => METHODS.into_iter().collect(),
            WatchRoutes::PerMethod(map) => METHODS
                .into_iter()
                .chain(map.keys().map(String::as_str))
                .collect(),
        };
        for method in methods {
            let found = match routes {
                WatchRoutes::All(function) => Some(function),
                WatchRoutes::PerMethod(map) => map.get(method),
            };
            if found.map(String::as_str) != Some(expected(method)) {
                problems.push(format!(
                    "the watch router sends {method} {path} to {found:?}, not to {:?}",
                    expected(method)
                ));
            }
        }
    }
    problems
}

/// openapi.yaml: its paths and their operations are exactly the routes.
fn openapi_problems(openapi_text: &str) -> Vec<String> {
    const OPERATIONS: [&str; 8] = [
        "get", "put", "post", "delete", "options", "head", "patch", "trace",
    ];
    let openapi: Value = serde_norway::from_str(openapi_text).expect("openapi.yaml parses");
    let mut operations = Vec::new();
    for (path, item) in openapi["paths"].as_mapping().expect("paths") {
        let path = text(path).unwrap_or_default();
        let Some(item) = item.as_mapping() else {
            continue;
        };
        let mut methods = 0;
        for (key, _) in item {
            let key = text(key).unwrap_or_default();
            if OPERATIONS.contains(&key.as_str()) {
                methods += 1;
                let method = key.to_ascii_uppercase();
                // openapi.yaml names no function: take the route table's, so that only the method
                // and the path are compared.
                let function = expected_function(&method, &path).to_owned();
                operations.push((method, path.clone(), function));
            }
        }
        if methods == 0 {
            operations.push(("(none)".into(), path, String::new()));
        }
    }
    compare("openapi.yaml", operations)
}

#[test]
fn the_route_table_is_sound() {
    let routes = table_routes();
    let unique: BTreeSet<(&str, &str)> = routes
        .iter()
        .map(|(m, p, _)| (m.as_str(), p.as_str()))
        .collect();
    assert_eq!(unique.len(), routes.len(), "a method and path routed twice");
    assert!(
        shared::http::routes::routes()
            .iter()
            .any(|r| r.function == DEFAULT_FUNCTION),
        "the default function serves a route too"
    );
    for route in shared::http::routes::routes() {
        assert!(route.path.starts_with("/api/"), "{}", route.path);
        assert!(METHODS.contains(&route.method.as_str()), "{}", route.method);
    }
}

#[test]
fn template_http_api_events_are_the_route_table() {
    assert_none(template_problems(&read("template.yaml")));
}

#[test]
fn a_template_that_routes_otherwise_is_caught() {
    let template = read("template.yaml");
    assert_each_alteration_caught(
        &template,
        &[
            ("Path: /api/packs/{packId}", "Path: /api/packs/{id}"),
            ("Method: POST", "Method: PUT"),
            ("Binary: get-pack", "Binary: get-packs"),
            // No catch-all ($default) event any more.
            (
                "        NotFound:\n          Type: HttpApi\n          Properties:\n            ApiId: !Ref HttpApi\n",
                "",
            ),
        ],
        template_problems,
    );
}

#[test]
fn cargo_lambda_watch_router_is_the_route_table() {
    assert_none(router_problems(&read("Cargo.toml")));
}

#[test]
fn a_watch_router_that_routes_otherwise_is_caught() {
    let cargo = read("Cargo.toml");
    assert_each_alteration_caught(
        &cargo,
        &[
            (
                "{ method = \"GET\", function = \"get-pack\" }",
                "{ method = \"GET\", function = \"list-packs\" }",
            ),
            // The first HEAD is get-pack's path's: HEAD of it would be cargo lambda's own 404.
            ("  { method = \"HEAD\", function = \"list-packs\" },\n", ""),
            ("\"/api/packs/{packId}\" = [", "\"/api/packs/{id}\" = ["),
            (
                "\"/{*path}\" = \"list-packs\"",
                "\"/{*path}\" = \"web3-link\"",
            ),
            (
                "\"/api/packs\" = \"list-packs\"",
                "\"/api/packs\" = \"get-pack\"",
            ),
        ],
        router_problems,
    );
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

/// `infra/events/<function>.json` is an API Gateway event of a route that function serves: its
/// `routeKey` is the route's, and its path resolves to that route with its `pathParameters`.
///
/// A function that serves several routes has one fixture per route: `<function>.json` and
/// `<function>.<anything>.json`; together they are every route of the function, once each.
#[test]
fn event_fixtures_are_events_of_their_functions_routes() {
    let functions: BTreeSet<&str> = routes().iter().map(|r| r.function).collect();
    let directory = format!("{}/../infra/events", env!("CARGO_MANIFEST_DIR"));
    let files: Vec<String> = std::fs::read_dir(&directory)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    for function in functions {
        let mut covered = Vec::new();
        let fixtures = files.iter().filter(|name| {
            name.as_str() == format!("{function}.json")
                || (name.starts_with(&format!("{function}.")) && name.ends_with(".json"))
        });
        for name in fixtures {
            covered.push(fixture_route(function, name));
        }
        covered.sort_unstable();
        let mut expected: Vec<String> = routes()
            .iter()
            .filter(|r| r.function == function)
            .map(|r| format!("{} {}", r.method, r.path))
            .collect();
        expected.sort_unstable();
        assert_eq!(covered, expected, "{function}: one fixture per route");
    }
}

/// The route key of the fixture `file` of `function`, checked to be an event of that route.
fn fixture_route(function: &str, file: &str) -> String {
    let event: serde_json::Value = serde_json::from_str(&read(&format!("infra/events/{file}")))
        .unwrap_or_else(|e| panic!("infra/events/{file}: {e}"));
    let method = event["requestContext"]["http"]["method"].as_str().unwrap();
    let path = event["rawPath"].as_str().unwrap();
    assert_eq!(event["requestContext"]["http"]["path"].as_str(), Some(path));
    let (route, params) = resolve(&method.parse().unwrap(), path)
        .unwrap_or_else(|e| panic!("{file}: {method} {path}: {e:?}"));
    assert_eq!(route.function, function, "{file}");
    let route_key = format!("{} {}", route.method, route.path);
    assert_eq!(event["routeKey"].as_str(), Some(route_key.as_str()));
    assert_eq!(
        event["requestContext"]["routeKey"].as_str(),
        Some(route_key.as_str())
    );
    let names: Vec<&str> = route.param_names().collect();
    let declared = event["pathParameters"].as_object();
    assert_eq!(
        declared.map_or(0, |p| p.len()),
        names.len(),
        "{file}: pathParameters"
    );
    for name in names {
        assert_eq!(
            event["pathParameters"][name].as_str(),
            Some(params.get(name)),
            "{file}: pathParameters.{name}"
        );
    }
    route_key
}

/// `infra/events/release-holds.json` is what EventBridge Scheduler sends a Lambda target without
/// an `Input` (the function it starts is no route's), and the template schedules that function.
#[test]
fn the_sweep_fixture_is_a_scheduler_event_and_the_sweep_is_scheduled() {
    let event: serde_json::Value =
        serde_json::from_str(&read("infra/events/release-holds.json")).unwrap();
    assert_eq!(event["source"], "aws.scheduler");
    assert_eq!(event["detail-type"], "Scheduled Event");
    assert_eq!(event["detail"], "{}");
    assert!(
        event["resources"][0]
            .as_str()
            .is_some_and(|arn| arn.starts_with("arn:aws:scheduler:")),
        "{event}"
    );
    assert!(
        routes().iter().all(|r| r.function != "release-holds"),
        "release-holds is not routed"
    );
    let template: Value = serde_norway::from_str(&read("template.yaml")).unwrap();
    let function = &template["Resources"]["ReleaseHoldsFunction"];
    assert_eq!(
        function["Metadata"]["BuildProperties"]["Binary"].as_str(),
        Some("release-holds")
    );
    let events = function["Properties"]["Events"].as_mapping().unwrap();
    assert_eq!(events.len(), 1, "only its schedule: {events:?}");
    let (_, schedule) = events.iter().next().unwrap();
    assert_eq!(schedule["Type"].as_str(), Some("ScheduleV2"));
    assert_eq!(
        schedule["Properties"]["ScheduleExpression"].as_str(),
        Some("rate(1 minute)")
    );
    // The sweep stops starting batches after 45 s (functions/release-holds/src/main.rs).
    assert_eq!(function["Properties"]["Timeout"].as_u64(), Some(60));
}

/// The key prefixes only some functions may reach, those functions, and those that may only
/// read them: a pack's draw inputs (its server seed, `DRAW#`), money (balances and debits,
/// `CASH#`; credit entries, `CREDIT#`) and Cash top-ups (`TOPUP#`).
const GUARDED: [(&str, &[&str], &[&str]); 4] = [
    (
        shared::store::schema::DRAW_PREFIX,
        &["get-pack", "open-pack"],
        &["release-holds"],
    ),
    (
        shared::store::schema::CASH_PREFIX,
        &["complete-purchase", "stripe-webhook"],
        &["start-purchase", "me-cash"],
    ),
    ("CREDIT#", &["stripe-webhook"], &[]),
    (
        shared::store::schema::TOPUP_PREFIX,
        &["cash-top-ups", "stripe-webhook"],
        &[],
    ),
];

/// The actions that read (or condition on) an item and never change it.
const READ_ACTIONS: [&str; 4] = [
    "dynamodb:BatchGetItem",
    "dynamodb:GetItem",
    "dynamodb:ConditionCheckItem",
    "dynamodb:Query",
];

/// The indexes functions may query; no draw item is in any (GSI1: listed packs, GSI2: holds
/// and opened purchases, GSI3: the fan's purchases and ledger).
const INDEX_RESOURCES: [&str; 3] = [
    "${Table.Arn}/index/GSI1",
    "${Table.Arn}/index/GSI2",
    "${Table.Arn}/index/GSI3",
];

/// The indexes that hold guarded keys (GSI3: ledger entries under `CASH#<userId>`): a Query of
/// one must be held to its key prefixes (`dynamodb:LeadingKeys`, the index's partition key).
const GUARDED_INDEXES: [&str; 1] = ["${Table.Arn}/index/GSI3"];

/// The IAM actions of the DynamoDB calls the store makes (a `TransactWriteItems` is authorised
/// per contained action: `UpdateItem`, `PutItem`; there is no IAM action of that name).
const DYNAMODB_ACTIONS: [&str; 6] = [
    "dynamodb:BatchGetItem",
    "dynamodb:GetItem",
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:Query",
    "dynamodb:ConditionCheckItem",
];

/// Problems of the functions' policies: a statement that is not an `Allow` of listed DynamoDB
/// actions, on an index or on the table restricted (`ForAllValues:StringLike`
/// `dynamodb:LeadingKeys`) to literal key prefixes (`USER#*`); a [`GUARDED`] prefix in the
/// policy of a function not listed with it.
fn policy_problems(template_text: &str) -> Vec<String> {
    let template: Value = serde_norway::from_str(template_text).expect("template.yaml parses");
    let mut problems = Vec::new();
    for (_, resource) in template["Resources"].as_mapping().expect("Resources") {
        if resource["Type"].as_str() != Some("AWS::Serverless::Function") {
            continue;
        }
        let function = text(&resource["Metadata"]["BuildProperties"]["Binary"]).unwrap_or_default();
        let policies = resource["Properties"]["Policies"].as_sequence();
        for policy in policies.into_iter().flatten() {
            let Some(statements) = policy["Statement"].as_sequence() else {
                problems.push(format!("{function}: a policy that is not a statement list"));
                continue;
            };
            for statement in statements {
                problems.extend(statement_problems(&function, statement));
            }
        }
    }
    problems
}

fn statement_problems(function: &str, statement: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    if statement["Effect"].as_str() != Some("Allow") {
        problems.push(format!("{function}: a statement that is not an Allow"));
    }
    let actions: Vec<String> = match &statement["Action"] {
        Value::String(action) => vec![action.clone()],
        Value::Sequence(actions) => actions.iter().filter_map(text).collect(),
        other => {
            problems.push(format!("{function}: Action {other:?}"));
            Vec::new()
        }
    };
    for action in &actions {
        if !DYNAMODB_ACTIONS.contains(&action.as_str()) {
            problems.push(format!(
                "{function}: action {action} is not one the store uses"
            ));
        }
    }
    let resource = &statement["Resource"];
    let yaml = |text: &str| serde_norway::from_str::<Value>(text).unwrap();
    let on_table = *resource == yaml("!GetAtt Table.Arn");
    let is = |index: &&str| *resource == yaml(&format!("!Sub \"{index}\""));
    let on_index = INDEX_RESOURCES.iter().any(is);
    if on_index {
        if actions.iter().any(|a| a != "dynamodb:Query") {
            problems.push(format!(
                "{function}: only Query on an index, not {actions:?}"
            ));
        }
        // An index of unguarded keys may be queried whole; one with guarded keys, or a query
        // held to prefixes anyway, is checked as the table is.
        if statement["Condition"].is_null() && !GUARDED_INDEXES.iter().any(is) {
            return problems;
        }
    }
    if !on_table && !on_index {
        problems.push(format!(
            "{function}: resource {resource:?} is neither the table nor an index"
        ));
        return problems;
    }
    let condition = &statement["Condition"];
    let Some(prefixes) = condition["ForAllValues:StringLike"]["dynamodb:LeadingKeys"].as_sequence()
    else {
        problems.push(format!(
            "{function}: {actions:?} on {resource:?} without ForAllValues:StringLike dynamodb:LeadingKeys"
        ));
        return problems;
    };
    if condition.as_mapping().map(|c| c.len()) != Some(1)
        || condition["ForAllValues:StringLike"]
            .as_mapping()
            .map(|c| c.len())
            != Some(1)
    {
        problems.push(format!(
            "{function}: a condition beside dynamodb:LeadingKeys"
        ));
    }
    for prefix in prefixes {
        let prefix = text(prefix).unwrap_or_default();
        // `<LITERAL>#*`, the literal without wildcards: any other pattern may match `DRAW#...`.
        let literal = prefix.strip_suffix("#*").unwrap_or("*");
        if literal.is_empty() || literal.contains(['*', '?', '#']) {
            problems.push(format!(
                "{function}: key pattern {prefix:?} is not a literal prefix `NAME#*`"
            ));
        } else if let Some((guarded, _, _)) = GUARDED.iter().find(|(guarded, allowed, readers)| {
            let reads_only = actions.iter().all(|a| READ_ACTIONS.contains(&a.as_str()));
            format!("{literal}#") == *guarded
                && !allowed.contains(&function)
                && !(reads_only && readers.contains(&function))
        }) {
            problems.push(format!("{function}: may reach {guarded} keys ({prefix})"));
        }
    }
    problems
}

#[test]
fn no_function_may_reach_what_it_does_not_use() {
    assert_none(policy_problems(&read("template.yaml")));
}

#[test]
fn a_policy_that_reaches_further_is_caught() {
    let template = read("template.yaml");
    let start = "  StartPurchaseFunction:";
    let (before, after) = template.split_at(template.find(start).unwrap());
    for (from, to) in [
        // The server seeds, or money, within reach of the start.
        (
            "                    - \"USER#*\"\n",
            "                    - \"USER#*\"\n                    - \"DRAW#*\"\n",
        ),
        (
            "                    - \"USER#*\"\n",
            "                    - \"USER#*\"\n                    - \"CASH#*\"\n",
        ),
        // Any key.
        (
            "                    - \"USER#*\"\n",
            "                    - \"*\"\n",
        ),
        (
            "                    - \"USER#*\"\n",
            "                    - \"D*\"\n",
        ),
        // No key condition at all.
        (
            "              Condition:\n                ForAllValues:StringLike:\n                  dynamodb:LeadingKeys:\n                    - \"USER#*\"\n",
            "",
        ),
        // Every action; and one that is no IAM action.
        ("Action: dynamodb:PutItem", "Action: dynamodb:*"),
        (
            "Action: dynamodb:PutItem",
            "Action: dynamodb:TransactWriteItems",
        ),
        // Another resource.
        (
            "Resource: !Sub \"${Table.Arn}/index/GSI2\"",
            "Resource: \"*\"",
        ),
    ] {
        let altered = format!("{before}{}", altered(after, from, to));
        assert!(
            !policy_problems(&altered).is_empty(),
            "{from:?} -> {to:?} went unnoticed"
        );
    }
}

/// Each function may use only the DynamoDB actions it needs, on only what it reads or writes
/// (`dynamodb:LeadingKeys`); read `shared/src/store/dynamo/*.rs` for the calls:
/// - list-packs: `Query` of the listing index;
/// - get-pack: `BatchGetItem` of pack and draw items (`PACK#`, `DRAW#`);
/// - web3-link: `UpdateItem` of the user's link (`USER#`);
/// - start-purchase: `BatchGetItem` of the pack, the buyer's count and the purchase, and of the
///   pack's shares; a transaction of `UpdateItem`s (a share, count) and a `PutItem` (purchase);
///   before answering sold out, a `Query` of the holds index and the releases' `UpdateItem`s
///   (purchase, share, count) and the summary's `UpdateItem`; at the buyer's limit, a `Query` of
///   their purchases (`USER#`);
/// - get-purchase: `GetItem` of the purchase (`USER#`) and of the pack's published seed
///   (`PACK#`);
/// - complete-purchase: `BatchGetItem` of the purchase (`USER#`), the balances (`CASH#`) and the
///   pack (`PACK#`, for its sale end); a transaction
///   of `UpdateItem`s (purchase, balances) and a `PutItem` (debit); `GetItem` of the purchase
///   after a lost race; the release of an expired hold (`UpdateItem`s, the pack's `PACK#`);
/// - release-holds: `Query` of the listing and holds indexes, the releases' `UpdateItem`s, the
///   shares' `BatchGetItem` and the summaries' `UpdateItem`s (`PACK#`); a revealed pack's draw
///   item (`DRAW#`, its seed) read once, to publish the seed on the pack's item;
/// - open-pack: `BatchGetItem` of the purchase (`USER#`) and the pack's draw inputs (`DRAW#`),
///   then one `UpdateItem` of the purchase;
/// - me-purchases: `Query` of the caller's `USER#` partitions of GSI3 (purchases) and GSI2
///   (opened purchases), and `BatchGetItem` of packs' public items (`PACK#`: a published seed);
/// - me-cash: `GetItem` of the caller's balances and `Query` of their `CASH#` partition of GSI3
///   (the ledger): reads only, no write to `CASH#`;
/// - cash-top-ups: `PutItem`, `UpdateItem` (its Checkout Session) and `GetItem` of top-ups
///   (`TOPUP#`) only;
/// - stripe-webhook: `GetItem` of the top-up (`TOPUP#`), the balance (`CASH#`) and a credit entry
///   in the way (`CREDIT#`); the completion's transaction of a `PutItem` (the credit entry,
///   `CREDIT#`) and `UpdateItem`s (the balance, `CASH#`; the top-up, `TOPUP#`).
#[test]
fn each_function_has_only_its_dynamodb_permission() {
    let template: Value = serde_norway::from_str(&read("template.yaml")).unwrap();
    let expected: Value = serde_norway::from_str(
        r#"
list-packs:
  - Statement:
      - Effect: Allow
        Action: dynamodb:Query
        Resource: !Sub "${Table.Arn}/index/GSI1"
get-pack:
  - Statement:
      - Effect: Allow
        Action: dynamodb:BatchGetItem
        Resource: !GetAtt Table.Arn
        Condition:
          ForAllValues:StringLike:
            dynamodb:LeadingKeys:
              - "PACK#*"
              - "DRAW#*"
web3-link:
  - Statement:
      - Effect: Allow
        Action: dynamodb:UpdateItem
        Resource: !GetAtt Table.Arn
        Condition:
          ForAllValues:StringLike:
            dynamodb:LeadingKeys:
              - "USER#*"
start-purchase:
  - Statement:
      - Effect: Allow
        Action:
          - dynamodb:BatchGetItem
          - dynamodb:UpdateItem
        Resource: !GetAtt Table.Arn
        Condition:
          ForAllValues:StringLike:
            dynamodb:LeadingKeys:
              - "PACK#*"
              - "USER#*"
      - Effect: Allow
        Action:
          - dynamodb:BatchGetItem
          - dynamodb:ConditionCheckItem
        Resource: !GetAtt Table.Arn
        Condition:
          ForAllValues:StringLike:
            dynamodb:LeadingKeys:
              - "CASH#*"
      - Effect: Allow
        Action: dynamodb:PutItem
        Resource: !GetAtt Table.Arn
        Condition:
          ForAllValues:StringLike:
            dynamodb:LeadingKeys:
              - "USER#*"
      - Effect: Allow
        Action: dynamodb:Query
        Resource: !Sub "${Table.Arn}/index/GSI2"
      - Effect: Allow
        Action: dynamodb:Query
        Resource: !GetAtt Table.Arn
        Condition:
          ForAllValues:StringLike:
            dynamodb:LeadingKeys:
              - "USER#*"
get-purchase:
  - Statement:
      - Effect: Allow
        Action: dynamodb:GetItem
        Resource: !GetAtt Table.Arn
        Condition:
          ForAllValues:StringLike:
            dynamodb:LeadingKeys:
              - "USER#*"
              - "PACK#*"
complete-purchase:
  - Statement:
      - Effect: Allow
        Action:
          - dynamodb:BatchGetItem
          - dynamodb:UpdateItem
        Resource: !GetAtt Table.Arn
        Condition:
          ForAllValues:StringLike:
            dynamodb:LeadingKeys:
              - "PACK#*"
              - "USER#*"
              - "CASH#*"
      - Effect: Allow
        Action: dynamodb:GetItem
        Resource: !GetAtt Table.Arn
        Condition:
          ForAllValues:StringLike:
            dynamodb:LeadingKeys:
              - "USER#*"
      - Effect: Allow
        Action: dynamodb:PutItem
        Resource: !GetAtt Table.Arn
        Condition:
          ForAllValues:StringLike:
            dynamodb:LeadingKeys:
              - "CASH#*"
open-pack:
  - Statement:
      - Effect: Allow
        Action: dynamodb:BatchGetItem
        Resource: !GetAtt Table.Arn
        Condition:
          ForAllValues:StringLike:
            dynamodb:LeadingKeys:
              - "USER#*"
              - "DRAW#*"
      - Effect: Allow
        Action: dynamodb:UpdateItem
        Resource: !GetAtt Table.Arn
        Condition:
          ForAllValues:StringLike:
            dynamodb:LeadingKeys:
              - "USER#*"
release-holds:
  - Statement:
      - Effect: Allow
        Action: dynamodb:Query
        Resource: !Sub "${Table.Arn}/index/GSI1"
      - Effect: Allow
        Action: dynamodb:Query
        Resource: !Sub "${Table.Arn}/index/GSI2"
      - Effect: Allow
        Action: dynamodb:BatchGetItem
        Resource: !GetAtt Table.Arn
        Condition:
          ForAllValues:StringLike:
            dynamodb:LeadingKeys:
              - "PACK#*"
              - "DRAW#*"
      - Effect: Allow
        Action: dynamodb:UpdateItem
        Resource: !GetAtt Table.Arn
        Condition:
          ForAllValues:StringLike:
            dynamodb:LeadingKeys:
              - "PACK#*"
              - "USER#*"
me-purchases:
  - Statement:
      - Effect: Allow
        Action: dynamodb:Query
        Resource: !Sub "${Table.Arn}/index/GSI3"
        Condition:
          ForAllValues:StringLike:
            dynamodb:LeadingKeys:
              - "USER#*"
      - Effect: Allow
        Action: dynamodb:Query
        Resource: !Sub "${Table.Arn}/index/GSI2"
        Condition:
          ForAllValues:StringLike:
            dynamodb:LeadingKeys:
              - "USER#*"
      - Effect: Allow
        Action: dynamodb:BatchGetItem
        Resource: !GetAtt Table.Arn
        Condition:
          ForAllValues:StringLike:
            dynamodb:LeadingKeys:
              - "PACK#*"
me-cash:
  - Statement:
      - Effect: Allow
        Action: dynamodb:GetItem
        Resource: !GetAtt Table.Arn
        Condition:
          ForAllValues:StringLike:
            dynamodb:LeadingKeys:
              - "CASH#*"
      - Effect: Allow
        Action: dynamodb:Query
        Resource: !Sub "${Table.Arn}/index/GSI3"
        Condition:
          ForAllValues:StringLike:
            dynamodb:LeadingKeys:
              - "CASH#*"
cash-top-ups:
  - Statement:
      - Effect: Allow
        Action:
          - dynamodb:GetItem
          - dynamodb:PutItem
          - dynamodb:UpdateItem
        Resource: !GetAtt Table.Arn
        Condition:
          ForAllValues:StringLike:
            dynamodb:LeadingKeys:
              - "TOPUP#*"
stripe-webhook:
  - Statement:
      - Effect: Allow
        Action: dynamodb:GetItem
        Resource: !GetAtt Table.Arn
        Condition:
          ForAllValues:StringLike:
            dynamodb:LeadingKeys:
              - "TOPUP#*"
              - "CASH#*"
              - "CREDIT#*"
      - Effect: Allow
        Action: dynamodb:UpdateItem
        Resource: !GetAtt Table.Arn
        Condition:
          ForAllValues:StringLike:
            dynamodb:LeadingKeys:
              - "TOPUP#*"
              - "CASH#*"
      - Effect: Allow
        Action: dynamodb:PutItem
        Resource: !GetAtt Table.Arn
        Condition:
          ForAllValues:StringLike:
            dynamodb:LeadingKeys:
              - "CREDIT#*"
"#,
    )
    .unwrap();
    let mut policies = serde_norway::Mapping::new();
    for (_, resource) in template["Resources"].as_mapping().unwrap() {
        if resource["Type"].as_str() == Some("AWS::Serverless::Function") {
            policies.insert(
                resource["Metadata"]["BuildProperties"]["Binary"].clone(),
                resource["Properties"]["Policies"].clone(),
            );
        }
    }
    assert_eq!(Value::Mapping(policies), expected);
    // The prefixes are the store's.
    assert_eq!(shared::store::schema::DRAW_PREFIX, "DRAW#");
    assert_eq!(shared::store::schema::pack_pk("p"), "PACK#p");
    assert_eq!(shared::store::schema::user_pk("u"), "USER#u");
    assert_eq!(shared::store::schema::GSI2, "GSI2");
    assert_eq!(shared::store::schema::GSI3, "GSI3");
    assert_eq!(shared::store::schema::cash_pk("u"), "CASH#u");
    assert_eq!(shared::store::schema::topup_pk("t"), "TOPUP#t");
    assert_eq!(shared::store::schema::credit_pk("r"), "CREDIT#r");
}

/// Whether the policy checks catch `template` with `from` made `to` in the part that begins
/// with `resource` (a function's resource name, as `  MeCashFunction:`).
fn caught_in(template: &str, resource: &str, from: &str, to: &str) -> bool {
    let (before, after) = template.split_at(template.find(resource).unwrap());
    !policy_problems(&format!("{before}{}", altered(after, from, to))).is_empty()
}

#[test]
fn the_fans_cash_reads_cannot_reach_further() {
    let template = read("template.yaml");
    for (from, to) in [
        // A write to money.
        ("Action: dynamodb:GetItem", "Action: dynamodb:UpdateItem"),
        // The ledger's index queried whole (every fan's purchases and ledger).
        (
            "              Resource: !Sub \"${Table.Arn}/index/GSI3\"\n              Condition:\n                ForAllValues:StringLike:\n                  dynamodb:LeadingKeys:\n                    - \"CASH#*\"\n",
            "              Resource: !Sub \"${Table.Arn}/index/GSI3\"\n",
        ),
    ] {
        assert!(
            caught_in(&template, "  MeCashFunction:", from, to),
            "{from:?} -> {to:?} went unnoticed"
        );
    }
    // The purchases' function reading the ledger through the index.
    let (user, cash) = (
        "                    - \"USER#*\"\n",
        "                    - \"CASH#*\"\n",
    );
    assert!(
        caught_in(&template, "  MePurchasesFunction:", user, cash),
        "me-purchases reading CASH#"
    );
}

/// Money and top-ups stay out of reach of the top-up function, and top-ups out of reach of the
/// others: each alteration is caught.
#[test]
fn a_top_up_policy_that_reaches_further_is_caught() {
    let template = read("template.yaml");
    let topups = "                    - \"TOPUP#*\"\n";
    for extra in ["CASH#*", "CREDIT#*"] {
        let wider = format!("{topups}                    - \"{extra}\"\n");
        assert!(
            caught_in(&template, "  CashTopUpsFunction:", topups, &wider),
            "cash-top-ups reaching {extra} went unnoticed"
        );
    }
    // A purchase function reaching top-ups.
    let user = "                    - \"USER#*\"\n";
    assert!(caught_in(
        &template,
        "  StartPurchaseFunction:",
        user,
        &format!("{user}{topups}")
    ));
}
