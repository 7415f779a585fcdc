//! `template.yaml`'s CORS configuration (API Gateway answers the preflights): what it allows and
//! exposes is `api::http::cors`, the list local-api follows too, and that list covers what the
//! API reads and answers as its OpenAPI document (generated from the handlers) says: every
//! header parameter a browser sends, the session token's `Authorization`, the JSON bodies'
//! `Content-Type`, every response header a script cannot read unexposed, every method. No
//! origin may be `*`, and no credentials (the API reads bearer tokens, not cookies). The
//! checker is shown to catch altered copies of the file.

use crate::support;

use std::collections::BTreeSet;

use api::http::cors;
use serde_norway::Value;
use support::{
    assert_each_alteration_caught, assert_none, listed, names, parse, read, resolved, resources,
};

/// What the OpenAPI document says the API reads and answers.
#[derive(Default)]
struct Documented {
    methods: BTreeSet<String>,
    request_headers: BTreeSet<String>,
    response_headers: BTreeSet<String>,
}

fn documented() -> Documented {
    let document = serde_json::to_value(api::openapi::openapi()).unwrap();
    let components = &document["components"];
    let mut found = Documented::default();
    for item in document["paths"].as_object().unwrap().values() {
        for (method, operation) in item.as_object().unwrap() {
            found.methods.insert(method.to_ascii_lowercase());
            for parameter in operation["parameters"].as_array().into_iter().flatten() {
                let parameter = resolved(components, parameter, "parameters");
                if parameter["in"] == "header" {
                    found
                        .request_headers
                        .extend(names(parameter["name"].as_str()));
                }
            }
            let signed_in = operation["security"].as_array().is_some_and(|schemes| {
                schemes
                    .iter()
                    .any(|scheme| scheme.as_object().is_some_and(|s| !s.is_empty()))
            });
            if signed_in {
                found.request_headers.insert("authorization".into());
            }
            if operation.get("requestBody").is_some() {
                found.request_headers.insert("content-type".into());
            }
            for response in operation["responses"].as_object().unwrap().values() {
                let response = resolved(components, response, "responses");
                if let Some(headers) = response["headers"].as_object() {
                    found
                        .response_headers
                        .extend(names(headers.keys().map(String::as_str)));
                }
            }
        }
    }
    found
}

/// Differences between what `template` (the HTTP API's `CorsConfiguration`) says and what the
/// API needs.
fn cors_problems(template_text: &str) -> Vec<String> {
    let template = parse(template_text);
    let apis = resources(&template, "AWS::Serverless::HttpApi");
    let [(api_name, http_api)] = apis.as_slice() else {
        return vec![format!("{} HTTP APIs, not one", apis.len())];
    };
    let config = &http_api["Properties"]["CorsConfiguration"];
    if !config.is_mapping() {
        return vec![format!("{api_name} has no CorsConfiguration")];
    }
    let mut problems = Vec::new();
    let mut differs = |what: &str, template: BTreeSet<String>, declared: BTreeSet<String>| {
        if template != declared {
            problems.push(format!(
                "{what}: the template has {template:?}, api::http::cors {declared:?}"
            ));
        }
    };
    differs(
        "AllowHeaders",
        names(listed(&config["AllowHeaders"])),
        names(cors::ALLOW_HEADERS.iter().copied()),
    );
    differs(
        "ExposeHeaders",
        names(listed(&config["ExposeHeaders"])),
        names(cors::EXPOSE_HEADERS.iter().copied()),
    );
    let methods: Vec<String> = cors::allow_methods()
        .iter()
        .map(ToString::to_string)
        .collect();
    differs(
        "AllowMethods",
        names(listed(&config["AllowMethods"])),
        names(methods.iter().map(String::as_str)),
    );
    if config["MaxAge"].as_u64() != Some(u64::from(cors::MAX_AGE_SECONDS)) {
        problems.push(format!(
            "MaxAge is {:?}, api::http::cors says {}",
            config["MaxAge"],
            cors::MAX_AGE_SECONDS
        ));
    }
    if config["AllowCredentials"].as_bool() != Some(false) {
        problems.push(
            "AllowCredentials must be false: the API reads a bearer token, never a cookie".into(),
        );
    }
    problems.extend(origin_problems(&template, &config["AllowOrigins"]));
    problems.extend(coverage_problems(
        &names(listed(&config["AllowHeaders"])),
        &names(listed(&config["ExposeHeaders"])),
        &names(listed(&config["AllowMethods"])),
    ));
    problems
}

/// The allowed origins are the stack parameter, each value of which must be an origin, never
/// `*`.
fn origin_problems(template: &Value, origins: &Value) -> Vec<String> {
    let parameter = match origins {
        Value::Tagged(tagged) if tagged.tag.to_string().trim_start_matches('!') == "Ref" => {
            tagged.value.as_str()
        }
        _ => None,
    };
    let Some(parameter) = parameter else {
        return vec![format!(
            "AllowOrigins is {origins:?}, not a stack parameter"
        )];
    };
    let declared = &template["Parameters"][parameter];
    let mut problems = Vec::new();
    if declared["Type"].as_str() != Some("CommaDelimitedList") {
        problems.push(format!("{parameter} is not a CommaDelimitedList"));
    }
    match declared["AllowedPattern"].as_str().map(regex::Regex::new) {
        Some(Ok(pattern)) => {
            for origin in ["*", "https://app.example.com/", "null"] {
                if pattern.is_match(origin) {
                    problems.push(format!("{parameter} admits {origin:?}"));
                }
            }
            for origin in ["https://app.example.com", "http://localhost:5173"] {
                if !pattern.is_match(origin) {
                    problems.push(format!("{parameter} refuses {origin:?}"));
                }
            }
        }
        _ => problems.push(format!("{parameter} has no AllowedPattern that compiles")),
    }
    problems
}

/// What the document shows the API reads and answers, missing from what is allowed, exposed or
/// from the methods (each set's names in lower case).
fn coverage_problems(
    allowed: &BTreeSet<String>,
    exposed: &BTreeSet<String>,
    methods: &BTreeSet<String>,
) -> Vec<String> {
    let documented = documented();
    let server_to_server = names(cors::NOT_FROM_BROWSERS.iter().copied());
    let safelisted = names(cors::SAFELISTED_RESPONSE_HEADERS.iter().copied());
    let mut problems = Vec::new();
    for header in documented.request_headers.difference(allowed) {
        if !server_to_server.contains(header) {
            problems.push(format!("the API reads {header}, not allowed"));
        }
    }
    for header in allowed.intersection(&server_to_server) {
        problems.push(format!("{header} is sent by servers only, yet allowed"));
    }
    for header in documented.response_headers.difference(exposed) {
        if !safelisted.contains(header) {
            problems.push(format!("the API answers {header}, not exposed"));
        }
    }
    for method in documented.methods.difference(methods) {
        problems.push(format!("the API has {method} operations, not allowed"));
    }
    problems
}

#[test]
fn the_templates_cors_is_the_declared_one_and_covers_the_api() {
    assert_none(cors_problems(&read("template.yaml")));
}

#[test]
fn the_cors_checker_catches_altered_templates() {
    assert_each_alteration_caught(
        &read("template.yaml"),
        &[
            ("CorsConfiguration:", "CorsSettings:"),
            ("AllowCredentials: false", "AllowCredentials: true"),
            (
                "AllowOrigins: !Ref CorsAllowedOrigins",
                "AllowOrigins: ['*']",
            ),
            (
                r#"AllowedPattern: "^https?://[a-z0-9.-]+(:[0-9]{1,5})?$""#,
                r#"AllowedPattern: "^.*$""#,
            ),
            ("Human-Check, Idempotency-Key,", "Human-Check,"),
            (
                "Location, RateLimit, RateLimit-Policy",
                "Location, RateLimit-Policy",
            ),
            (
                "[GET, POST, PUT, PATCH, DELETE]",
                "[GET, POST, PUT, DELETE]",
            ),
            ("MaxAge: 7200", "MaxAge: 86400"),
        ],
        cors_problems,
    );
}

/// The declaration itself covers the document (so that local-api, which follows it, does), and
/// every route's method is one a preflight allows.
#[test]
fn the_declaration_covers_what_the_api_reads_and_answers() {
    let methods = cors::allow_methods();
    let method_names: Vec<String> = methods.iter().map(ToString::to_string).collect();
    assert_none(coverage_problems(
        &names(cors::ALLOW_HEADERS.iter().copied()),
        &names(cors::EXPOSE_HEADERS.iter().copied()),
        &names(method_names.iter().map(String::as_str)),
    ));
    for route in api::http::routes::routes() {
        assert!(methods.contains(&route.method), "{route:?}");
    }
}
