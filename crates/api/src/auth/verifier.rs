//! Verification of one session token.

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, Validation};
use serde_json::{Map, Value};

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::auth::jwks::{JwksCache, JwksError};
use crate::config::{AuthConfig, ConfigError};
use crate::http::error::ApiError;
use domain::ids::UserId;
use domain::sessions::{Ended, Revocations, SessionFacts};
use store::StoreError;
use store::sessions::GetRevocations;

/// The signed-in user a valid token names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The token's `sub`.
    pub user_id: UserId,
    /// The configured e-mail claim, when the token has it as a string.
    pub email: Option<String>,
    /// What the token says of its session (`sid`, `iat`, `exp`, its digest).
    pub session: SessionFacts,
}

/// Where a verifier reads what was ended of a fan's sessions: the store, behind an object so
/// that the verifier is one type whatever the store.
pub trait RevocationSource: Send + Sync {
    fn read<'a>(
        &'a self,
        user_id: &'a UserId,
    ) -> Pin<Box<dyn Future<Output = Result<Revocations, StoreError>> + Send + 'a>>;
}

impl<S: GetRevocations> RevocationSource for S {
    fn read<'a>(
        &'a self,
        user_id: &'a UserId,
    ) -> Pin<Box<dyn Future<Output = Result<Revocations, StoreError>> + Send + 'a>> {
        Box::pin(self.revocations(user_id))
    }
}

const SUPPORTED: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

const INVALID: &str = "The session token is invalid.";
const EXPIRED: &str = "The session token has expired.";

pub struct TokenVerifier {
    keys: JwksCache,
    /// One validation per algorithm, each accepting only that algorithm.
    validations: Vec<(Algorithm, Validation)>,
    email_claim: String,
    /// What was ended of the fans' sessions, read on every verification (docs/sessions.md);
    /// `None` only where no store is at hand (unit tests of the token checks alone).
    sessions: Option<Arc<dyn RevocationSource>>,
}

impl TokenVerifier {
    pub fn new(config: &AuthConfig, keys: JwksCache) -> Self {
        let validations = SUPPORTED
            .iter()
            .map(|&algorithm| {
                let mut validation = Validation::new(algorithm);
                validation.leeway = config.leeway.as_secs();
                validation.validate_exp = true;
                validation.validate_nbf = true;
                validation.set_issuer(&[&config.issuer]);
                let mut required = vec!["exp", "sub", "iss"];
                match &config.audience {
                    Some(audience) => {
                        validation.set_audience(&[audience]);
                        required.push("aud");
                    }
                    None => validation.validate_aud = false,
                }
                validation.set_required_spec_claims(&required);
                (algorithm, validation)
            })
            .collect();
        Self {
            keys,
            validations,
            email_claim: config.email_claim.clone(),
            sessions: None,
        }
    }

    /// The verifier, refusing a token whose session `store` says was ended.
    pub fn with_sessions<S: GetRevocations + 'static>(mut self, store: S) -> Self {
        self.read_sessions_from(Arc::new(store));
        self
    }

    /// Reads what was ended of the sessions from `source`.
    pub fn read_sessions_from(&mut self, source: Arc<dyn RevocationSource>) {
        self.sessions = Some(source);
    }

    /// Builds the key cache from the configuration (no network: remote keys are fetched on first
    /// use).
    pub fn from_config(config: &AuthConfig) -> Result<Self, ConfigError> {
        Ok(Self::new(config, JwksCache::from_config(config)?))
    }

    pub fn keys(&self) -> &JwksCache {
        &self.keys
    }

    /// Checks the token ([`Self::inspect`]) and refuses it when its session was ended (401
    /// `session_revoked`).
    pub async fn verify(&self, token: &str) -> Result<Identity, ApiError> {
        match self.inspect(token).await? {
            (identity, None) => Ok(identity),
            (_, Some(Ended::Revoked)) => Err(ApiError::SessionEnded { deleted: false }),
            (_, Some(Ended::AccountDeleted)) => Err(ApiError::SessionEnded { deleted: true }),
        }
    }

    /// Checks the token: a `kid` naming a known key, the header's `alg` equal to that key's,
    /// the signature, `exp` and `nbf` (with leeway), `iss`, `aud` when configured, a string `sub`
    /// of 1-255 bytes, and no `crit` extensions; then reads whether its session was ended (one
    /// eventually consistent read of the fan's `SESSIONS#` item).
    pub async fn inspect(&self, token: &str) -> Result<(Identity, Option<Ended>), ApiError> {
        let invalid = |reason: &str| ApiError::InvalidToken {
            message: INVALID,
            reason: reason.into(),
        };
        let header = jsonwebtoken::decode_header(token)
            .map_err(|e| invalid(&format!("malformed header: {}", refusal(e.kind()))))?;
        // RFC 7515 4.1.11: a token whose `crit` names an extension the recipient does not
        // understand must be refused, and this verifier understands none (an empty list is not
        // allowed either).
        if header.crit.is_some() {
            return Err(invalid("crit lists extensions"));
        }
        let kid = header
            .kid
            .as_deref()
            .ok_or_else(|| invalid("no kid in header"))?;
        let key = self.keys.key(kid).await.map_err(|error| match error {
            JwksError::UnknownKid => invalid("unknown kid"),
            JwksError::Unavailable(detail) => ApiError::Unavailable {
                what: "identity provider keys",
                detail,
            },
        })?;
        if header.alg != key.algorithm {
            return Err(invalid("alg does not match the key"));
        }
        let (_, validation) = self
            .validations
            .iter()
            .find(|(algorithm, _)| *algorithm == key.algorithm)
            .ok_or_else(|| invalid("unsupported algorithm"))?;
        let claims = jsonwebtoken::decode::<Map<String, Value>>(token, &key.key, validation)
            .map_err(|e| match e.kind() {
                ErrorKind::ExpiredSignature => ApiError::InvalidToken {
                    message: EXPIRED,
                    reason: "expired".into(),
                },
                kind => invalid(refusal(kind)),
            })?
            .claims;
        let user_id = match claims.get("sub") {
            Some(Value::String(sub)) => UserId::parse(sub.as_str()).ok(),
            _ => None,
        }
        .ok_or_else(|| invalid("sub is not a string of 1-255 bytes"))?;
        let email = match claims.get(&self.email_claim) {
            Some(Value::String(email)) => Some(email.clone()),
            _ => None,
        };
        let session = session_facts(&claims, token);
        let ended = match &self.sessions {
            Some(sessions) => sessions.read(&user_id).await?.ends(&session),
            None => None,
        };
        let identity = Identity {
            user_id,
            email,
            session,
        };
        Ok((identity, ended))
    }
}

/// What `claims` (checked) say of the token's session.
fn session_facts(claims: &Map<String, Value>, token: &str) -> SessionFacts {
    let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, token.as_bytes());
    SessionFacts {
        sid: claims
            .get("sid")
            .and_then(Value::as_str)
            .filter(|sid| !sid.is_empty() && sid.len() <= 255)
            .map(str::to_owned),
        issued_at: claims.get("iat").and_then(Value::as_i64),
        expires_at: claims.get("exp").and_then(Value::as_i64).unwrap_or(0),
        token_digest: digest.as_ref().iter().map(|b| format!("{b:02x}")).collect(),
    }
}

/// Why a token was refused, for the logs: a fixed phrase per kind. The library's own text quotes
/// what it could not read (serde_json echoes the values of the token's header and claims), and
/// no part of a token is ever logged.
fn refusal(kind: &ErrorKind) -> &'static str {
    match kind {
        ErrorKind::InvalidToken => "not three base64url segments",
        ErrorKind::Base64(_) => "not base64url",
        ErrorKind::Utf8(_) => "not UTF-8",
        ErrorKind::Json(_) => "not the JSON a token holds",
        ErrorKind::InvalidSignature => "bad signature",
        ErrorKind::ImmatureSignature => "not valid yet (nbf)",
        ErrorKind::InvalidIssuer => "wrong issuer",
        ErrorKind::InvalidAudience => "wrong audience",
        ErrorKind::InvalidSubject => "wrong subject",
        ErrorKind::MissingRequiredClaim(_) => "a required claim is missing",
        ErrorKind::InvalidClaimFormat(_) => "a claim of the wrong type",
        ErrorKind::InvalidAlgorithm
        | ErrorKind::InvalidAlgorithmName
        | ErrorKind::MissingAlgorithm => "algorithm",
        _ => "refused by the token library",
    }
}
