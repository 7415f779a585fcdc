//! Hostile requests against both handlers: every token trick, every body trick, every bad query,
//! and property tests at scale over token, header, body, cursor and limit parsing. Each must give
//! its precise 4xx with the JSON error body (never a panic, never a 5xx, never a 200 it should not
//! be), a valid request must still work afterwards, and the logs must hold no secret.

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use proptest::prelude::*;
use serde_json::Value;
use shared::handlers::list_packs::ListPacksState;
use shared::handlers::list_packs::parse_limit;
use shared::handlers::web3_link::LinkState;
use shared::handlers::web3_link::parse_link_body;
use shared::http::request::DEFAULT_MAX_BODY_BYTES;
use shared::http::routes::{list_packs_routes, web3_link_routes};
use shared::packs::listing::{InvalidCursor, ListingKey};
use shared::store::MemoryStore;
use shared::timestamp::Timestamp;
use std::sync::Arc;
use testkit::events::{ApiEvent, call, parts};
use testkit::packs::active;
use testkit::tokens::token;

fn link_state() -> Arc<LinkState<MemoryStore>> {
    testkit::link_state(MemoryStore::default())
}

fn list_state() -> Arc<ListPacksState<MemoryStore>> {
    let packs: Vec<_> = (0..5)
        .map(|i| active(&format!("p{i}"), 10 * (i + 1)))
        .collect();
    Arc::new(ListPacksState {
        store: MemoryStore::with_packs(&packs),
        cursors: testkit::cursor_signer(),
    })
}

/// Status and error code (`"ok"` for a success), after checking the response is JSON with the
/// API's error shape on failure.
fn outcome(response: &lambda_http::Response<lambda_http::Body>) -> (u16, String) {
    assert_eq!(response.headers()["content-type"], "application/json");
    let (status, body) = parts(response);
    if status == 200 {
        return (status, "ok".into());
    }
    assert_eq!(body["success"], false, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()),
        "{body}"
    );
    (
        status,
        body["error"]["code"]
            .as_str()
            .expect("error code")
            .to_owned(),
    )
}

fn link_event(authorization: Option<&str>) -> ApiEvent {
    let event = ApiEvent::post("/api/web3-link");
    let event = match authorization {
        Some(value) => event.header("authorization", value),
        None => event,
    };
    event.json(r#"{"payload":{"wallet":"0xVICTIMWALLET"}}"#)
}

#[tokio::test]
async fn token_attacks_get_401_with_json_and_www_authenticate() {
    let (logs, _guard) = testkit::logs::capture();
    let state = link_state();
    let bad = testkit::attacks::bad_tokens();
    let mut headers: Vec<(String, String)> = bad
        .iter()
        .map(|(name, t)| ((*name).to_owned(), format!("Bearer {t}")))
        .collect();
    let valid = token("victim", Some("victim@example.com"));
    for (name, value) in [
        ("Bearer with no token", "Bearer".to_owned()),
        ("Bearer and spaces", "Bearer    ".to_owned()),
        ("Basic scheme", "Basic dmljdGltOnBhc3N3b3Jk".to_owned()),
        ("Token scheme", format!("Token {valid}")),
        (
            "Digest scheme",
            r#"Digest username="victim", realm="x""#.to_owned(),
        ),
        ("token without scheme", valid.clone()),
        (
            "two tokens, comma-joined",
            format!("Bearer {valid},Bearer {valid}"),
        ),
        ("Bearer with a tab", format!("Bearer\t{valid}")),
        ("oversized header", format!("Bearer {}", "a".repeat(20_000))),
    ] {
        headers.push((name.to_owned(), value));
    }
    headers.push(("no header".into(), String::new()));

    for (name, header) in &headers {
        let event = link_event((!header.is_empty()).then_some(header.as_str()));
        let response = call(web3_link_routes(), &state, event.request()).await;
        let (status, code) = outcome(&response);
        assert_eq!(status, 401, "{name}");
        assert!(
            code == "invalid_token" || code == "missing_token",
            "{name}: {code}"
        );
        let challenge = response.headers()["www-authenticate"].to_str().unwrap();
        assert!(
            challenge.starts_with(r#"Bearer realm="fan-api""#),
            "{name}: {challenge}"
        );
    }
    let response = call(
        web3_link_routes(),
        &state,
        link_event(Some(&format!("Bearer {valid}"))).request(),
    )
    .await;
    assert_eq!(
        outcome(&response),
        (200, "ok".into()),
        "a valid token still works"
    );

    let mut secrets: Vec<String> = bad
        .iter()
        .filter(|(_, t)| t.len() > 16)
        .map(|(_, t)| t.clone())
        .collect();
    secrets.extend(
        bad.iter()
            .filter_map(|(_, t)| t.rsplit('.').next())
            .filter(|s| s.len() > 16)
            .map(str::to_owned),
    );
    secrets.extend([
        valid.clone(),
        "victim@example.com".into(),
        "0xVICTIMWALLET".into(),
        // Marks what the bad tokens carry in their header and claims.
        "SECRET-IN-".into(),
    ]);
    logs.assert_free_of(&secrets);
}

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

#[tokio::test]
async fn query_attacks_get_400_and_a_real_cursor_still_works() {
    let (logs, _guard) = testkit::logs::capture();
    let state = list_state();
    let (status, first) = parts(
        &call(
            list_packs_routes(),
            &state,
            ApiEvent::get("/api/packs").query("limit=2").request(),
        )
        .await,
    );
    assert_eq!(status, 200);
    let cursor = first["nextCursor"].as_str().unwrap().to_owned();

    let signer = testkit::cursor_signer();
    let (payload, tag) = cursor.split_once('.').unwrap();
    let decoded = String::from_utf8(URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap();
    let with_tag = |text: &str| format!("{}.{tag}", URL_SAFE_NO_PAD.encode(text));
    let mut flipped = cursor.clone().into_bytes();
    let last = flipped.len() - 1;
    flipped[last] = if flipped[last] == b'A' { b'B' } else { b'A' };
    let future = signer.encode(&ListingKey::new(
        Timestamp::parse("2099-01-01T00:00:00Z").unwrap(),
        "p0",
    ));
    let mut queries: Vec<String> = [
        "0",
        "-1",
        "101",
        "1e2",
        "0x10",
        "%205",
        "5%20",
        "",
        "five",
        "99999999999999999999",
        "%00",
        "1;2",
        "1.0",
        "+5",
    ]
    .iter()
    .map(|limit| format!("limit={limit}"))
    .collect();
    queries.push("limit=5&limit=5".into());
    for bad_cursor in [
        String::from_utf8(flipped).unwrap(),
        cursor[..cursor.len() - 3].to_owned(),
        payload.to_owned(),
        format!("{cursor}="),
        format!("{cursor}A"),
        format!("{}.{tag}", STANDARD.encode(&decoded)),
        with_tag(&decoded.replace("#p1", "#p4")),
        with_tag(&decoded.replacen("1:", "2:", 1)),
        with_tag(&format!("{decoded}#extra")),
        with_tag(&format!("1:{}#p0", "9".repeat(21))),
        testkit::cursor_signer()
            .encode(&ListingKey::parse(&decoded[2..]).unwrap())
            .replace('.', ".x"),
        shared::packs::listing::CursorSigner::new(b"another-deployment-secret-0123456789")
            .encode(&ListingKey::parse(&decoded[2..]).unwrap()),
        future,
        "A".repeat(300),
        "%FF%FE".into(),
        "null".into(),
    ] {
        queries.push(format!("cursor={bad_cursor}"));
    }
    queries.push(format!("cursor={cursor}&cursor={cursor}"));
    for query in &queries {
        let response = call(
            list_packs_routes(),
            &state,
            ApiEvent::get("/api/packs").query(query).request(),
        )
        .await;
        let (status, code) = outcome(&response);
        assert_eq!(status, 400, "{query}");
        assert!(
            ["invalid_limit", "invalid_cursor", "invalid_query"].contains(&code.as_str()),
            "{query}: {code}"
        );
    }
    let (status, next) = parts(
        &call(
            list_packs_routes(),
            &state,
            ApiEvent::get("/api/packs")
                .query(&format!("limit=2&cursor={cursor}"))
                .request(),
        )
        .await,
    );
    assert_eq!(status, 200);
    assert_eq!(next["packs"][0]["id"], "p2");
    assert!(!logs.text().is_empty());
}

// --- Property tests at scale ---

fn block_on<F: Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}

/// A JSON value whose numbers are what serde_json writes (so JavaScript's reading of them is the
/// reference): falsy exactly when null, false, 0 or "".
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        Just(Value::from(0)),
        Just(Value::from(0.0)),
        Just(Value::from(-0.0)),
        ".{0,8}".prop_map(Value::String),
        Just(Value::String(String::new())),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(".{0,6}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// The numbers where a digit rule and JavaScript part ways (zeros, the edge of the doubles'
/// range at both ends), judged by Node itself: `!!JSON.parse(text)`.
#[test]
fn numeric_payloads_are_truthy_exactly_when_node_says_so() {
    let mut numbers = vec!["0.0000000000000000000000000001".to_owned()];
    for sign in ["", "-"] {
        for mantissa in [
            "0", "0.0", "1", "2", "2.4", "2.47", "2.48", "2.5", "4.9", "5", "9.99",
        ] {
            for exponent in (-345..-300).chain(-3..3).chain(300..312) {
                numbers.push(format!("{sign}{mantissa}e{exponent}"));
            }
        }
    }
    let script = "const lines = require('fs').readFileSync(0, 'utf8').trim().split('\\n');\n\
                  console.log(lines.map((n) => (JSON.parse(n) ? 1 : 0)).join(''));";
    let mut node = std::process::Command::new("node")
        .args(["-e", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("node (README: Node is part of the machine) runs");
    use std::io::Write;
    node.stdin
        .take()
        .unwrap()
        .write_all(numbers.join("\n").as_bytes())
        .unwrap();
    let output = node.wait_with_output().unwrap();
    assert!(output.status.success());
    let verdicts = String::from_utf8(output.stdout).unwrap();
    let verdicts: Vec<bool> = verdicts.trim().chars().map(|c| c == '1').collect();
    assert_eq!(verdicts.len(), numbers.len());
    let disagreements: Vec<_> = numbers
        .iter()
        .zip(&verdicts)
        .filter(|(number, truthy)| {
            let body = format!(r#"{{"payload":{number}}}"#);
            parse_link_body(body.as_bytes()).is_ok() != **truthy
        })
        .collect();
    assert!(
        disagreements.is_empty(),
        "{} disagree, among them {:?}",
        disagreements.len(),
        &disagreements[..disagreements.len().min(8)]
    );
    assert!(verdicts.iter().any(|v| *v) && verdicts.iter().any(|v| !*v));
}

fn javascript_truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 5000, ..ProptestConfig::default() })]

    #[test]
    fn truthiness_matches_javascript_on_any_json(value in json_value()) {
        let body = serde_json::json!({ "payload": value }).to_string();
        let parsed = parse_link_body(body.as_bytes());
        prop_assert_eq!(parsed.is_ok(), javascript_truthy(&value), "{}", body);
        if let Ok(raw) = parsed {
            prop_assert_eq!(raw.get(), serde_json::to_string(&value).unwrap(), "stored exactly as sent");
        }
    }

    #[test]
    fn arbitrary_bodies_never_panic_and_only_fail_with_400(body in prop::collection::vec(any::<u8>(), 0..512)) {
        if let Err(error) = parse_link_body(&body) {
            prop_assert_eq!(error.status().as_u16(), 400);
        }
    }

    #[test]
    fn json_shaped_bodies_never_panic(body in r#"[ \{\}\[\]":,0-9a-z.eE+\-\\]{0,200}"#) {
        if let Err(error) = parse_link_body(body.as_bytes()) {
            prop_assert_eq!(error.status().as_u16(), 400);
        }
    }

    #[test]
    fn random_strings_are_never_cursors(cursor in ".{0,120}|[A-Za-z0-9_\\-]{10,60}\\.[A-Za-z0-9_\\-]{22}") {
        let result = testkit::cursor_signer().decode(&cursor, Timestamp::now());
        prop_assert_eq!(result, Err(InvalidCursor));
    }

    #[test]
    fn signed_near_valid_positions_are_canonical_or_refused(
        version in "[0-9]:",
        digits in "[0-9]{19,23}",
        separator in "[#/:]",
        id in "[A-Za-z0-9_\\-#/.]{0,70}",
    ) {
        // Even a correctly signed cursor must name a well-formed, started position.
        let signer = testkit::cursor_signer();
        let text = format!("{version}{digits}{separator}{id}");
        let forged = match ListingKey::parse(&text[2..]) {
            Some(key) if version == "1:" => signer.encode(&key),
            _ => return Ok(()),
        };
        match signer.decode(&forged, Timestamp::now()) {
            Ok(key) => {
                prop_assert_eq!(signer.encode(&key), forged);
                prop_assert!(shared::packs::is_valid_id(key.pack_id()));
                prop_assert!(key.as_str() >= ListingKey::started_bound(Timestamp::now()).as_str());
            }
            Err(error) => prop_assert_eq!(error, InvalidCursor),
        }
    }

    #[test]
    fn limit_accepts_exactly_1_to_100(text in ".{0,5}|[0-9]{1,4}") {
        let expected = (text.len() <= 3 && text.bytes().all(|b| b.is_ascii_digit()))
            .then(|| text.parse::<usize>().ok())
            .flatten()
            .filter(|n| (1..=100).contains(n));
        prop_assert_eq!(parse_limit(Some(&text)).ok(), expected);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn random_authorization_headers_never_pass(header in "[ -~]{0,300}", bearer in any::<bool>()) {
        let value = if bearer { format!("Bearer {header}") } else { header };
        let state = link_state();
        let event = link_event((!value.trim().is_empty()).then_some(value.as_str()));
        let response = block_on(call(web3_link_routes(), &state, event.request()));
        prop_assert_eq!(response.status().as_u16(), 401);
    }

    #[test]
    fn random_token_shaped_strings_never_pass(
        alg in "(RS256|ES256|EdDSA|HS256|none|PS256|)",
        kid in "(test-rsa|test-ec|test-ed25519|x|)",
        claims in "[ -~]{0,80}",
        signature in "[A-Za-z0-9_\\-]{0,400}",
    ) {
        let header = URL_SAFE_NO_PAD.encode(format!(r#"{{"alg":"{alg}","kid":"{kid}","typ":"JWT"}}"#));
        let token = format!("{header}.{}.{signature}", URL_SAFE_NO_PAD.encode(claims));
        let state = link_state();
        let response = block_on(call(web3_link_routes(), &state, link_event(Some(&format!("Bearer {token}"))).request()));
        prop_assert_eq!(response.status().as_u16(), 401);
    }
}
