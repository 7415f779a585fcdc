//! Body tricks against the link handler: each its precise status and code.

use super::*;

/// (what, content type, body, base64-encoded by API Gateway, status, code)
type BodyCase = (
    &'static str,
    Option<&'static str>,
    Vec<u8>,
    bool,
    u16,
    &'static str,
);

fn body_cases() -> Vec<BodyCase> {
    let json = Some("application/json");
    let payload = |value: &str| format!(r#"{{"payload":{value}}}"#).into_bytes();
    let mut cases: Vec<BodyCase> = Vec::new();
    for falsy in [
        "false", "null", r#""""#, "0", "-0", "0.0", "-0.0", "0e5", "0E-5", "-0.0e+10", "0.000000",
        // JavaScript reads these as 0: too small for a double.
        "1e-400", "-1e-400", "2e-324",
    ] {
        cases.push((
            "falsy payload",
            json,
            payload(falsy),
            false,
            400,
            "invalid_payload",
        ));
    }
    cases.push((
        "missing payload",
        json,
        b"{}".to_vec(),
        false,
        400,
        "invalid_payload",
    ));
    cases.push((
        "payload under another case",
        json,
        br#"{"Payload":1}"#.to_vec(),
        false,
        400,
        "invalid_payload",
    ));
    for truthy in [
        "{}",
        "[]",
        r#""0""#,
        r#""false""#,
        r#"" ""#,
        r#""\u0000""#,
        "5e-324",
        "1e400",
        "-1",
        "0.0001",
        "true",
        "[0]",
        r#"{"a":null}"#,
        "123456789012345678901234567890",
    ] {
        cases.push(("truthy payload", json, payload(truthy), false, 200, "ok"));
    }
    for malformed in [
        "",
        " ",
        "{",
        r#"{"payload":"#,
        r#"{"payload":1"#,
        r#"{"payload":tru}"#,
        "{'payload':1}",
        r#"{"payload":01}"#,
        r#"{"payload":1,}"#,
        r#"{"payload":NaN}"#,
        r#"{"payload":Infinity}"#,
        r#"{"payload":.5}"#,
        r#"{"payload":+1}"#,
        r#"{"payload":1} {}"#,
        r#"{"payload":1}x"#,
        "{\"payload\":1}\u{0}",
        r#"{"payload":"unterminated}"#,
        r#"{"payload":"bad \x escape"}"#,
        "\u{feff}{\"payload\":1}",
    ] {
        cases.push((
            "malformed or trailing JSON",
            json,
            malformed.as_bytes().to_vec(),
            false,
            400,
            "invalid_json",
        ));
    }
    for not_object in [
        "[]",
        r#"[{"payload":1}]"#,
        r#""payload""#,
        "1",
        "null",
        "true",
    ] {
        cases.push((
            "not an object",
            json,
            not_object.as_bytes().to_vec(),
            false,
            400,
            "invalid_body",
        ));
    }
    for duplicate in [
        r#"{"payload":1,"payload":2}"#,
        r#"{"payload":0,"payload":1}"#,
    ] {
        cases.push((
            "duplicate payload",
            json,
            duplicate.as_bytes().to_vec(),
            false,
            400,
            "invalid_body",
        ));
    }
    let nested = |depth: usize| payload(&format!("{}{}", "[".repeat(depth), "]".repeat(depth)));
    cases.push(("nested 64 deep", json, nested(64), false, 200, "ok"));
    cases.push((
        "nested 65 deep",
        json,
        nested(65),
        false,
        400,
        "invalid_payload",
    ));
    cases.push((
        "nested 30000 deep",
        json,
        nested(30_000),
        false,
        400,
        "invalid_payload",
    ));
    cases.push((
        "unclosed nesting to the limit",
        json,
        payload(&"[".repeat(DEFAULT_MAX_BODY_BYTES - 20)),
        false,
        400,
        "invalid_json",
    ));
    cases.push((
        "invalid UTF-8",
        json,
        b"{\"payload\":\"\xff\xfe\"}".to_vec(),
        true,
        400,
        "invalid_json",
    ));
    cases.push((
        "overlong UTF-8",
        json,
        b"{\"payload\":\"\xc0\xaf\"}".to_vec(),
        true,
        400,
        "invalid_json",
    ));
    cases.push((
        "invalid UTF-8 in a member the handler does not keep",
        json,
        b"{\"payload\":{\"address\":\"0x1\"},\"note\":\"\xff\xfe\xc0\xaf\"}".to_vec(),
        true,
        400,
        "invalid_json",
    ));
    cases.push((
        "base64 body from API Gateway",
        json,
        payload(r#"{"a":1}"#),
        true,
        200,
        "ok",
    ));
    let sized = |total: usize| {
        let padding = total - r#"{"payload":""}"#.len();
        format!(r#"{{"payload":"{}"}}"#, "x".repeat(padding)).into_bytes()
    };
    cases.push((
        "exactly the size limit",
        json,
        sized(DEFAULT_MAX_BODY_BYTES),
        false,
        200,
        "ok",
    ));
    cases.push((
        "one byte over the limit",
        json,
        sized(DEFAULT_MAX_BODY_BYTES + 1),
        false,
        413,
        "payload_too_large",
    ));
    cases.push((
        "a megabyte",
        json,
        sized(1 << 20),
        true,
        413,
        "payload_too_large",
    ));
    let good = payload("1");
    for (content_type, status, code) in [
        (None, 415, "unsupported_media_type"),
        (Some("text/plain"), 415, "unsupported_media_type"),
        (
            Some("application/x-www-form-urlencoded"),
            415,
            "unsupported_media_type",
        ),
        (
            Some("multipart/form-data; boundary=x"),
            415,
            "unsupported_media_type",
        ),
        (
            Some("application/json-patch+json"),
            415,
            "unsupported_media_type",
        ),
        (Some("application/jsonp"), 415, "unsupported_media_type"),
        (
            Some("application/json, text/plain"),
            415,
            "unsupported_media_type",
        ),
        (Some(""), 415, "unsupported_media_type"),
        (Some("application/json; charset=utf-8"), 200, "ok"),
        (Some("APPLICATION/JSON"), 200, "ok"),
        (Some(" application/json ;charset=UTF-8"), 200, "ok"),
    ] {
        cases.push((
            "content type",
            content_type,
            good.clone(),
            false,
            status,
            code,
        ));
    }
    cases
}

#[tokio::test]
async fn body_attacks_get_their_precise_status() {
    let (logs, _guard) = testkit::logs::capture();
    let state = link_state();
    let valid = token("body-user", Some("body.user@example.com"));
    let cases = body_cases();
    for (name, content_type, body, base64, status, code) in &cases {
        let mut event = ApiEvent::post("/api/web3-link")
            .bearer(&valid)
            .body(body.clone());
        if let Some(content_type) = content_type {
            event = event.header("content-type", content_type);
        }
        if *base64 {
            event = event.base64();
        }
        let response = call(web3_link_routes(), &state, event.request()).await;
        let shown = String::from_utf8_lossy(&body[..body.len().min(60)]).into_owned();
        assert_eq!(
            outcome(&response),
            (*status, (*code).to_owned()),
            "{name}: {shown}"
        );
    }
    logs.assert_free_of(&[valid.as_str(), "body.user@example.com", "VICTIM"]);
}
