//! The local operator key: local-api has no IAM, so its operators' routes (`GET /api/events`,
//! webhook endpoints) accept `Authorization: Bearer <key>`, the key it prints as it starts.

/// Sets the key; a random one otherwise.
pub const OPERATOR_KEY_VAR: &str = "LOCAL_API_OPERATOR_KEY";

/// Sets the identity provider's webhook secret (`whsec_...`) its events are verified with.
pub const PROVIDER_SECRET_VAR: &str = "LOCAL_API_PROVIDER_WEBHOOK_SECRET";

/// The identity provider's webhook secret: `LOCAL_API_PROVIDER_WEBHOOK_SECRET`, or a new random
/// one (no provider then reaches this server).
pub fn provider_secret() -> Result<domain::webhooks::SigningSecret, String> {
    match std::env::var(PROVIDER_SECRET_VAR) {
        Ok(text) => domain::webhooks::SigningSecret::parse(&text)
            .map_err(|e| format!("{PROVIDER_SECRET_VAR}: {e}")),
        Err(_) => domain::webhooks::SigningSecret::generate()
            .map(|(secret, _)| secret)
            .map_err(|e| format!("no random source: {e}")),
    }
}

/// The key of deleted fans' pseudonyms: `LOCAL_API_PSEUDONYM_KEY` (at least 32 bytes), or a
/// new random one (the in-memory store keeps nothing across restarts either).
pub fn pseudonym_key() -> Result<domain::account::PseudonymKey, String> {
    match std::env::var(PSEUDONYM_KEY_VAR) {
        Ok(text) => domain::account::PseudonymKey::new(&text)
            .map_err(|e| format!("{PSEUDONYM_KEY_VAR}: {e}")),
        Err(_) => Ok(domain::account::PseudonymKey::random()),
    }
}

const PSEUDONYM_KEY_VAR: &str = "LOCAL_API_PSEUDONYM_KEY";

/// The key: `LOCAL_API_OPERATOR_KEY`, or a new random one.
pub fn operator_key() -> Result<String, String> {
    match std::env::var(OPERATOR_KEY_VAR) {
        Ok(key) if key.trim().is_empty() => Err(format!("{OPERATOR_KEY_VAR} is empty")),
        Ok(key) => Ok(key),
        Err(_) => Ok(format!("opk_local_{}", crate::checkout::random_hex(24))),
    }
}
