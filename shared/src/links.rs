//! Web3 links: the request body, the record kept per user, and the answer.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::error::ApiError;
use crate::timestamp::Timestamp;
use crate::truthy::is_truthy;

/// The provider a link is for. The spec's path says `web3` where the real provider's name stands.
pub const WEB3_PROVIDER: &str = "web3";

#[derive(Deserialize)]
struct LinkBody<'a> {
    #[serde(borrow)]
    payload: Option<&'a RawValue>,
}

/// The deepest nesting of arrays and objects accepted in a payload.
pub const MAX_PAYLOAD_DEPTH: usize = 64;

/// Reads `{"payload": <any JSON>}`: a JSON object (other members are ignored, a repeated
/// `payload` is refused) whose `payload` is truthy and nested at most [`MAX_PAYLOAD_DEPTH`]
/// levels deep. Returns the payload's exact text.
pub fn parse_link_body(body: &[u8]) -> Result<&RawValue, ApiError> {
    let first = body
        .iter()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'));
    let parsed = serde_json::from_slice::<LinkBody<'_>>(body);
    match (parsed, first) {
        (Ok(LinkBody { payload }), Some(b'{')) => match payload {
            Some(payload) if nesting_exceeds(payload.get(), MAX_PAYLOAD_DEPTH) => {
                Err(ApiError::bad_request(
                    "invalid_payload",
                    format!("The payload is nested deeper than {MAX_PAYLOAD_DEPTH} levels."),
                ))
            }
            Some(payload) if is_truthy(payload) => Ok(payload),
            _ => Err(ApiError::bad_request(
                "invalid_payload",
                "The body's 'payload' member is required and must be truthy (not false, 0, \"\" or null).",
            )),
        },
        (Err(error), _) if error.is_syntax() || error.is_eof() => Err(ApiError::bad_request(
            "invalid_json",
            "The request body is not valid JSON.",
        )),
        _ => Err(ApiError::bad_request(
            "invalid_body",
            "The request body must be a JSON object with a single 'payload' member.",
        )),
    }
}

/// Whether the arrays and objects of a valid JSON text nest deeper than `max`.
fn nesting_exceeds(json: &str, max: usize) -> bool {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for byte in json.bytes() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// What is written for a link: linking again replaces the payload and e-mail and keeps the first
/// `linkedAt`.
#[derive(Debug, Clone, Copy)]
pub struct LinkUpsert<'a> {
    pub user_id: &'a str,
    pub email: Option<&'a str>,
    pub provider: &'static str,
    pub payload: &'a RawValue,
    pub at: Timestamp,
}

/// The stored link, as read back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Web3Link {
    pub user_id: String,
    pub email: Option<String>,
    pub provider: String,
    /// The payload's exact JSON text.
    pub payload: String,
    pub linked_at: Timestamp,
    pub updated_at: Timestamp,
}

/// `{"success": true, "data": {"userId", "email"}}`.
#[derive(Debug, Serialize)]
pub struct LinkResponse<'a> {
    pub success: bool,
    pub data: LinkResponseData<'a>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LinkResponseData<'a> {
    pub user_id: &'a str,
    pub email: Option<&'a str>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(body: &str) -> &'static str {
        match parse_link_body(body.as_bytes()) {
            Ok(_) => "ok",
            Err(error) => error.code(),
        }
    }

    #[test]
    fn truthy_payload_is_returned_exactly() {
        for (body, payload) in [
            (
                r#"{"payload": {"address": "0xabc"}}"#,
                r#"{"address": "0xabc"}"#,
            ),
            (
                r#"{"payload":1.000000000000000000000000000001}"#,
                "1.000000000000000000000000000001",
            ),
            (r#"{"payload":1e400,"other":true}"#, "1e400"),
            (r#"  {"payload": "0"}  "#, r#""0""#),
            (r#"{"payload":[]}"#, "[]"),
        ] {
            assert_eq!(parse_link_body(body.as_bytes()).unwrap().get(), payload);
        }
    }

    #[test]
    fn falsy_or_missing_payload_is_invalid_payload() {
        for body in [
            r#"{}"#,
            r#"{"payload":null}"#,
            r#"{"payload":false}"#,
            r#"{"payload":""}"#,
            r#"{"payload":0}"#,
            r#"{"payload":-0.0e3}"#,
            r#"{"Payload":1}"#,
        ] {
            assert_eq!(code(body), "invalid_payload", "{body}");
        }
    }

    #[test]
    fn nesting_is_limited_and_brackets_in_strings_do_not_count() {
        let nested = |depth: usize| {
            format!(
                r#"{{"payload":{}{}}}"#,
                "[".repeat(depth),
                "]".repeat(depth)
            )
        };
        assert_eq!(code(&nested(MAX_PAYLOAD_DEPTH)), "ok");
        assert_eq!(code(&nested(MAX_PAYLOAD_DEPTH + 1)), "invalid_payload");
        let in_string = format!(
            r#"{{"payload":"{}\"{}"}}"#,
            "[".repeat(200),
            "{".repeat(200)
        );
        assert_eq!(code(&in_string), "ok");
    }

    #[test]
    fn malformed_and_non_object_bodies() {
        for body in [
            "",
            "{",
            r#"{"payload":1"#,
            r#"{"payload":1} x"#,
            "nul",
            r#"{"payload":tru}"#,
        ] {
            assert_eq!(code(body), "invalid_json", "{body}");
        }
        for body in [
            "[1]",
            r#"[{"a":1}]"#,
            "1",
            r#""payload""#,
            "null",
            r#"{"payload":1,"payload":2}"#,
        ] {
            assert_eq!(code(body), "invalid_body", "{body}");
        }
    }
}
