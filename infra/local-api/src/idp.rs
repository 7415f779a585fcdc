//! The local identity provider: one ES256 signing key kept under the user's local state (so
//! tokens survive restarts), its JWKS, and tokens for anyone.
//!
//! It exists only in this binary: the Lambda functions cannot sign tokens, and they only accept
//! a plain-http JWKS address on a loopback host, where no deployed function finds one.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};

/// The `iss` of local tokens (independent of the port).
pub const ISSUER: &str = "urn:fan-api:local-idp";
/// The `aud` of local tokens.
pub const AUDIENCE: &str = "fan-api-local";
const KEY_FILE: &str = "local-idp-es256.key";

pub struct LocalIdp {
    pkcs8: Vec<u8>,
    kid: String,
    x: String,
    y: String,
}

/// Where the key is kept: `$FAN_API_STATE_DIR`, else `$XDG_STATE_HOME/fan-api`, else
/// `~/.local/state/fan-api`.
pub fn state_dir() -> PathBuf {
    let env = |name| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    env("FAN_API_STATE_DIR")
        .or_else(|| env("XDG_STATE_HOME").map(|dir| dir.join("fan-api")))
        .or_else(|| env("HOME").map(|home| home.join(".local/state/fan-api")))
        .unwrap_or_else(|| PathBuf::from(".local/state/fan-api"))
}

impl LocalIdp {
    /// The key in `dir`, created (readable by the user only) when there is none.
    pub fn load_or_create(dir: &Path) -> Result<Self, String> {
        let path = dir.join(KEY_FILE);
        let pkcs8 = match std::fs::read_to_string(&path) {
            Ok(text) => STANDARD
                .decode(text.trim())
                .map_err(|e| format!("{}: {e}", path.display()))?,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                let document = EcdsaKeyPair::generate_pkcs8(
                    &ECDSA_P256_SHA256_FIXED_SIGNING,
                    &SystemRandom::new(),
                )
                .map_err(|_| "cannot generate a signing key".to_owned())?;
                match write_private(&path, &STANDARD.encode(document.as_ref())) {
                    Ok(()) => document.as_ref().to_vec(),
                    // Another process created it first: use theirs.
                    Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
                        return Self::load_or_create(dir);
                    }
                    Err(error) => return Err(format!("{}: {error}", path.display())),
                }
            }
            Err(error) => return Err(format!("{}: {error}", path.display())),
        };
        Self::from_pkcs8(pkcs8).map_err(|e| format!("{}: {e}", path.display()))
    }

    fn from_pkcs8(pkcs8: Vec<u8>) -> Result<Self, String> {
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &pkcs8)
            .map_err(|_| "not a P-256 PKCS#8 key".to_owned())?;
        // Uncompressed point: 0x04, then x and y, 32 bytes each.
        let point = pair.public_key().as_ref();
        let (x, y) = point[1..].split_at(32);
        let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, &point[1..]);
        Ok(Self {
            kid: format!("local-{}", &URL_SAFE_NO_PAD.encode(digest.as_ref())[..16]),
            x: URL_SAFE_NO_PAD.encode(x),
            y: URL_SAFE_NO_PAD.encode(y),
            pkcs8,
        })
    }

    pub fn jwks(&self) -> Value {
        json!({ "keys": [{ "kty": "EC", "crv": "P-256", "use": "sig", "alg": "ES256", "kid": self.kid, "x": self.x, "y": self.y }] })
    }

    /// A session token for `sub`, valid for `ttl_seconds`.
    pub fn token(&self, sub: &str, email: Option<&str>, ttl_seconds: u64) -> String {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let mut claims = json!({ "iss": ISSUER, "aud": AUDIENCE, "sub": sub, "iat": now, "nbf": now, "exp": now + ttl_seconds });
        if let Some(email) = email {
            claims["email"] = email.into();
        }
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(self.kid.clone());
        jsonwebtoken::encode(&header, &claims, &EncodingKey::from_ec_der(&self.pkcs8))
            .expect("ES256 signing with a valid key")
    }
}

fn write_private(path: &Path, contents: &str) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(contents.as_bytes())
}
