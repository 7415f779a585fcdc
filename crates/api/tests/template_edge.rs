//! `template.yaml`'s edge (docs/edge.md): the CloudFront distribution's behaviors and cache
//! policies. They are matched as CloudFront matches them (the first pattern that matches the
//! path) against every operation of the OpenAPI document: a public read is cached on exactly its
//! own query parameters and keyed on `Authorization` and `Origin`; a signed-in operation, and
//! every write, reaches the origin with its token and its query, and is never kept. The origin, its
//! secret and the WAF web ACL: template_edge_origin.rs. Each checker takes the file's text and is
//! shown to catch altered copies.

use crate::support;

use std::collections::BTreeSet;

use serde_norway::Value;
use support::{
    assert_each_alteration_caught, assert_none, listed, names, only_resource, parse, read,
    reference, resolved,
};

/// The methods a behavior passes on: all of CloudFront's seven, so that no route is refused.
const ALL_METHODS: [&str; 7] = ["GET", "HEAD", "OPTIONS", "PUT", "PATCH", "POST", "DELETE"];

/// Whether `path` matches CloudFront's path pattern `pattern`: `*` stands for any run of
/// characters, `/` included, `?` for exactly one; case-sensitive.
fn glob(pattern: &[u8], path: &[u8]) -> bool {
    match pattern.split_first() {
        None => path.is_empty(),
        Some((b'*', rest)) => (0..=path.len()).any(|skip| glob(rest, &path[skip..])),
        Some((b'?', rest)) => !path.is_empty() && glob(rest, &path[1..]),
        Some((c, rest)) => path.first() == Some(c) && glob(rest, &path[1..]),
    }
}

/// A behavior of the distribution: its pattern (`*` for the default) and properties.
struct Behavior<'a> {
    pattern: String,
    properties: &'a Value,
}

/// What a cache policy keys on and how long it may keep an answer.
struct CachePolicy {
    name: String,
    headers: BTreeSet<String>,
    /// `None`: every query parameter; `Some(names)`: those only.
    query: Option<BTreeSet<String>>,
    cookies: bool,
    default_ttl: Option<u64>,
    max_ttl: Option<u64>,
}

impl CachePolicy {
    /// Forwards the token and keeps nothing unless told, for a second at most (with a MaxTTL of
    /// 0 CloudFront refuses a key with headers).
    fn passes(&self) -> bool {
        self.headers.contains("authorization")
            && self.default_ttl == Some(0)
            && self.max_ttl == Some(1)
    }

    /// Reaches the origin with each of `parameters`.
    fn forwards(&self, parameters: &BTreeSet<String>) -> bool {
        self.query
            .as_ref()
            .is_none_or(|query| query.is_superset(parameters))
    }
}

/// The template's one distribution, its behaviors in CloudFront's order (the default last).
fn distribution(template: &Value) -> Result<(String, Vec<Behavior<'_>>), String> {
    let (name, distribution) = only_resource(template, "AWS::CloudFront::Distribution")?;
    let config = &distribution["Properties"]["DistributionConfig"];
    let mut behaviors: Vec<Behavior> = config["CacheBehaviors"]
        .as_sequence()
        .into_iter()
        .flatten()
        .map(|behavior| Behavior {
            pattern: behavior["PathPattern"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            properties: behavior,
        })
        .collect();
    behaviors.push(Behavior {
        pattern: "*".to_owned(),
        properties: &config["DefaultCacheBehavior"],
    });
    Ok((name, behaviors))
}

fn cache_policy(template: &Value, behavior: &Behavior) -> Result<CachePolicy, String> {
    let name = reference(&behavior.properties["CachePolicyId"])
        .ok_or_else(|| format!("{}: CachePolicyId is no !Ref", behavior.pattern))?;
    let resource = &template["Resources"][name];
    if resource["Type"].as_str() != Some("AWS::CloudFront::CachePolicy") {
        return Err(format!("{}: {name} is no cache policy", behavior.pattern));
    }
    let config = &resource["Properties"]["CachePolicyConfig"];
    let key = &config["ParametersInCacheKeyAndForwardedToOrigin"];
    let query = match key["QueryStringsConfig"]["QueryStringBehavior"].as_str() {
        Some("all") => None,
        Some("none") => Some(BTreeSet::new()),
        Some("whitelist") => Some(
            listed(&key["QueryStringsConfig"]["QueryStrings"])
                .into_iter()
                .map(str::to_owned)
                .collect(),
        ),
        other => return Err(format!("{name}: QueryStringBehavior {other:?}")),
    };
    let headers = match key["HeadersConfig"]["HeaderBehavior"].as_str() {
        Some("whitelist") => names(listed(&key["HeadersConfig"]["Headers"])),
        _ => BTreeSet::new(),
    };
    Ok(CachePolicy {
        name: name.to_owned(),
        headers,
        query,
        cookies: key["CookiesConfig"]["CookieBehavior"].as_str() != Some("none"),
        default_ttl: config["DefaultTTL"].as_u64(),
        max_ttl: config["MaxTTL"].as_u64(),
    })
}

/// An operation of the OpenAPI document, as the edge sees it.
struct Operation {
    id: String,
    method: String,
    /// Its path with a value in place of each parameter.
    path: String,
    query: BTreeSet<String>,
    public: bool,
    /// Its answer says `Cache-Control: no-store` (health, time): no cache may keep it.
    no_store: bool,
}

fn operations() -> Vec<Operation> {
    let document = serde_json::to_value(api::openapi::openapi()).unwrap();
    let components = &document["components"];
    let mut found = Vec::new();
    for (path, item) in document["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            if !names(ALL_METHODS).contains(method) {
                continue;
            }
            let query = operation["parameters"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|parameter| resolved(components, parameter, "parameters"))
                .filter(|parameter| parameter["in"] == "query")
                .filter_map(|parameter| parameter["name"].as_str().map(str::to_owned))
                .collect();
            let public = operation["security"].as_array().is_some_and(|schemes| {
                schemes
                    .iter()
                    .all(|scheme| scheme.as_object().is_some_and(|s| s.is_empty()))
            });
            let ok = resolved(components, &operation["responses"]["200"], "responses");
            let cache_control = ok["headers"]["Cache-Control"]["description"].as_str();
            let filled: Vec<&str> = path
                .split('/')
                .map(|segment| {
                    if segment.starts_with('{') {
                        "x1"
                    } else {
                        segment
                    }
                })
                .collect();
            found.push(Operation {
                id: operation["operationId"].as_str().unwrap_or(path).to_owned(),
                method: method.to_ascii_uppercase(),
                path: filled.join("/"),
                query,
                public,
                no_store: cache_control.is_some_and(|c| c.contains("no-store")),
            });
        }
    }
    found
}

/// Whether a behavior passes every method through the one origin and its request policy,
/// caches GET and HEAD only, compresses, and refuses plain http.
fn behavior_settings_problems(template: &Value, behavior: &Behavior) -> Vec<String> {
    let properties = behavior.properties;
    let mut problems = Vec::new();
    let mut expect = |field: &str, ok: bool| {
        if !ok {
            problems.push(format!(
                "behavior {}: {field} is {:?}",
                behavior.pattern, properties[field]
            ));
        }
    };
    expect(
        "AllowedMethods",
        names(listed(&properties["AllowedMethods"])) == names(ALL_METHODS),
    );
    expect(
        "CachedMethods",
        names(listed(&properties["CachedMethods"])) == names(["GET", "HEAD"]),
    );
    expect("Compress", properties["Compress"].as_bool() == Some(true));
    expect(
        "ViewerProtocolPolicy",
        properties["ViewerProtocolPolicy"].as_str() == Some("https-only"),
    );
    expect(
        "OriginRequestPolicyId",
        reference(&properties["OriginRequestPolicyId"]).is_some_and(|name| {
            template["Resources"][name]["Type"].as_str()
                == Some("AWS::CloudFront::OriginRequestPolicy")
        }),
    );
    problems
}

/// The behaviors against the document: each operation is matched first by a behavior whose
/// cache policy is right for it.
fn behavior_problems(template_text: &str) -> Vec<String> {
    let template = parse(template_text);
    let (_, behaviors) = match distribution(&template) {
        Ok(found) => found,
        Err(problem) => return vec![problem],
    };
    let mut problems: Vec<String> = behaviors
        .iter()
        .flat_map(|behavior| behavior_settings_problems(&template, behavior))
        .collect();
    for operation in operations() {
        let behavior = behaviors
            .iter()
            .find(|behavior| glob(behavior.pattern.as_bytes(), operation.path.as_bytes()))
            .expect("the default behavior matches every path");
        let policy = match cache_policy(&template, behavior) {
            Ok(policy) => policy,
            Err(problem) => {
                problems.push(problem);
                continue;
            }
        };
        let at = format!(
            "{} ({} {}) falls under {} ({})",
            operation.id, operation.method, operation.path, behavior.pattern, policy.name
        );
        if !policy.forwards(&operation.query) {
            problems.push(format!("{at}, which drops some of {:?}", operation.query));
        }
        if !policy.headers.contains("authorization") {
            problems.push(format!("{at}, which does not forward Authorization"));
        }
        if !policy.headers.contains("origin") {
            problems.push(format!(
                "{at}, which does not forward Origin (API Gateway's CORS answers from it)"
            ));
        }
        let public_read = operation.public && operation.method == "GET";
        if !public_read {
            if operation.method == "GET" && !policy.passes() {
                problems.push(format!("{at}, which may keep a signed-in answer"));
            }
            continue;
        }
        let cached_right = policy.query.as_ref() == Some(&operation.query)
            && policy.headers == names(["Authorization", "Origin"])
            && !policy.cookies
            && policy.default_ttl == Some(0)
            && policy.max_ttl.is_some_and(|ttl| ttl > 1);
        // An answer no cache may keep (health, time) may as well pass.
        let passed_right = operation.no_store && policy.passes();
        if !(cached_right || passed_right) {
            problems.push(format!(
                "{at}: not keyed on exactly its query {:?}, Authorization and Origin, with \
                 DefaultTTL 0 (keys {:?}, query {:?}, TTL {:?}..{:?})",
                operation.query, policy.headers, policy.query, policy.default_ttl, policy.max_ttl
            ));
        }
    }
    problems
}

#[test]
fn cloudfront_patterns_match_as_cloudfront_does() {
    assert!(glob(b"*", b"/api/anything/at/all"));
    assert!(glob(b"/api/packs/*", b"/api/packs/x1/queue/me"));
    assert!(glob(
        b"/api/packs/*/queue/me*",
        b"/api/packs/x1/queue/me/proof"
    ));
    assert!(glob(b"/api/packs/?1", b"/api/packs/x1"));
    assert!(!glob(b"/api/packs/*", b"/api/packs"));
    assert!(!glob(b"/api/packs/*/queue", b"/api/packs/x1/queue/me"));
    assert!(!glob(b"/api/Packs", b"/api/packs"));
}

#[test]
fn each_operation_falls_under_a_behavior_that_caches_it_rightly() {
    let operations = operations();
    assert!(
        operations
            .iter()
            .any(|o| o.public && o.method == "GET" && !o.no_store)
    );
    assert!(operations.iter().any(|o| !o.public && o.method == "GET"));
    assert_none(behavior_problems(&read("template.yaml")));
}

#[test]
fn a_behavior_that_caches_wrongly_is_caught() {
    assert_each_alteration_caught(
        &read("template.yaml"),
        &[
            // A purchase falls under the public pack's pattern.
            (
                "PathPattern: /api/packs/*/purchases*",
                "PathPattern: /api/packs/*/purchases",
            ),
            // The fan's proof falls under the public pack's pattern.
            (
                "PathPattern: /api/packs/*/queue/me*",
                "PathPattern: /api/packs/*/queue/me",
            ),
            // The public list is behind the pattern that catches the fan's standing.
            (
                "PathPattern: /api/leaderboards/*/me\n",
                "PathPattern: /api/leaderboards/*\n",
            ),
            (
                "QueryStrings: [leagueId, teamId, limit, cursor]",
                "QueryStrings: [leagueId, limit, cursor]",
            ),
            ("QueryStrings: [cursor]", "QueryStrings: [cursor, limit]"),
            ("Headers: [Authorization, Origin]}", "Headers: [Origin]}"),
            (
                "Headers: [Authorization, Origin]}",
                "Headers: [Authorization]}",
            ),
            (
                "Headers: [Authorization, Origin]}\n          CookiesConfig: {CookieBehavior: none}\n          QueryStringsConfig: {QueryStringBehavior: all}",
                "Headers: [Origin]}\n          CookiesConfig: {CookieBehavior: none}\n          QueryStringsConfig: {QueryStringBehavior: all}",
            ),
            (
                "Headers: [Authorization, Origin]}\n          CookiesConfig: {CookieBehavior: none}\n          QueryStringsConfig: {QueryStringBehavior: all}",
                "Headers: [Authorization]}\n          CookiesConfig: {CookieBehavior: none}\n          QueryStringsConfig: {QueryStringBehavior: all}",
            ),
            ("MaxTTL: 1\n", "MaxTTL: 60\n"),
            ("MaxTTL: 1\n", "MaxTTL: 0\n"),
            (
                "DefaultTTL: 0\n        MaxTTL: 86400",
                "DefaultTTL: 60\n        MaxTTL: 86400",
            ),
            (
                "QueryStringsConfig: {QueryStringBehavior: all}",
                "QueryStringsConfig: {QueryStringBehavior: none}",
            ),
            (
                "ViewerProtocolPolicy: https-only",
                "ViewerProtocolPolicy: redirect-to-https",
            ),
            (
                "AllowedMethods: [GET, HEAD, OPTIONS, PUT, PATCH, POST, DELETE]",
                "AllowedMethods: [GET, HEAD, OPTIONS]",
            ),
            (
                "CachedMethods: [GET, HEAD]",
                "CachedMethods: [GET, HEAD, OPTIONS]",
            ),
            ("Compress: true", "Compress: false"),
            (
                "OriginRequestPolicyId: !Ref EdgeOriginRequestPolicy",
                "OriginRequestPolicyId: !Ref EdgePassCachePolicy",
            ),
        ],
        behavior_problems,
    );
}
