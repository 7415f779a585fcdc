//! infra/events: an API Gateway HTTP API event (payload 2.0) of each route, as API Gateway sends
//! it to the route's function, for `cargo lambda invoke --data-file` and the functions' tests.
//! The file is `<function>.json`, or `<function>.<name>.json` for a function's other routes.

use serde::{Serialize, Serializer};

use crate::examples::{fixture_name, path_parameters};
use crate::routes::RouteSpec;

pub const DIRECTORY: &str = "infra/events";

/// A JSON object whose keys keep their order.
struct Object<'a>(Vec<(&'a str, &'a str)>);

impl Object<'_> {
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Serialize for Object<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().copied())
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Event<'a> {
    version: &'a str,
    route_key: &'a str,
    raw_path: &'a str,
    raw_query_string: &'a str,
    #[serde(skip_serializing_if = "Object::is_empty")]
    query_string_parameters: Object<'a>,
    headers: Object<'a>,
    request_context: RequestContext<'a>,
    #[serde(skip_serializing_if = "Object::is_empty")]
    path_parameters: Object<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    body: Option<&'a str>,
    is_base64_encoded: bool,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RequestContext<'a> {
    account_id: &'a str,
    api_id: &'a str,
    domain_name: &'a str,
    domain_prefix: &'a str,
    http: Http<'a>,
    request_id: &'a str,
    route_key: &'a str,
    stage: &'a str,
    time: &'a str,
    time_epoch: u64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Http<'a> {
    method: &'a str,
    path: &'a str,
    protocol: &'a str,
    source_ip: &'a str,
    user_agent: &'a str,
}

const HOST: &str = "abc123.execute-api.us-east-1.amazonaws.com";
const SOURCE_IP: &str = "203.0.113.7";

/// (file name, contents) of every route's fixture.
pub fn fixtures(routes: &[RouteSpec]) -> Result<Vec<(String, String)>, String> {
    routes.iter().map(|route| fixture(route, routes)).collect()
}

fn fixture(route: &RouteSpec, routes: &[RouteSpec]) -> Result<(String, String), String> {
    let extra = &route.extra;
    let name = fixture_name(route, routes);
    let parameters = path_parameters(route)?;
    // `param_names` is in template order, so the values fill the `{name}` segments in turn.
    let mut values = parameters.iter().map(|(_, value)| *value);
    let path = route
        .path
        .split('/')
        .map(|segment| {
            if segment.starts_with('{') {
                values.next().unwrap_or_default()
            } else {
                segment
            }
        })
        .collect::<Vec<_>>()
        .join("/");
    let query: Vec<(&str, &str)> = extra
        .query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| pair.split_once('=').unwrap_or((pair, "")))
        .collect();
    let mut headers = vec![
        ("accept", "application/json"),
        ("host", HOST),
        ("user-agent", "curl/8.5.0"),
        ("x-forwarded-for", SOURCE_IP),
        ("x-forwarded-port", "443"),
        ("x-forwarded-proto", "https"),
    ];
    if route.signed_in {
        headers.push(("authorization", "Bearer <TOKEN>"));
    }
    if extra.body.is_some() {
        headers.push(("content-type", "application/json"));
    }
    if let Some(key) = extra.idempotency_key {
        headers.push(("idempotency-key", key));
    }
    for &(name, value) in extra.headers {
        match headers.iter_mut().find(|(known, _)| *known == name) {
            Some(header) => header.1 = value,
            None => headers.push((name, value)),
        }
    }
    let user_agent = headers
        .iter()
        .find(|(name, _)| *name == "user-agent")
        .map_or("", |(_, value)| *value);
    let key = route.key();
    let event = Event {
        version: "2.0",
        route_key: &key,
        raw_path: &path,
        raw_query_string: extra.query,
        query_string_parameters: Object(query),
        request_context: RequestContext {
            account_id: "123456789012",
            api_id: "abc123",
            domain_name: HOST,
            domain_prefix: "abc123",
            http: Http {
                method: &route.method,
                path: &path,
                protocol: "HTTP/1.1",
                source_ip: SOURCE_IP,
                user_agent,
            },
            request_id: "JKJbFjXQvHcEJ7g=",
            route_key: &key,
            stage: "$default",
            time: "21/Nov/2026:12:00:00 +0000",
            time_epoch: 1_795_262_400_000,
        },
        headers: Object(headers),
        path_parameters: Object(parameters),
        body: extra.body,
        is_base64_encoded: false,
    };
    let json = serde_json::to_string_pretty(&event).map_err(|e| format!("{name}: {e}"))?;
    Ok((name, json + "\n"))
}
