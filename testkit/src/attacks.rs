//! Hostile session tokens: every trick a verifier must refuse, each signed or forged against the
//! test keys and the test issuer and audience of [`crate::tokens`].

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};

use crate::tokens::{TestKey, claims, jwks_json, now};

fn with(mut claims: Value, key: &str, value: Value) -> Value {
    claims[key] = value;
    claims
}

fn without(mut claims: Value, key: &str) -> Value {
    claims
        .as_object_mut()
        .expect("claims are an object")
        .remove(key);
    claims
}

fn header_with(key: TestKey, change: impl FnOnce(&mut Header)) -> Header {
    let mut header = key.header();
    change(&mut header);
    header
}

/// (what it tries, the token). None may verify.
pub fn bad_tokens() -> Vec<(&'static str, String)> {
    let good = claims("victim", Some("victim@example.com"));
    let rsa = TestKey::Rsa;
    let mut cases: Vec<(&'static str, String)> = vec![
        (
            "expired",
            rsa.sign(&with(good.clone(), "exp", json!(now() - 3600))),
        ),
        (
            "nbf in the future",
            rsa.sign(&with(good.clone(), "nbf", json!(now() + 3600))),
        ),
        (
            "wrong iss",
            rsa.sign(&with(good.clone(), "iss", json!("https://evil.test"))),
        ),
        (
            "wrong aud",
            rsa.sign(&with(good.clone(), "aud", json!("other"))),
        ),
        ("missing aud", rsa.sign(&without(good.clone(), "aud"))),
        ("missing iss", rsa.sign(&without(good.clone(), "iss"))),
        ("missing sub", rsa.sign(&without(good.clone(), "sub"))),
        ("empty sub", rsa.sign(&with(good.clone(), "sub", json!("")))),
        (
            "a sub of 256 bytes",
            rsa.sign(&with(good.clone(), "sub", json!("s".repeat(256)))),
        ),
        (
            "crit naming an extension",
            rsa.sign_with_header(
                &header_with(rsa, |h| {
                    h.crit = Some(vec!["http://example.com/ext".into()])
                }),
                &good,
            ),
        ),
        (
            "crit naming a registered claim",
            rsa.sign_with_header(
                &header_with(rsa, |h| h.crit = Some(vec!["exp".into()])),
                &good,
            ),
        ),
        (
            "an empty crit",
            rsa.sign_with_header(&header_with(rsa, |h| h.crit = Some(Vec::new())), &good),
        ),
        (
            "numeric sub",
            rsa.sign(&with(good.clone(), "sub", json!(7))),
        ),
        ("missing exp", rsa.sign(&without(good.clone(), "exp"))),
        (
            "string exp",
            rsa.sign(&with(good.clone(), "exp", json!("SECRET-IN-EXP"))),
        ),
        (
            "a known kid signed by a foreign key",
            TestKey::ForeignRsa.sign(&good),
        ),
        (
            "unknown kid",
            rsa.sign_with_header(&header_with(rsa, |h| h.kid = Some("nobody".into())), &good),
        ),
        (
            "no kid",
            rsa.sign_with_header(&header_with(rsa, |h| h.kid = None), &good),
        ),
        (
            "ES256 under an RSA kid",
            TestKey::Ec.sign_with_header(
                &header_with(TestKey::Ec, |h| h.kid = Some("test-rsa".into())),
                &good,
            ),
        ),
        (
            "PS256 on an RS256 key",
            rsa.sign_with_header(&header_with(rsa, |h| h.alg = Algorithm::PS256), &good),
        ),
        ("empty", String::new()),
        ("one segment", "abc".into()),
        ("two segments", "abc.def".into()),
        ("four segments", format!("{}.x", rsa.sign(&good))),
        ("bad base64", "!!!.@@@.###".into()),
        (
            "non-JSON header",
            format!(
                "{}.{}.sig",
                URL_SAFE_NO_PAD.encode("not json"),
                URL_SAFE_NO_PAD.encode("{}")
            ),
        ),
        // Values the token library quotes in its errors (serde_json's messages): never logged.
        (
            "an unknown alg",
            format!(
                "{}.{}.sig",
                URL_SAFE_NO_PAD.encode(r#"{"alg":"SECRET-IN-ALG","kid":"test-rsa"}"#),
                URL_SAFE_NO_PAD.encode(good.to_string())
            ),
        ),
        (
            "crit of the wrong type",
            format!(
                "{}.{}.sig",
                URL_SAFE_NO_PAD
                    .encode(r#"{"alg":"RS256","kid":"test-rsa","crit":"SECRET-IN-CRIT"}"#),
                URL_SAFE_NO_PAD.encode(good.to_string())
            ),
        ),
        (
            "non-JSON claims",
            format!(
                "{}.{}.sig",
                URL_SAFE_NO_PAD.encode(r#"{"alg":"RS256","kid":"test-rsa"}"#),
                URL_SAFE_NO_PAD.encode("nope")
            ),
        ),
        (
            "oversized",
            format!(
                "{}.{}.{}",
                "a".repeat(4000),
                "b".repeat(4000),
                "c".repeat(4000)
            ),
        ),
    ];

    // alg none: an unsigned token, with and without a trailing signature part.
    let none_header = URL_SAFE_NO_PAD.encode(r#"{"alg":"none","typ":"JWT","kid":"test-rsa"}"#);
    let payload = URL_SAFE_NO_PAD.encode(good.to_string());
    cases.push(("alg none", format!("{none_header}.{payload}.")));
    cases.push((
        "alg none, no signature part",
        format!("{none_header}.{payload}"),
    ));
    // HS256 signed with the RSA public key as the secret (its JWK, its modulus).
    let jwk: Value =
        serde_json::from_str::<Value>(&jwks_json()).expect("fixture JWKS")["keys"][0].clone();
    for secret in [
        jwk.to_string(),
        jwk["n"].as_str().expect("modulus").to_owned(),
    ] {
        let hs = Header {
            kid: Some("test-rsa".into()),
            ..Header::new(Algorithm::HS256)
        };
        let token = jsonwebtoken::encode(&hs, &good, &EncodingKey::from_secret(secret.as_bytes()))
            .expect("HS256");
        cases.push(("HS256 with the RSA public key as secret", token));
    }

    // Tampering after signing: claims, header, signature.
    let token = rsa.sign(&good);
    let parts: Vec<&str> = token.split('.').collect();
    let forged_claims =
        URL_SAFE_NO_PAD.encode(with(good.clone(), "sub", json!("admin")).to_string());
    cases.push((
        "claims tampered after signing",
        format!("{}.{forged_claims}.{}", parts[0], parts[2]),
    ));
    let forged_header =
        URL_SAFE_NO_PAD.encode(r#"{"alg":"RS256","kid":"test-rsa","typ":"JWT","x":1}"#);
    cases.push((
        "header tampered after signing",
        format!("{forged_header}.{}.{}", parts[1], parts[2]),
    ));
    let mut signature = URL_SAFE_NO_PAD.decode(parts[2]).expect("signature");
    signature[0] ^= 1;
    cases.push((
        "signature flipped",
        format!(
            "{}.{}.{}",
            parts[0],
            parts[1],
            URL_SAFE_NO_PAD.encode(signature)
        ),
    ));
    cases.push(("signature removed", format!("{}.{}.", parts[0], parts[1])));
    cases
}

/// Forwarded headers lambda_http builds a request's URI from (`{x-forwarded-proto}://{host}`)
/// with values that make no URI: lambda_http alone panics on each, killing the process.
pub const HEADERS_THAT_MAKE_NO_URI: [(&str, &str); 7] = [
    ("x-forwarded-proto", "http, https"),
    ("x-forwarded-proto", "https,https"),
    ("x-forwarded-proto", ""),
    ("x-forwarded-proto", "h_t"),
    ("host", "example.com:99999"),
    ("host", "[::1"),
    ("host", "a%zz"),
];
