//! `template.yaml`'s edge (docs/edge.md), beside the behaviors (template_edge.rs): the origin
//! (the HTTP API over https), the secret header CloudFront sends it and the functions check (one
//! secret's `send` and `accept` keys), the headers forwarded (`api::http::edge`'s list), the WAF
//! web ACL's rate rule on public reads and its answer in the API's error shape, and the rule that
//! refuses an edge without a web ACL. Each checker takes the file's text and is shown to catch
//! altered copies.

use crate::support;

use std::collections::BTreeSet;

use api::http::edge::{ORIGIN_VERIFY_HEADER, forwarded_headers};
use api::http::error::ErrorCode;
use serde_json::Value as Json;
use serde_norway::Value;
use support::{
    assert_each_alteration_caught, assert_none, check_only_resource, listed, names, only_resource,
    parse, read, reference, resources, tagged, yaml,
};

/// The parts of a dynamic reference to a JSON key of a secret,
/// `{{resolve:secretsmanager:<secret>:SecretString:<key>::<version>}}`, written with `!Sub`.
fn secret_reference(value: &Value) -> Option<(String, String, String)> {
    let body = tagged(value, "Sub")?
        .as_str()?
        .strip_prefix("{{resolve:secretsmanager:")?
        .strip_suffix("}}")?;
    match body.split(':').collect::<Vec<_>>().as_slice() {
        [secret, "SecretString", key, "", version] => {
            Some((secret.to_string(), key.to_string(), version.to_string()))
        }
        _ => None,
    }
}

/// The origin: the HTTP API over https, sent the `send` key of the secret whose `accept` key
/// the functions get, with exactly the headers the API reads.
fn origin_problems(template_text: &str) -> Vec<String> {
    let template = parse(template_text);
    check_only_resource(
        &template,
        "AWS::CloudFront::Distribution",
        |name, distribution| distribution_origin_problems(&template, &name, distribution),
    )
}

fn distribution_origin_problems(template: &Value, name: &str, distribution: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let config = &distribution["Properties"]["DistributionConfig"];
    let origins = config["Origins"].as_sequence().cloned().unwrap_or_default();
    let [origin] = origins.as_slice() else {
        return vec![format!("{name} has {} origins, not one", origins.len())];
    };
    if origin["DomainName"]
        != yaml(r#"!Sub "${HttpApi}.execute-api.${AWS::Region}.${AWS::URLSuffix}""#)
    {
        problems.push(format!(
            "the origin is {:?}, not the HTTP API",
            origin["DomainName"]
        ));
    }
    let custom = &origin["CustomOriginConfig"];
    if custom["OriginProtocolPolicy"].as_str() != Some("https-only")
        || listed(&custom["OriginSSLProtocols"]) != ["TLSv1.2"]
    {
        problems.push(format!(
            "the origin is not https-only with TLSv1.2: {custom:?}"
        ));
    }
    let headers = origin["OriginCustomHeaders"]
        .as_sequence()
        .cloned()
        .unwrap_or_default();
    let sent = match headers.as_slice() {
        [header] if header["HeaderName"].as_str() == Some(ORIGIN_VERIFY_HEADER) => {
            secret_reference(&header["HeaderValue"])
        }
        _ => {
            problems.push(format!(
                "the origin's custom headers are {headers:?}, not {ORIGIN_VERIFY_HEADER} alone"
            ));
            None
        }
    };
    let accepted =
        &template["Globals"]["Function"]["Environment"]["Variables"]["EDGE_ORIGIN_SECRETS"];
    let accepted = match tagged(accepted, "If").and_then(Value::as_sequence) {
        Some(branches)
            if branches.len() == 3
                && branches[0].as_str() == Some("EdgeOn")
                && branches[2].as_str() == Some("") =>
        {
            secret_reference(&branches[1])
        }
        _ => None,
    };
    match (sent, accepted) {
        (Some((sent_secret, send, sent_version)), Some((secret, accept, version)))
            if sent_secret == secret && sent_version == version =>
        {
            if (send.as_str(), accept.as_str()) != ("send", "accept") {
                problems.push(format!(
                    "CloudFront sends the secret's {send:?}, the functions accept its {accept:?}"
                ));
            }
        }
        (sent, accepted) => problems.push(format!(
            "CloudFront's {ORIGIN_VERIFY_HEADER} ({sent:?}) and the functions' \
             EDGE_ORIGIN_SECRETS (!If EdgeOn, else \"\": {accepted:?}) are not one secret's \
             send and accept keys at one version"
        )),
    }
    let (policy_name, policy) =
        match only_resource(template, "AWS::CloudFront::OriginRequestPolicy") {
            Ok(found) => found,
            Err(problem) => {
                problems.push(problem);
                return problems;
            }
        };
    let policy = &policy["Properties"]["OriginRequestPolicyConfig"];
    let forwarded = names(listed(&policy["HeadersConfig"]["Headers"]));
    if policy["HeadersConfig"]["HeaderBehavior"].as_str() != Some("whitelist")
        || forwarded != names(forwarded_headers())
    {
        problems.push(format!(
            "{policy_name} forwards {forwarded:?}, api::http::edge::forwarded_headers() {:?}",
            names(forwarded_headers())
        ));
    }
    for (field, behavior) in [
        ("CookiesConfig", "CookieBehavior"),
        ("QueryStringsConfig", "QueryStringBehavior"),
    ] {
        if policy[field][behavior].as_str() != Some("none") {
            problems.push(format!("{policy_name}: {field} is not none"));
        }
    }
    for kind in [
        "AWS::CloudFront::Distribution",
        "AWS::CloudFront::CachePolicy",
        "AWS::CloudFront::OriginRequestPolicy",
        "AWS::CloudFront::MonitoringSubscription",
    ] {
        for (resource, value) in resources(template, kind) {
            if value["Condition"].as_str() != Some("EdgeOn") {
                problems.push(format!("{resource} is not on the condition EdgeOn"));
            }
        }
    }
    problems
}

/// A statement's `ByteMatchStatement` on the method: the method it matches exactly.
fn method_matched(statement: &Value) -> Option<&str> {
    let matched = &statement["ByteMatchStatement"];
    (matched["FieldToMatch"]["Method"].is_mapping()
        && matched["PositionalConstraint"].as_str() == Some("EXACTLY"))
    .then(|| matched["SearchString"].as_str())
    .flatten()
}

/// Whether `statement` is true exactly for the GETs and HEADs that carry no Authorization.
fn public_reads_only(statement: &Value) -> bool {
    let parts = statement["AndStatement"]["Statements"]
        .as_sequence()
        .cloned()
        .unwrap_or_default();
    let [methods, no_token] = parts.as_slice() else {
        return false;
    };
    let matched: BTreeSet<&str> = methods["OrStatement"]["Statements"]
        .as_sequence()
        .into_iter()
        .flatten()
        .filter_map(method_matched)
        .collect();
    let token = &no_token["NotStatement"]["Statement"]["SizeConstraintStatement"];
    matched == BTreeSet::from(["GET", "HEAD"])
        && token["FieldToMatch"]["SingleHeader"]["Name"]
            .as_str()
            .is_some_and(|name| name.eq_ignore_ascii_case("authorization"))
        && token["ComparisonOperator"].as_str() == Some("GT")
        && token["Size"].as_u64() == Some(0)
}

/// Whether `content` is the API's error body for `code`: `{"success": false, "error":
/// {"code", "message"}}` and nothing else.
fn is_error_body(content: &str, code: &str) -> bool {
    let Ok(body) = serde_json::from_str::<Json>(content) else {
        return false;
    };
    let keys = |value: &Json| -> BTreeSet<String> {
        value
            .as_object()
            .map(|object| object.keys().cloned().collect())
            .unwrap_or_default()
    };
    keys(&body) == BTreeSet::from(["success".to_owned(), "error".to_owned()])
        && body["success"] == Json::Bool(false)
        && keys(&body["error"]) == BTreeSet::from(["code".to_owned(), "message".to_owned()])
        && body["error"]["code"] == code
        && body["error"]["message"]
            .as_str()
            .is_some_and(|message| !message.is_empty())
}

/// The web ACL: CLOUDFRONT scope, on the distribution, and a rule that limits public reads per
/// address over 60 s to EdgeReadRateLimit and answers 429 in the API's error shape with a
/// Retry-After.
fn waf_problems(template_text: &str) -> Vec<String> {
    let template = parse(template_text);
    check_only_resource(&template, "AWS::WAFv2::WebACL", |name, acl| {
        web_acl_problems(&template, &name, acl)
    })
}

fn web_acl_problems(template: &Value, name: &str, acl: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let properties = &acl["Properties"];
    if properties["Scope"].as_str() != Some("CLOUDFRONT") {
        problems.push(format!("{name}'s Scope is not CLOUDFRONT"));
    }
    let on_distribution = resources(template, "AWS::CloudFront::Distribution")
        .iter()
        .any(|(_, distribution)| {
            distribution["Properties"]["DistributionConfig"]["WebACLId"]
                == yaml(&format!(
                    "!If [CreateWebAcl, !GetAtt {name}.Arn, !If [HasEdgeWebAcl, !Ref EdgeWebAclArn, !Ref \"AWS::NoValue\"]]"
                ))
        });
    if !on_distribution || acl["Condition"].as_str() != Some("CreateWebAcl") {
        problems.push(format!(
            "{name} is not the distribution's web ACL under CreateWebAcl, EdgeWebAclArn else"
        ));
    }
    let rate_limited: &str = ErrorCode::RateLimited.into();
    // The rule's 429: the API's error shape, Retry-After, and CORS headers a web app can read.
    let answers_429 = |rule: &Value| {
        let response = &rule["Action"]["Block"]["CustomResponse"];
        let body = response["CustomResponseBodyKey"]
            .as_str()
            .map(|key| &properties["CustomResponseBodies"][key]);
        let header = |wanted: &str| {
            response["ResponseHeaders"]
                .as_sequence()
                .into_iter()
                .flatten()
                .find(|header| {
                    header["Name"]
                        .as_str()
                        .is_some_and(|name| name.eq_ignore_ascii_case(wanted))
                })
                .and_then(|header| header["Value"].as_str())
        };
        response["ResponseCode"].as_u64() == Some(429)
            && body.is_some_and(|body| {
                body["ContentType"].as_str() == Some("APPLICATION_JSON")
                    && body["Content"]
                        .as_str()
                        .is_some_and(|content| is_error_body(content, rate_limited))
            })
            && header("retry-after")
                .and_then(|seconds| seconds.parse::<u32>().ok())
                .is_some_and(|seconds| seconds > 0)
            && header("access-control-allow-origin") == Some("*")
            && header("access-control-expose-headers")
                .is_some_and(|exposed| exposed.eq_ignore_ascii_case("retry-after"))
    };
    let per_address = |rule: &Value, limit: &str| {
        let rate = &rule["Statement"]["RateBasedStatement"];
        rate["AggregateKeyType"].as_str() == Some("IP")
            && rate["EvaluationWindowSec"].as_u64() == Some(60)
            && reference(&rate["Limit"]) == Some(limit)
            && answers_429(rule)
    };
    let rules = properties["Rules"]
        .as_sequence()
        .cloned()
        .unwrap_or_default();
    if !rules.iter().any(|rule| {
        per_address(rule, "EdgeReadRateLimit")
            && public_reads_only(&rule["Statement"]["RateBasedStatement"]["ScopeDownStatement"])
    }) {
        problems.push(format!(
            "{name} has no rule that limits GETs and HEADs without Authorization per IP over \
             60 s to EdgeReadRateLimit, answered 429 {rate_limited} in the API's error shape \
             with Retry-After and CORS headers"
        ));
    }
    if !rules.iter().any(|rule| {
        per_address(rule, "EdgeRequestRateLimit")
            && rule["Statement"]["RateBasedStatement"]["ScopeDownStatement"].is_null()
    }) {
        problems.push(format!(
            "{name} has no rule that limits every request per IP over 60 s to \
             EdgeRequestRateLimit, answered as the API's 429"
        ));
    }
    problems
}

/// The Rules section refuses a stack with the edge on where its web ACL can be neither created
/// (outside us-east-1) nor named.
fn rule_problems(template_text: &str) -> Vec<String> {
    let template = parse(template_text);
    let condition = yaml(r#"!Equals [!Ref EdgeEnabled, "true"]"#);
    let assertion = yaml(
        r#"!Or [!Equals [!Ref "AWS::Region", us-east-1], !Not [!Equals [!Ref EdgeWebAclArn, ""]]]"#,
    );
    let asserted = template["Rules"]
        .as_mapping()
        .into_iter()
        .flatten()
        .any(|(_, rule)| {
            rule["RuleCondition"] == condition
                && rule["Assertions"]
                    .as_sequence()
                    .into_iter()
                    .flatten()
                    .any(|assert| assert["Assert"] == assertion)
        });
    if asserted {
        return Vec::new();
    }
    vec![format!(
        "no rule asserts {assertion:?} on {condition:?} (the web ACL's region)"
    )]
}

#[test]
fn the_origin_is_the_api_sent_the_secret_and_the_headers_it_reads() {
    assert_none(origin_problems(&read("template.yaml")));
}

#[test]
fn an_origin_that_leaks_or_loses_the_secret_or_a_header_is_caught() {
    assert_each_alteration_caught(
        &read("template.yaml"),
        &[
            ("            - Stripe-Signature\n", ""),
            (
                "            - CloudFront-Viewer-Address\n",
                "            - CloudFront-Viewer-Address\n            - X-Forwarded-For\n",
            ),
            ("HeaderName: x-origin-verify", "HeaderName: x-origin-secret"),
            ("SecretString:send::", "SecretString:accept::"),
            // The first is the functions' (Globals).
            ("SecretString:accept::", "SecretString:send::"),
            (
                "${OriginVerifySecret}:SecretString:accept",
                "${TurnstileSecretSecret}:SecretString:accept",
            ),
            ("accept::${OriginVerifySecretVersion}}}", "accept::}}"),
            (
                "          - EdgeOn\n          - !Sub \"{{resolve",
                "          - HasAlarmEmail\n          - !Sub \"{{resolve",
            ),
            (
                "OriginProtocolPolicy: https-only",
                "OriginProtocolPolicy: match-viewer",
            ),
            (
                "DomainName: !Sub \"${HttpApi}.execute-api",
                "DomainName: !Sub \"${HttpApi}.internal.execute-api",
            ),
            (
                "CookiesConfig: {CookieBehavior: none}\n        QueryStringsConfig: {QueryStringBehavior: none}\n\n",
                "CookiesConfig: {CookieBehavior: all}\n        QueryStringsConfig: {QueryStringBehavior: none}\n\n",
            ),
            (
                "  DistributionMetrics:\n    Type: AWS::CloudFront::MonitoringSubscription\n    Condition: EdgeOn",
                "  DistributionMetrics:\n    Type: AWS::CloudFront::MonitoringSubscription",
            ),
        ],
        origin_problems,
    );
}

#[test]
fn the_web_acl_limits_public_reads_per_address_in_the_apis_shape() {
    assert_none(waf_problems(&read("template.yaml")));
}

#[test]
fn a_rate_rule_that_limits_the_wrong_requests_or_answers_otherwise_is_caught() {
    assert_each_alteration_caught(
        &read("template.yaml"),
        &[
            ("Scope: CLOUDFRONT", "Scope: REGIONAL"),
            ("AggregateKeyType: IP", "AggregateKeyType: CONSTANT"),
            ("EvaluationWindowSec: 60", "EvaluationWindowSec: 300"),
            ("Limit: !Ref EdgeReadRateLimit", "Limit: 100000"),
            ("SearchString: HEAD", "SearchString: POST"),
            (
                "SingleHeader: {Name: authorization}",
                "SingleHeader: {Name: human-check}",
            ),
            ("ComparisonOperator: GT", "ComparisonOperator: GE"),
            ("ResponseCode: 429", "ResponseCode: 403"),
            (r#""code":"rate_limited""#, r#""code":"too_many_requests""#),
            (r#"{"success":false,"#, r#"{"success":false,"status":429,"#),
            ("ContentType: APPLICATION_JSON", "ContentType: TEXT_PLAIN"),
            (
                "{Name: Retry-After, Value: \"60\"}",
                "{Name: Retry-After, Value: soon}",
            ),
            ("{Name: Retry-After,", "{Name: X-Retry-After,"),
            ("Limit: !Ref EdgeRequestRateLimit", "Limit: 100000"),
            (
                "{Name: Access-Control-Allow-Origin, Value: \"*\"}",
                "{Name: X-Allow-Origin, Value: \"*\"}",
            ),
            (
                "{Name: Access-Control-Expose-Headers, Value: Retry-After}",
                "{Name: Access-Control-Expose-Headers, Value: ETag}",
            ),
            ("    Condition: CreateWebAcl\n", "    Condition: EdgeOn\n"),
        ],
        waf_problems,
    );
}

#[test]
fn the_template_refuses_an_edge_without_a_web_acl() {
    assert_none(rule_problems(&read("template.yaml")));
}

#[test]
fn a_rule_that_lets_an_edge_without_a_web_acl_deploy_is_caught() {
    assert_each_alteration_caught(
        &read("template.yaml"),
        &[
            (
                r#"RuleCondition: !Equals [!Ref EdgeEnabled, "true"]"#,
                r#"RuleCondition: !Equals [!Ref EdgeEnabled, "false"]"#,
            ),
            (
                "          - !Not [!Equals [!Ref EdgeWebAclArn, \"\"]]\n        AssertDescription",
                "          - !Equals [!Ref EdgeWebAclArn, \"\"]\n        AssertDescription",
            ),
            ("\nRules:\n", "\nUnchecked:\n"),
        ],
        rule_problems,
    );
}
