//! Property tests at scale over token, header, body, cursor and limit parsing.

use super::*;

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
                prop_assert!(domain::packs::is_valid_id(key.pack_id()));
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
