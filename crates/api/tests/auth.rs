//! Session-token verification: every rejection, every supported algorithm, and the JWKS cache
//! against a real HTTP endpoint on loopback.

use std::time::Duration;

use api::auth::{JwksCache, TokenVerifier};
use api::config::{AuthConfig, Source};
use api::http::error::ApiError;
use serde_json::{Value, json};
use testkit::http_stub::{HttpStub, Reply};
use testkit::tokens::{AUDIENCE, ISSUER, TestKey, claims, jwks_json, now};

fn config(extra: &[(&str, &str)]) -> AuthConfig {
    struct Vars(Vec<(String, String)>);
    impl Source for Vars {
        fn get(&self, name: &str) -> Option<String> {
            self.0
                .iter()
                .rev()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        }
    }
    let mut vars = vec![
        ("AUTH_ISSUER".to_owned(), ISSUER.to_owned()),
        ("AUTH_AUDIENCE".to_owned(), AUDIENCE.to_owned()),
    ];
    if !extra.iter().any(|(k, _)| *k == "AUTH_JWKS_URL") {
        vars.push(("AUTH_JWKS".into(), jwks_json()));
    }
    vars.extend(
        extra
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
    );
    AuthConfig::from_source(&Vars(vars)).expect("valid auth config")
}

fn verifier(extra: &[(&str, &str)]) -> TokenVerifier {
    TokenVerifier::from_config(&config(extra)).expect("verifier")
}

async fn reason(verifier: &TokenVerifier, token: &str) -> String {
    match verifier.verify(token).await {
        Ok(identity) => panic!("accepted: {identity:?}"),
        Err(ApiError::InvalidToken { reason, .. }) => reason,
        Err(other) => panic!("expected 401, got {other:?}"),
    }
}

#[tokio::test]
async fn valid_tokens_of_every_supported_algorithm() {
    let verifier = verifier(&[]);
    for key in [TestKey::Rsa, TestKey::Ec, TestKey::Ed25519] {
        let identity = verifier
            .verify(&key.sign(&claims("user_1", Some("fan@example.com"))))
            .await
            .unwrap();
        assert_eq!(identity.user_id.as_str(), "user_1", "{key:?}");
        assert_eq!(identity.email.as_deref(), Some("fan@example.com"));
    }
}

#[tokio::test]
async fn email_is_null_when_absent_or_not_a_string_and_its_claim_is_configurable() {
    let verifier = verifier(&[]);
    let identity = verifier
        .verify(&TestKey::Rsa.sign(&claims("u", None)))
        .await
        .unwrap();
    assert_eq!(identity.email, None);
    let mut numeric = claims("u", None);
    numeric["email"] = json!(42);
    assert_eq!(
        verifier
            .verify(&TestKey::Rsa.sign(&numeric))
            .await
            .unwrap()
            .email,
        None
    );

    let custom = self::verifier(&[("AUTH_EMAIL_CLAIM", "https://example.com/email")]);
    let mut with_custom = claims("u", Some("ignored@example.com"));
    with_custom["https://example.com/email"] = json!("custom@example.com");
    assert_eq!(
        custom
            .verify(&TestKey::Rsa.sign(&with_custom))
            .await
            .unwrap()
            .email
            .as_deref(),
        Some("custom@example.com")
    );
}

#[tokio::test]
async fn audience_may_be_one_of_several_and_is_optional_when_not_configured() {
    let verifier = verifier(&[]);
    let mut several = claims("u", None);
    several["aud"] = json!(["other", AUDIENCE]);
    assert!(verifier.verify(&TestKey::Rsa.sign(&several)).await.is_ok());

    let no_audience = TokenVerifier::new(
        &AuthConfig {
            audience: None,
            ..config(&[])
        },
        JwksCache::from_config(&config(&[])).unwrap(),
    );
    let mut without = claims("u", None);
    without.as_object_mut().unwrap().remove("aud");
    assert!(
        no_audience
            .verify(&TestKey::Rsa.sign(&without))
            .await
            .is_ok()
    );
}

fn with(mut claims: Value, key: &str, value: Value) -> Value {
    claims[key] = value;
    claims
}

#[tokio::test]
async fn time_claims_honour_the_leeway() {
    let verifier = verifier(&[("AUTH_LEEWAY_SECONDS", "30")]);
    let base = claims("u", None);
    assert!(
        verifier
            .verify(&TestKey::Rsa.sign(&with(base.clone(), "exp", json!(now() - 10))))
            .await
            .is_ok()
    );
    assert!(
        verifier
            .verify(&TestKey::Rsa.sign(&with(base.clone(), "nbf", json!(now() + 10))))
            .await
            .is_ok()
    );
    let expired = verifier
        .verify(&TestKey::Rsa.sign(&with(base.clone(), "exp", json!(now() - 60))))
        .await;
    assert!(matches!(
        expired,
        Err(ApiError::InvalidToken {
            message: "The session token has expired.",
            ..
        })
    ));
    assert!(
        reason(
            &verifier,
            &TestKey::Rsa.sign(&with(base, "nbf", json!(now() + 60)))
        )
        .await
        .contains("not valid yet (nbf)")
    );
}

#[tokio::test]
async fn every_bad_token_is_refused() {
    let verifier = verifier(&[]);
    for (name, token) in testkit::attacks::bad_tokens() {
        let result = verifier.verify(&token).await;
        assert!(
            matches!(result, Err(ApiError::InvalidToken { .. })),
            "{name}: {result:?}"
        );
    }
    // And a valid token still works afterwards.
    assert!(
        verifier
            .verify(&testkit::tokens::token("u", None))
            .await
            .is_ok()
    );
}

/// A `sub` becomes key material: 255 bytes are accepted, 256 refused (as in `bad_tokens`), on
/// both stores alike, where a longer one was a 500 on DynamoDB and a 200 in memory.
#[tokio::test]
async fn a_sub_of_255_bytes_is_the_longest_accepted() {
    let sub = "s".repeat(domain::ids::MAX_USER_ID_BYTES);
    let identity = verifier(&[])
        .verify(&TestKey::Rsa.sign(&claims(&sub, None)))
        .await
        .unwrap();
    assert_eq!(identity.user_id.as_str(), sub);
    let longer = "s".repeat(domain::ids::MAX_USER_ID_BYTES + 1);
    assert_eq!(
        reason(&verifier(&[]), &TestKey::Rsa.sign(&claims(&longer, None))).await,
        "sub is not a string of 1-255 bytes"
    );
}

// --- Remote JWKS ---

fn remote_verifier(stub: &HttpStub, min_refresh_seconds: &str) -> TokenVerifier {
    verifier(&[
        ("AUTH_JWKS_URL", &stub.url("/.well-known/jwks.json")),
        ("AUTH_JWKS_MIN_REFRESH_SECONDS", min_refresh_seconds),
    ])
}

#[tokio::test]
async fn keys_are_fetched_once_and_cached() {
    let stub = HttpStub::start(Reply::Json(jwks_json())).await;
    let verifier = remote_verifier(&stub, "30");
    for key in [TestKey::Rsa, TestKey::Ec, TestKey::Ed25519, TestKey::Rsa] {
        verifier
            .verify(&key.sign(&claims("u", None)))
            .await
            .unwrap();
    }
    assert_eq!((stub.hits(), verifier.keys().fetch_attempts()), (1, 1));
}

#[tokio::test]
async fn unknown_kids_refetch_at_most_once_per_min_refresh() {
    let stub = HttpStub::start(Reply::Json(jwks_json())).await;
    let verifier = remote_verifier(&stub, "30");
    verifier
        .verify(&testkit::tokens::token("u", None))
        .await
        .unwrap();
    let mut header = TestKey::Rsa.header();
    header.kid = Some("rotated-away".into());
    let forged = TestKey::Rsa.sign_with_header(&header, &claims("u", None));
    for _ in 0..50 {
        assert!(matches!(
            verifier.verify(&forged).await,
            Err(ApiError::InvalidToken { .. })
        ));
    }
    assert_eq!(
        stub.hits(),
        1,
        "the first unknown kid may not refetch within 30 s of the first fetch"
    );
}

#[tokio::test]
async fn a_rotated_key_is_accepted_without_a_restart() {
    let stub = HttpStub::start(Reply::Json(jwks_json())).await;
    let verifier = remote_verifier(&stub, "1");
    verifier
        .verify(&testkit::tokens::token("u", None))
        .await
        .unwrap();

    // The provider rotates a new key in, under a new kid.
    let mut new_key: Value =
        serde_json::from_str(&testkit::tokens::fixture("rsa-foreign.jwk.json")).unwrap();
    new_key["kid"] = json!("rotated");
    stub.set(Reply::Json(json!({ "keys": [new_key] }).to_string()));
    let mut header = TestKey::ForeignRsa.header();
    header.kid = Some("rotated".into());
    let rotated = TestKey::ForeignRsa.sign_with_header(&header, &claims("u", None));

    assert!(
        matches!(
            verifier.verify(&rotated).await,
            Err(ApiError::InvalidToken { .. })
        ),
        "within min refresh: no refetch"
    );
    assert_eq!(stub.hits(), 1);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert_eq!(
        verifier.verify(&rotated).await.unwrap().user_id.as_str(),
        "u"
    );
    assert_eq!(stub.hits(), 2);
}

#[tokio::test]
async fn no_keys_and_no_jwks_is_503_not_401() {
    for reply in [
        Reply::Status(500),
        Reply::Status(404),
        Reply::Json("garbage".into()),
        Reply::Json(r#"{"keys":[]}"#.into()),
        Reply::Delay(Duration::from_secs(5), Box::new(Reply::Json(jwks_json()))),
    ] {
        let stub = HttpStub::start(reply.clone()).await;
        let verifier = remote_verifier(&stub, "30");
        let result = verifier.verify(&testkit::tokens::token("u", None)).await;
        assert!(
            matches!(result, Err(ApiError::Unavailable { .. })),
            "{reply:?}: {result:?}"
        );
    }
    // Connection refused.
    let url = format!("http://127.0.0.1:{}/jwks", testkit::free_port());
    let verifier = verifier(&[("AUTH_JWKS_URL", &url)]);
    assert!(matches!(
        verifier.verify(&testkit::tokens::token("u", None)).await,
        Err(ApiError::Unavailable { .. })
    ));
}

#[tokio::test]
async fn cached_keys_keep_working_while_a_refresh_fails_and_recovery_follows() {
    let stub = HttpStub::start(Reply::Status(503)).await;
    let verifier = remote_verifier(&stub, "1");
    let token = testkit::tokens::token("u", None);
    assert!(matches!(
        verifier.verify(&token).await,
        Err(ApiError::Unavailable { .. })
    ));
    // The provider recovers: with no key cached, the next try comes after a short wait.
    stub.set(Reply::Json(jwks_json()));
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert!(verifier.verify(&token).await.is_ok());
    // It fails again: cached keys still verify, an unknown kid is a 401 (not a 503).
    stub.set(Reply::Status(500));
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let mut header = TestKey::Rsa.header();
    header.kid = Some("unknown".into());
    assert!(matches!(
        verifier
            .verify(&TestKey::Rsa.sign_with_header(&header, &claims("u", None)))
            .await,
        Err(ApiError::InvalidToken { .. })
    ));
    assert!(verifier.verify(&token).await.is_ok());
    assert_eq!(stub.hits(), 3);
}
