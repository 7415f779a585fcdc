//! Reads CloudWatch Embedded Metric Format lines as CloudWatch Logs does, and checks each against
//! the format's specification: a log event that is itself a JSON object with `_aws` at its top
//! level; `_aws.Timestamp` in milliseconds; `_aws.CloudWatchMetrics`, a list of directives, each
//! with a `Namespace`, `Dimensions` (a list of dimension sets, each a list of names, every name a
//! top-level string) and `Metrics` (at most 100, each a `Name` and a known `Unit`, every name a
//! top-level number or list of numbers). A line that breaks a rule is a test failure naming it.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

/// The units CloudWatch takes.
const UNITS: [&str; 27] = [
    "Seconds",
    "Microseconds",
    "Milliseconds",
    "Bytes",
    "Kilobytes",
    "Megabytes",
    "Gigabytes",
    "Terabytes",
    "Bits",
    "Kilobits",
    "Megabits",
    "Gigabits",
    "Terabits",
    "Percent",
    "Count",
    "Bytes/Second",
    "Kilobytes/Second",
    "Megabytes/Second",
    "Gigabytes/Second",
    "Terabytes/Second",
    "Bits/Second",
    "Kilobits/Second",
    "Megabits/Second",
    "Gigabits/Second",
    "Terabits/Second",
    "Count/Second",
    "None",
];

/// One EMF line, checked, with one directive (what fan-api writes).
#[derive(Debug, Clone, PartialEq)]
pub struct EmfLine {
    pub timestamp_ms: u64,
    pub namespace: String,
    /// The dimension sets, as named.
    pub dimensions: Vec<Vec<String>>,
    /// Each dimension's value.
    pub dimension_values: BTreeMap<String, String>,
    /// Each metric's value (a list of values summed) and unit.
    pub metrics: BTreeMap<String, (f64, String)>,
    /// Every other top-level member.
    pub properties: Map<String, Value>,
}

impl EmfLine {
    /// The value of metric `name`, if the line has it.
    pub fn value(&self, name: &str) -> Option<f64> {
        self.metrics.get(name).map(|(value, _)| *value)
    }

    /// A string property.
    pub fn property(&self, name: &str) -> Option<&str> {
        self.properties.get(name).and_then(Value::as_str)
    }
}

/// Every line of `log` that CloudWatch would take for EMF (a JSON object with a top-level
/// `_aws`), each checked; panics naming the first line that breaks the specification.
pub fn lines(log: &str) -> Vec<EmfLine> {
    log.lines()
        .filter_map(|line| {
            let object = serde_json::from_str::<Map<String, Value>>(line).ok()?;
            object.contains_key("_aws").then_some(object)
        })
        .map(|object| check(&object).unwrap_or_else(|e| panic!("not EMF ({e}): {object:?}")))
        .collect()
}

/// Parses one line and checks it.
pub fn parse(line: &str) -> Result<EmfLine, String> {
    let object: Map<String, Value> =
        serde_json::from_str(line).map_err(|e| format!("not a JSON object: {e}"))?;
    check(&object)
}

/// Checks a log event's JSON object against the specification.
pub fn check(object: &Map<String, Value>) -> Result<EmfLine, String> {
    let aws = object
        .get("_aws")
        .and_then(Value::as_object)
        .ok_or("no `_aws` object at the top level")?;
    let timestamp_ms = aws
        .get("Timestamp")
        .and_then(Value::as_u64)
        .ok_or("`_aws.Timestamp` is not a whole number")?;
    // Milliseconds since 1970: after 2001-09-09 and before 2286 (seconds would be far smaller).
    if !(1_000_000_000_000..10_000_000_000_000).contains(&timestamp_ms) {
        return Err(format!(
            "`_aws.Timestamp` {timestamp_ms} is not in milliseconds"
        ));
    }
    let directives = aws
        .get("CloudWatchMetrics")
        .and_then(Value::as_array)
        .ok_or("`_aws.CloudWatchMetrics` is not a list")?;
    let [directive] = directives.as_slice() else {
        return Err(format!("{} directives, expected one", directives.len()));
    };
    let namespace = directive
        .get("Namespace")
        .and_then(Value::as_str)
        .filter(|n| (1..=255).contains(&n.len()))
        .ok_or("a directive's `Namespace` is not a name")?;
    let sets = directive
        .get("Dimensions")
        .and_then(Value::as_array)
        .ok_or("a directive's `Dimensions` is not a list")?;
    let mut dimensions = Vec::new();
    let mut dimension_values = BTreeMap::new();
    for set in sets {
        let names = set
            .as_array()
            .filter(|names| names.len() <= 30)
            .ok_or("a dimension set is not a list of at most 30 names")?;
        let mut named = Vec::new();
        for name in names {
            let name = name.as_str().ok_or("a dimension name is not a string")?;
            let value = object
                .get(name)
                .and_then(Value::as_str)
                .ok_or(format!("dimension `{name}` is not a top-level string"))?;
            dimension_values.insert(name.to_owned(), value.to_owned());
            named.push(name.to_owned());
        }
        dimensions.push(named);
    }
    let definitions = directive
        .get("Metrics")
        .and_then(Value::as_array)
        .filter(|metrics| metrics.len() <= 100)
        .ok_or("a directive's `Metrics` is not a list of at most 100")?;
    let mut metrics = BTreeMap::new();
    for definition in definitions {
        let name = definition
            .get("Name")
            .and_then(Value::as_str)
            .filter(|n| (1..=1024).contains(&n.len()))
            .ok_or("a metric's `Name` is not a name")?;
        let unit = match definition.get("Unit") {
            None => "None",
            Some(unit) => unit
                .as_str()
                .filter(|unit| UNITS.contains(unit))
                .ok_or(format!("metric `{name}` has an unknown unit {unit}"))?,
        };
        let value = match object.get(name) {
            Some(Value::Number(n)) => n.as_f64(),
            Some(Value::Array(values)) if values.len() <= 100 => {
                values.iter().map(Value::as_f64).sum::<Option<f64>>()
            }
            _ => None,
        }
        .ok_or(format!("metric `{name}` is not a top-level number"))?;
        if metrics
            .insert(name.to_owned(), (value, unit.to_owned()))
            .is_some()
        {
            return Err(format!("metric `{name}` is defined twice"));
        }
    }
    let properties = object
        .iter()
        .filter(|(key, _)| {
            key.as_str() != "_aws"
                && !dimension_values.contains_key(key.as_str())
                && !metrics.contains_key(key.as_str())
        })
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    Ok(EmfLine {
        timestamp_ms,
        namespace: namespace.to_owned(),
        dimensions,
        dimension_values,
        metrics,
        properties,
    })
}
