//! JavaScript truthiness of a JSON value, as a JavaScript client reading the same JSON would judge
//! it (`JSON.parse`, then `!!`).
//!
//! Falsy: `false`, `null`, `""` and any number JavaScript reads as zero: every spelling of zero
//! (`0`, `-0`, `0.0`, `0e5`, `-0.0E-7`) and the numbers too small for a double, which round to
//! zero (`1e-400`, `2e-324`). Everything else is truthy, including `{}`, `[]`, `"0"`, `"false"`,
//! `" "`, the smallest double (`5e-324`, or `2.5e-324`, which rounds to it) and numbers too large
//! for a double (`1e400` is `Infinity`). A missing value is falsy; that case is the caller's.

use serde_json::value::RawValue;

/// Whether the JSON value would be truthy in JavaScript.
pub fn is_truthy(value: &RawValue) -> bool {
    is_truthy_text(value.get())
}

/// Same rule on the text of one valid JSON value (surrounding whitespace allowed).
fn is_truthy_text(text: &str) -> bool {
    let text = text.trim_matches(|c| matches!(c, ' ' | '\t' | '\n' | '\r'));
    match text.as_bytes().first() {
        Some(b'n' | b'f') | None => false, // null, false
        Some(b'"') => text.len() > 2,      // any escape or character makes it non-empty
        Some(b'-' | b'0'..=b'9') => !number_is_zero(text),
        Some(_) => true, // true, objects, arrays
    }
}

/// Whether a JSON number is zero as JavaScript reads it: as the nearest double, as Rust's parse
/// rounds too (correctly, like `JSON.parse`). Every JSON number parses; a huge one is infinite.
fn number_is_zero(number: &str) -> bool {
    number.parse::<f64>().is_ok_and(|value| value == 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn truthy(json: &str) -> bool {
        let raw: Box<RawValue> = serde_json::from_str(json).expect("test input is valid JSON");
        is_truthy(&raw)
    }

    #[test]
    fn falsy_values() {
        for json in [
            "false",
            "null",
            r#""""#,
            "0",
            "-0",
            "0.0",
            "-0.0",
            "0e5",
            "0E+5",
            "-0e-5",
            "0.000",
            "0.0e400",
            " 0 ",
            "1e-400",
            "-1e-400",
            "2e-324",
            "0.1e-323",
            "-2.4e-324",
        ] {
            assert!(!truthy(json), "{json} must be falsy");
        }
    }

    #[test]
    fn truthy_values() {
        for json in [
            "true",
            "{}",
            "[]",
            r#""0""#,
            r#""false""#,
            r#"" ""#,
            r#""\u0000""#,
            "1",
            "-1",
            "0.1",
            "5e-324",
            "2.5e-324",
            "-2.5e-324",
            "1e400",
            "-1e400",
            "0.0000000000000000000000000001",
            "123456789012345678901234567890",
            "[0]",
            r#"{"a":null}"#,
            "10e-1",
            "0.01e2",
        ] {
            assert!(truthy(json), "{json} must be truthy");
        }
    }
}
