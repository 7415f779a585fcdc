//! Helpers of the tests that check the repository's files (routes.rs, template.rs, policies.rs):
//! read a file, parse the template, and show that a checker catches an altered copy of it.

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

/// A YAML value as the template writes it (`!Ref Table`, `!GetAtt Queue.Arn`).
pub fn yaml(source: &str) -> Value {
    serde_norway::from_str(source).unwrap()
}
