//! The operators' routes (issue 46's events and endpoints, issue 47's revocations) are behind API
//! Gateway's IAM authorizer, and only they: an operation under the OpenAPI document's
//! `operatorIam` scheme has `Auth: Authorizer: AWS_IAM` on its template event, every other none,
//! and the HTTP API enables the authorizer (SAM refuses the template otherwise).

use crate::support;

use serde_norway::Value;
use support::{assert_each_alteration_caught, assert_none, parse, read, resources};

/// The routes (`METHOD path`) whose operation asks for `operatorIam`.
fn operator_routes() -> Vec<String> {
    let document = serde_json::to_value(api::openapi::openapi()).unwrap();
    let mut routes = Vec::new();
    for (path, item) in document["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            let operators = operation["security"].as_array().is_some_and(|schemes| {
                schemes
                    .iter()
                    .any(|scheme| scheme.get(api::openapi::OPERATOR_IAM).is_some())
            });
            if operators {
                routes.push(format!("{} {path}", method.to_uppercase()));
            }
        }
    }
    routes
}

fn problems(template_text: &str) -> Vec<String> {
    let template = parse(template_text);
    let mut problems = Vec::new();
    for (name, api) in resources(&template, "AWS::Serverless::HttpApi") {
        if api["Properties"]["Auth"]["EnableIamAuthorizer"] != Value::Bool(true) {
            problems.push(format!("{name} does not enable the IAM authorizer"));
        }
    }
    let operators = operator_routes();
    let mut seen = Vec::new();
    for (name, function) in resources(&template, "AWS::Serverless::Function") {
        let Some(events) = function["Properties"]["Events"].as_mapping() else {
            continue;
        };
        for (event_name, event) in events {
            let properties = &event["Properties"];
            let (Some(method), Some(path)) =
                (properties["Method"].as_str(), properties["Path"].as_str())
            else {
                continue;
            };
            let route = format!("{method} {path}");
            let iam = properties["Auth"]["Authorizer"].as_str() == Some("AWS_IAM");
            match (operators.contains(&route), iam) {
                (true, false) => problems.push(format!(
                    "{name}.{event_name:?}: {route} is an operators' route without AWS_IAM"
                )),
                (false, true) => problems.push(format!(
                    "{name}.{event_name:?}: {route} is no operators' route but has AWS_IAM"
                )),
                _ => {}
            }
            if iam {
                seen.push(route);
            }
        }
    }
    for route in operators {
        if !seen.contains(&route) {
            problems.push(format!(
                "{route}: an operators' route the template does not route"
            ));
        }
    }
    problems
}

#[test]
fn only_the_operators_routes_are_behind_the_iam_authorizer() {
    assert!(operator_routes().len() >= 3, "{:?}", operator_routes());
    assert_none(problems(&read("template.yaml")));
}

#[test]
fn an_operators_route_left_open_or_the_authorizer_off_is_caught() {
    assert_each_alteration_caught(
        &read("template.yaml"),
        &[
            ("EnableIamAuthorizer: true", "EnableIamAuthorizer: false"),
            (
                "            Path: /api/events\n            Method: GET\n            # Operators only: SigV4, checked by API Gateway (docs/events.md).\n            Auth:\n              Authorizer: AWS_IAM\n",
                "            Path: /api/events\n            Method: GET\n",
            ),
            (
                "            Path: /api/me/events\n            Method: GET\n",
                "            Path: /api/me/events\n            Method: GET\n            Auth:\n              Authorizer: AWS_IAM\n",
            ),
        ],
        problems,
    );
}
