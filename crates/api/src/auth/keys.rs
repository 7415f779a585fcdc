//! Verifying keys read from a JWKS document.
//!
//! Each key accepts exactly one algorithm, fixed by the key, never by a token: the JWK's `alg`
//! when it has one, otherwise the one its type implies (RSA: RS256, P-256: ES256, P-384: ES384,
//! Ed25519: EdDSA). Symmetric (`oct`) keys, encryption keys (`use` other than `sig`), keys with no
//! `kid` and keys whose `alg` does not fit their type are left out.

use std::collections::HashMap;
use std::sync::Arc;

use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};
use serde::Deserialize;

/// A public key and the one algorithm it verifies.
pub struct VerifyingKey {
    pub algorithm: Algorithm,
    pub key: DecodingKey,
}

/// The usable keys of a JWKS document, by `kid`.
#[derive(Default, Clone)]
pub struct KeySet {
    keys: HashMap<String, Arc<VerifyingKey>>,
}

#[derive(Debug, thiserror::Error)]
#[error("the JWKS document is not a JSON object with a `keys` array")]
pub struct MalformedJwks;

#[derive(Deserialize)]
struct RawJwks {
    keys: Vec<serde_json::Value>,
}

impl KeySet {
    /// Parses a JWKS document. Keys that cannot be used are skipped (and logged), so one odd key
    /// at the provider does not lock everyone out.
    pub fn from_json(json: &[u8]) -> Result<Self, MalformedJwks> {
        let raw: RawJwks = serde_json::from_slice(json).map_err(|_| MalformedJwks)?;
        let mut keys = HashMap::with_capacity(raw.keys.len());
        for value in raw.keys {
            let Ok(jwk) = serde_json::from_value::<Jwk>(value) else {
                tracing::warn!("skipping a JWKS entry that is not a JWK this service can read");
                continue;
            };
            let Some(kid) = jwk.common.key_id.clone() else {
                tracing::warn!("skipping a JWK without kid");
                continue;
            };
            match verifying_key(&jwk) {
                Some(key) => {
                    keys.insert(kid, Arc::new(key));
                }
                None => {
                    tracing::warn!(kid = %kid, "skipping a JWK that is not a usable signing key")
                }
            }
        }
        Ok(Self { keys })
    }

    pub fn get(&self, kid: &str) -> Option<Arc<VerifyingKey>> {
        self.keys.get(kid).cloned()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }
}

fn verifying_key(jwk: &Jwk) -> Option<VerifyingKey> {
    if matches!(&jwk.common.public_key_use, Some(usage) if *usage != PublicKeyUse::Signature) {
        return None;
    }
    let implied = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => Algorithm::RS256,
        AlgorithmParameters::EllipticCurve(ec) => match ec.curve {
            EllipticCurve::P256 => Algorithm::ES256,
            EllipticCurve::P384 => Algorithm::ES384,
            _ => return None,
        },
        AlgorithmParameters::OctetKeyPair(okp) if okp.curve == EllipticCurve::Ed25519 => {
            Algorithm::EdDSA
        }
        _ => return None, // symmetric and unknown key types
    };
    let algorithm = match jwk.common.key_algorithm {
        None => implied,
        Some(declared) => {
            let declared = signing_algorithm(declared)?;
            let fits = match &jwk.algorithm {
                AlgorithmParameters::RSA(_) => matches!(
                    declared,
                    Algorithm::RS256
                        | Algorithm::RS384
                        | Algorithm::RS512
                        | Algorithm::PS256
                        | Algorithm::PS384
                        | Algorithm::PS512
                ),
                _ => declared == implied,
            };
            if !fits {
                return None;
            }
            declared
        }
    };
    let key = DecodingKey::from_jwk(jwk).ok()?;
    Some(VerifyingKey { algorithm, key })
}

fn signing_algorithm(declared: KeyAlgorithm) -> Option<Algorithm> {
    Some(match declared {
        KeyAlgorithm::RS256 => Algorithm::RS256,
        KeyAlgorithm::RS384 => Algorithm::RS384,
        KeyAlgorithm::RS512 => Algorithm::RS512,
        KeyAlgorithm::PS256 => Algorithm::PS256,
        KeyAlgorithm::PS384 => Algorithm::PS384,
        KeyAlgorithm::PS512 => Algorithm::PS512,
        KeyAlgorithm::ES256 => Algorithm::ES256,
        KeyAlgorithm::ES384 => Algorithm::ES384,
        KeyAlgorithm::EdDSA => Algorithm::EdDSA,
        _ => return None, // HMAC and encryption algorithms are never accepted
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rsa_n() -> String {
        let jwks: serde_json::Value =
            serde_json::from_str(include_str!("../../../../testkit/fixtures/keys/jwks.json"))
                .unwrap();
        jwks["keys"][0]["n"].as_str().unwrap().to_owned()
    }

    fn set(keys: serde_json::Value) -> KeySet {
        KeySet::from_json(serde_json::json!({ "keys": keys }).to_string().as_bytes()).unwrap()
    }

    #[test]
    fn algorithm_comes_from_the_key() {
        let n = rsa_n();
        let keys = set(serde_json::json!([
            {"kty": "RSA", "kid": "implied", "n": n, "e": "AQAB"},
            {"kty": "RSA", "kid": "declared", "alg": "PS256", "n": n, "e": "AQAB"},
        ]));
        assert_eq!(keys.get("implied").unwrap().algorithm, Algorithm::RS256);
        assert_eq!(keys.get("declared").unwrap().algorithm, Algorithm::PS256);
    }

    #[test]
    fn unusable_keys_are_skipped_not_fatal() {
        let n = rsa_n();
        let keys = set(serde_json::json!([
            {"kty": "oct", "kid": "hmac", "k": "c2VjcmV0"},
            {"kty": "RSA", "kid": "enc", "use": "enc", "n": n, "e": "AQAB"},
            {"kty": "RSA", "kid": "mismatch", "alg": "ES256", "n": n, "e": "AQAB"},
            {"kty": "RSA", "kid": "hs", "alg": "HS256", "n": n, "e": "AQAB"},
            {"kty": "RSA", "n": n, "e": "AQAB"},
            {"kty": "weird", "kid": "weird"},
            {"kty": "RSA", "kid": "good", "use": "sig", "alg": "RS256", "n": n, "e": "AQAB"},
        ]));
        assert_eq!(keys.len(), 1);
        assert!(keys.get("good").is_some());
    }

    #[test]
    fn malformed_documents_are_errors() {
        for doc in [&b"not json"[..], b"{}", b"[]", b"{\"keys\": 5}"] {
            assert!(KeySet::from_json(doc).is_err());
        }
    }
}
