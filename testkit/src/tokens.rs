//! Session tokens signed with the test keys of `fixtures/keys` (never used outside tests).

use std::time::{SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};

pub const ISSUER: &str = "https://issuer.test";
pub const AUDIENCE: &str = "fan-api-test";

/// A test signing key and the `kid` the fixture JWKS knows it by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TestKey {
    Rsa,
    Ec,
    Ed25519,
    /// Not in the JWKS; signs under the RSA key's `kid`.
    ForeignRsa,
}

pub fn fixture(name: &str) -> String {
    let path = format!("{}/fixtures/keys/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The JWKS document holding the public halves of `Rsa`, `Ec` and `Ed25519`.
pub fn jwks_json() -> String {
    fixture("jwks.json")
}

impl TestKey {
    pub fn kid(self) -> &'static str {
        match self {
            Self::Rsa | Self::ForeignRsa => "test-rsa",
            Self::Ec => "test-ec",
            Self::Ed25519 => "test-ed25519",
        }
    }

    pub fn algorithm(self) -> Algorithm {
        match self {
            Self::Rsa | Self::ForeignRsa => Algorithm::RS256,
            Self::Ec => Algorithm::ES256,
            Self::Ed25519 => Algorithm::EdDSA,
        }
    }

    pub fn encoding_key(self) -> EncodingKey {
        let pem = match self {
            Self::Rsa => fixture("rsa.pem"),
            Self::ForeignRsa => fixture("rsa-foreign.pem"),
            Self::Ec => fixture("ec.pem"),
            Self::Ed25519 => fixture("ed25519.pem"),
        };
        match self {
            Self::Rsa | Self::ForeignRsa => EncodingKey::from_rsa_pem(pem.as_bytes()),
            Self::Ec => EncodingKey::from_ec_pem(pem.as_bytes()),
            Self::Ed25519 => EncodingKey::from_ed_pem(pem.as_bytes()),
        }
        .expect("fixture key")
    }

    /// The standard header for this key: its algorithm and `kid`.
    pub fn header(self) -> Header {
        let mut header = Header::new(self.algorithm());
        header.kid = Some(self.kid().into());
        header
    }

    /// `claims` signed with this key under its standard header.
    pub fn sign(self, claims: &Value) -> String {
        self.sign_with_header(&self.header(), claims)
    }

    pub fn sign_with_header(self, header: &Header, claims: &Value) -> String {
        jsonwebtoken::encode(header, claims, &self.encoding_key()).expect("sign test token")
    }
}

pub fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

/// Valid claims for `sub`: the test issuer and audience, issued now, expiring in 5 minutes.
pub fn claims(sub: &str, email: Option<&str>) -> Value {
    let mut claims =
        json!({ "iss": ISSUER, "aud": AUDIENCE, "sub": sub, "iat": now(), "exp": now() + 300 });
    if let Some(email) = email {
        claims["email"] = email.into();
    }
    claims
}

/// A valid RS256 token for `sub`.
pub fn token(sub: &str, email: Option<&str>) -> String {
    TestKey::Rsa.sign(&claims(sub, email))
}

/// The verifier settings of tests: the test issuer and audience, keys from `jwks`.
pub fn auth_config(jwks: api::config::JwksSetting) -> api::config::AuthConfig {
    api::config::AuthConfig {
        issuer: ISSUER.into(),
        audience: Some(AUDIENCE.into()),
        jwks,
        email_claim: "email".into(),
        leeway: std::time::Duration::from_secs(30),
        jwks_min_refresh: std::time::Duration::from_secs(30),
    }
}

/// The production verifier with the test settings, its keys given inline (the fixture JWKS).
pub fn verifier() -> api::auth::TokenVerifier {
    api::auth::TokenVerifier::from_config(&auth_config(api::config::JwksSetting::Inline(
        jwks_json(),
    )))
    .expect("the fixture JWKS is valid")
}
