//! template.yaml: what every function's resources repeat, in two kinds of regions.
//! - `function <name>`: the head of the function's resource: its logical id, `Type`, `Metadata`
//!   (cargo lambda's build of its binary), `CodeUri`, its HttpApi events (one per route, and the
//!   `$default` catch-all on the default function) and, when a route asks for a session token,
//!   the identity provider's settings (`Environment`, last, so that the function's own variables
//!   follow the region's END line). The lines after END, up to the next resource, are the
//!   function's own and written by hand: its description, policies, settings, other variables,
//!   schedules.
//! - `logs and errors alarms`: each function's log group (30 days) and alarm on its `Errors`. A
//!   resource of one of those names written by hand, outside the regions, stands in its place
//!   (stripe-webhook's alarm says that Stripe retries).
//!
//! Why the line between the two runs where it does: docs/design.md, "The template".

use std::collections::BTreeSet;
use std::fmt::Write;

use crate::examples::event;
use crate::functions::Function;
use crate::markers::{Region, fill, markers, regions};
use crate::routes::RouteSpec;

const FILE: &str = "template.yaml";
const FUNCTION: &str = "function ";
const LOGS_AND_ALARMS: &str = "logs and errors alarms";

/// The identity provider's settings of a function that verifies session tokens.
const SIGN_IN: [(&str, &str); 6] = [
    ("AUTH_ISSUER", "AuthIssuer"),
    ("AUTH_JWKS_URL", "AuthJwksUrl"),
    ("AUTH_AUDIENCE", "AuthAudience"),
    ("AUTH_EMAIL_CLAIM", "AuthEmailClaim"),
    ("AUTH_LEEWAY_SECONDS", "AuthLeewaySeconds"),
    ("AUTH_JWKS_MIN_REFRESH_SECONDS", "AuthJwksMinRefreshSeconds"),
];

/// `template` with every function's head, log group and errors alarm generated.
pub fn generated(template: &str, functions: &[Function], default: &str) -> Result<String, String> {
    let regions = regions(FILE, template)?;
    check(template, &regions, functions)?;
    let by_hand = hand_written_resources(template, &regions);
    fill(FILE, template, |name| match name.strip_prefix(FUNCTION) {
        Some(name) => functions
            .iter()
            .find(|f| f.name == name)
            .map(|function| head(function, default))
            .ok_or_else(|| format!("{FILE}: {name} is no function")),
        None => Ok(logs_and_alarms(functions, &by_hand)),
    })
}

/// One region per function, one of the logs and alarms, no other; no HttpApi event outside them
/// (a route is declared, not written into the template); and no key of a head written again in
/// the hand-written lines after it.
fn check(template: &str, regions: &[Region], functions: &[Function]) -> Result<(), String> {
    let mut problems = Vec::new();
    for function in functions {
        let name = format!("{FUNCTION}{}", function.name);
        if !regions.iter().any(|region| region.name == name) {
            problems.push(format!(
                "{FILE}: the function {} has no {} where its resource goes (its own properties \
                 follow the END line)",
                function.name,
                markers(&name)
            ));
        }
    }
    let logs = regions.iter().filter(|r| r.name == LOGS_AND_ALARMS).count();
    if logs != 1 {
        problems.push(format!(
            "{FILE}: {logs} regions {LOGS_AND_ALARMS:?}, not one ({})",
            markers(LOGS_AND_ALARMS)
        ));
    }
    for (i, region) in regions.iter().enumerate() {
        if regions[..i]
            .iter()
            .any(|earlier| earlier.name == region.name)
        {
            problems.push(format!("{FILE}: region {:?} twice", region.name));
        }
        match region.name.strip_prefix(FUNCTION) {
            Some(name) if functions.iter().any(|f| f.name == name) => {
                problems.extend(keys_written_twice(template, region));
            }
            Some(name) => problems.push(format!(
                "{FILE}: {name} is no function (not routed, not scheduled: functions.rs)"
            )),
            None if region.name == LOGS_AND_ALARMS => {}
            None => problems.push(format!("{FILE}: unknown region {:?}", region.name)),
        }
    }
    for (number, _) in outside(template, regions).filter(|(_, l)| l.trim() == "Type: HttpApi") {
        problems.push(format!(
            "{FILE}, line {number}: an HttpApi event outside the generated regions (declare the route instead)"
        ));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

/// The lines of `template` outside the regions' bodies, with their numbers from 1.
fn outside<'a>(
    template: &'a str,
    regions: &'a [Region],
) -> impl Iterator<Item = (usize, &'a str)> + 'a {
    let mut offset = 0;
    template
        .split_inclusive('\n')
        .enumerate()
        .filter_map(move |(i, line)| {
            let at = offset;
            offset += line.len();
            let generated = regions.iter().any(|region| region.body.contains(&at));
            (!generated).then_some((i + 1, line))
        })
}

/// The keys of a resource (`    Type:`) and of its properties (`      Events:`) on `lines`.
fn resource_keys<'a>(lines: impl Iterator<Item = &'a str>) -> BTreeSet<&'a str> {
    lines
        .filter_map(|line| {
            let key = line.strip_prefix("    ")?;
            let key = key.strip_prefix("  ").unwrap_or(key);
            let (key, _) = key.split_once(':')?;
            key.chars()
                .all(|c| c.is_ascii_alphanumeric())
                .then_some(key)
                .filter(|key| !key.is_empty())
        })
        .collect()
}

/// The keys that both a function's head and its hand-written lines (after the END line, up to
/// the next resource) write: YAML would keep one of them.
fn keys_written_twice(template: &str, region: &Region) -> Vec<String> {
    let head = resource_keys(template[region.body.clone()].lines());
    let own = template[region.body.end..]
        .lines()
        .skip(1)
        .filter(|line| !line.trim().is_empty() && !line.trim_start().starts_with('#'))
        .take_while(|line| line.starts_with("   "));
    resource_keys(own)
        .intersection(&head)
        .map(|key| {
            format!(
                "{FILE}: the lines after the region {:?} write its {key} again (YAML keeps one): \
                 the region writes it",
                region.name
            )
        })
        .collect()
}

/// The logical ids of the resources written by hand (outside the regions).
fn hand_written_resources<'a>(template: &'a str, regions: &'a [Region]) -> BTreeSet<&'a str> {
    let mut in_resources = false;
    outside(template, regions)
        .filter_map(|(_, line)| {
            if line.starts_with(|c: char| c.is_ascii_alphabetic()) {
                in_resources = line.trim_end() == "Resources:";
                return None;
            }
            let id = line.strip_prefix("  ")?.trim_end().strip_suffix(':')?;
            (in_resources && id.chars().all(|c| c.is_ascii_alphanumeric())).then_some(id)
        })
        .collect()
}

/// The head of `function`'s resource, at the indentation of the template's resources.
fn head(function: &Function, default: &str) -> String {
    let id = function.logical_id();
    let mut yaml = format!(
        "  {id}Function:
    Type: AWS::Serverless::Function
    Metadata:
      BuildMethod: rust-cargolambda
      BuildProperties:
        Binary: {name}
    Properties:
      CodeUri: .
",
        name = function.name
    );
    if !function.routes.is_empty() {
        yaml.push_str("      Events:\n");
        yaml.push_str(&events(&function.routes, function.name == default));
    }
    if function.signed_in() {
        yaml.push_str("      Environment:\n        Variables:\n");
        for (variable, parameter) in SIGN_IN {
            let _ = writeln!(yaml, "          {variable}: !Ref {parameter}");
        }
    }
    yaml
}

/// The HttpApi events of a function's routes, at the indentation of a resource's `Events:`
/// entries; the default function's catch-all last.
fn events(routes: &[&RouteSpec], default: bool) -> String {
    let mut yaml = String::new();
    for route in routes {
        let _ = write!(
            yaml,
            "        {}:\n          Type: HttpApi\n          Properties:\n            ApiId: !Ref HttpApi\n            Path: {}\n            Method: {}\n",
            event(route),
            route.path,
            route.method
        );
        if route.operator {
            yaml.push_str("            # Operators only: SigV4, checked by API Gateway (docs/events.md).\n            Auth:\n              Authorizer: AWS_IAM\n");
        }
        if let Some(throttle) = route.extra.throttle {
            let _ = write!(
                yaml,
                "            # Tighter than the API's default: see {throttle}RateLimit.\n            RouteSettings:\n              ThrottlingRateLimit: !Ref {throttle}RateLimit\n              ThrottlingBurstLimit: !Ref {throttle}BurstLimit\n"
            );
        }
    }
    if default {
        yaml.push_str("        NotFound:\n          Type: HttpApi\n          Properties:\n            ApiId: !Ref HttpApi\n");
    }
    yaml
}

/// Each function's log group and errors alarm but those written by hand (`by_hand`).
fn logs_and_alarms(functions: &[Function], by_hand: &BTreeSet<&str>) -> String {
    let mut yaml = String::new();
    for function in functions {
        if !yaml.is_empty() {
            yaml.push('\n');
        }
        let (id, name) = (function.logical_id(), function.name);
        let log_group = format!(
            "    Type: AWS::Logs::LogGroup
    Properties:
      LogGroupName: !Sub \"/aws/lambda/${{{id}Function}}\"
      RetentionInDays: 30
"
        );
        let errors_alarm = format!(
            "    Type: AWS::CloudWatch::Alarm
    Properties:
      AlarmDescription: {name} failed (crash, timeout or panic); its logs say why.
      Namespace: AWS/Lambda
      MetricName: Errors
      Dimensions: [{{Name: FunctionName, Value: !Ref {id}Function}}]
      Statistic: Sum
      Period: 60
      EvaluationPeriods: 1
      DatapointsToAlarm: 1
      Threshold: 0
      ComparisonOperator: GreaterThanThreshold
      TreatMissingData: notBreaching
      AlarmActions: [!Ref AlarmTopic]
      OKActions: [!Ref AlarmTopic]
"
        );
        for (resource, body) in [("Logs", log_group), ("ErrorsAlarm", errors_alarm)] {
            let logical_id = format!("{id}{resource}");
            if !by_hand.contains(logical_id.as_str()) {
                let _ = write!(yaml, "  {logical_id}:\n{body}");
            }
        }
    }
    yaml
}
