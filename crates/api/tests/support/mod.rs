//! Helpers of the tests that check the repository's files (routes.rs, template.rs, policies.rs):
//! read a file, parse the template, and show that a checker catches an altered copy of it.

use std::collections::BTreeSet;

use serde_json::Value as Json;
use serde_norway::Value;

/// The text of a file of the repository, by its path from the root.
pub fn read(relative: &str) -> String {
    let path = format!("{}/../../{relative}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

pub fn assert_none(problems: Vec<String>) {
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Checks that `problems` reports something for each alteration (`from` -> `to`) of `text`.
pub fn assert_each_alteration_caught(
    text: &str,
    alterations: &[(&str, &str)],
    problems: fn(&str) -> Vec<String>,
) {
    for (from, to) in alterations {
        assert!(
            !problems(&altered(text, from, to)).is_empty(),
            "{from:?} -> {to:?} went unnoticed"
        );
    }
}

/// `text` with `from` replaced once by `to` (which must be there).
pub fn altered(text: &str, from: &str, to: &str) -> String {
    assert!(text.contains(from), "{from:?} is not in the file any more");
    text.replacen(from, to, 1)
}

/// `template.yaml`'s text parsed.
pub fn parse(template_text: &str) -> Value {
    serde_norway::from_str(template_text).expect("template.yaml parses")
}

/// A YAML string's text.
pub fn text(value: &Value) -> String {
    value
        .as_str()
        .unwrap_or_else(|| panic!("expected a string, got {value:?}"))
        .to_owned()
}

/// The resources of one type, with their logical ids.
pub fn resources<'a>(template: &'a Value, kind: &str) -> Vec<(String, &'a Value)> {
    template["Resources"]
        .as_mapping()
        .expect("Resources")
        .iter()
        .filter(|(_, resource)| resource["Type"].as_str() == Some(kind))
        .map(|(name, resource)| (text(name), resource))
        .collect()
}

/// The template's one resource of `kind`, with its logical id, or what is wrong.
pub fn only_resource<'a>(template: &'a Value, kind: &str) -> Result<(String, &'a Value), String> {
    match resources(template, kind).as_slice() {
        [(name, resource)] => Ok((name.clone(), *resource)),
        found => Err(format!("{} resources of type {kind}, not one", found.len())),
    }
}

/// `check`'s problems with the template's one resource of `kind` (its logical id and itself), or
/// why there is not one.
pub fn check_only_resource<'a>(
    template: &'a Value,
    kind: &str,
    check: impl FnOnce(String, &'a Value) -> Vec<String>,
) -> Vec<String> {
    match only_resource(template, kind) {
        Ok((name, resource)) => check(name, resource),
        Err(problem) => vec![problem],
    }
}

/// A YAML value as the template writes it (`!Ref Table`, `!GetAtt Queue.Arn`).
pub fn yaml(source: &str) -> Value {
    serde_norway::from_str(source).unwrap()
}

/// Names compared as HTTP compares them: case-insensitively.
pub fn names<'a>(names: impl IntoIterator<Item = &'a str>) -> BTreeSet<String> {
    names.into_iter().map(str::to_ascii_lowercase).collect()
}

/// A YAML list's strings.
pub fn listed(value: &Value) -> Vec<&str> {
    value.as_sequence().map_or_else(Vec::new, |list| {
        list.iter().filter_map(Value::as_str).collect()
    })
}

/// `value`, or what its `$ref` to `#/components/<kind>/<name>` names.
pub fn resolved<'a>(components: &'a Json, value: &'a Json, kind: &str) -> &'a Json {
    match value["$ref"].as_str() {
        Some(reference) => &components[kind][reference.rsplit('/').next().unwrap()],
        None => value,
    }
}

/// What `value` applies the intrinsic function `tag` (`!Ref`, `!Sub`, `!If`) to.
pub fn tagged<'a>(value: &'a Value, tag: &str) -> Option<&'a Value> {
    match value {
        Value::Tagged(tagged) if tagged.tag.to_string().trim_start_matches('!') == tag => {
            Some(&tagged.value)
        }
        _ => None,
    }
}

/// `!Ref name`'s name.
pub fn reference(value: &Value) -> Option<&str> {
    tagged(value, "Ref")?.as_str()
}
