//! The route declaration, read in one place: everything the generator writes follows from
//! [`routes`] (each route with its operation in the OpenAPI document and its extras) and
//! [`default_function`]. When the declaration changes shape, only this file changes.

use serde_json::Value;

use crate::extras::{self, RouteExtra};

/// The methods a client may send to a routed path: the watch router lists each of them.
pub const METHODS: [&str; 7] = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];

/// One route: a method on a path template (`/api/packs/{packId}`), served by one function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteSpec {
    pub function: String,
    pub method: String,
    pub path: String,
    /// What its event and fixture need besides ([`crate::extras`]).
    pub extra: RouteExtra,
    /// Its operation's id (`getPack`).
    pub operation_id: String,
    /// Whether its operation asks for a session token.
    pub signed_in: bool,
    /// Whether it is an operators' route: API Gateway's `AWS_IAM` authorizer in front of it.
    pub operator: bool,
    /// Its path parameters' examples, by name (`None`: its declaration gives none).
    pub examples: Vec<(String, Option<String>)>,
}

impl RouteSpec {
    /// `GET /api/packs/{packId}`: API Gateway's route key.
    pub fn key(&self) -> String {
        format!("{} {}", self.method, self.path)
    }
}

/// Every route, in declaration order (the order of the generated events and router paths).
pub fn routes() -> Vec<RouteSpec> {
    let document =
        serde_json::to_value(api::openapi::openapi()).expect("the OpenAPI document is JSON");
    api::http::routes::routes()
        .iter()
        .map(|route| {
            let method = route.method.to_string();
            let operation = &document["paths"][&route.path][method.to_lowercase()];
            let operation_id = operation["operationId"].as_str().unwrap_or_default();
            // An operation's own `security`, else the document's.
            let security = [&operation["security"], &document["security"]]
                .into_iter()
                .find(|security| !security.is_null())
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let requires = |scheme: &str| security.iter().any(|s| s.get(scheme).is_some());
            RouteSpec {
                function: route.function.to_owned(),
                extra: extras::extra(route.function, operation_id),
                operation_id: operation_id.to_owned(),
                signed_in: requires(api::openapi::SESSION_TOKEN),
                operator: requires(api::openapi::OPERATOR_IAM),
                examples: route
                    .param_names()
                    .map(|name| (name.to_owned(), path_example(operation, name)))
                    .collect(),
                method,
                path: route.path.clone(),
            }
        })
        .collect()
}

/// The example of `operation`'s path parameter `name`: the parameter's, else its schema's.
fn path_example(operation: &Value, name: &str) -> Option<String> {
    let parameter = operation["parameters"]
        .as_array()?
        .iter()
        .find(|parameter| parameter["in"] == "path" && parameter["name"] == name)?;
    [&parameter["example"], &parameter["schema"]["example"]]
        .into_iter()
        .find_map(Value::as_str)
        .map(str::to_owned)
}

/// The function that also answers every request no route matches (API Gateway's `$default`
/// route): its JSON 404 and 405.
pub fn default_function() -> String {
    api::http::routes::DEFAULT_FUNCTION.to_owned()
}

/// What the generated files assume of the declaration: no method and path twice, methods a
/// client sends, paths under `/api/`, and a default function that serves a route (so that it is
/// deployed with events of its own).
pub fn problems(routes: &[RouteSpec], default: &str) -> Vec<String> {
    let mut problems = Vec::new();
    for (i, route) in routes.iter().enumerate() {
        if routes[..i]
            .iter()
            .any(|earlier| earlier.key() == route.key())
        {
            problems.push(format!("{} is declared twice", route.key()));
        }
        if !METHODS.contains(&route.method.as_str()) {
            problems.push(format!("{}: not one of {METHODS:?}", route.key()));
        }
        if !route.path.starts_with("/api/") {
            problems.push(format!("{}: not under /api/", route.key()));
        }
    }
    if !routes.iter().any(|route| route.function == default) {
        problems.push(format!("the default function {default} serves no route"));
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    fn route(method: &str, path: &str, function: &str) -> RouteSpec {
        RouteSpec {
            function: function.into(),
            method: method.into(),
            path: path.into(),
            extra: RouteExtra::NONE,
            operation_id: "listPacks".into(),
            signed_in: false,
            operator: false,
            examples: Vec::new(),
        }
    }

    #[test]
    fn the_declaration_is_sound() {
        assert_eq!(
            problems(&routes(), &default_function()),
            Vec::<String>::new()
        );
    }

    #[test]
    fn an_unsound_declaration_is_caught() {
        let sound = vec![route("GET", "/api/packs", "list-packs")];
        for (routes, default) in [
            (
                vec![sound[0].clone(), route("GET", "/api/packs", "get-pack")],
                "list-packs",
            ),
            (
                vec![route("TRACE", "/api/packs", "list-packs")],
                "list-packs",
            ),
            (vec![route("GET", "/packs", "list-packs")], "list-packs"),
            (sound.clone(), "get-pack"),
        ] {
            assert!(!problems(&routes, default).is_empty(), "{routes:?}");
        }
        assert!(problems(&sound, "list-packs").is_empty());
    }
}
