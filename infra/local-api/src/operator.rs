//! The local operator key: local-api has no IAM, so its operators' routes (`GET /api/events`,
//! webhook endpoints) accept `Authorization: Bearer <key>`, the key it prints as it starts.

/// Sets the key; a random one otherwise.
pub const OPERATOR_KEY_VAR: &str = "LOCAL_API_OPERATOR_KEY";

/// The key: `LOCAL_API_OPERATOR_KEY`, or a new random one.
pub fn operator_key() -> Result<String, String> {
    match std::env::var(OPERATOR_KEY_VAR) {
        Ok(key) if key.trim().is_empty() => Err(format!("{OPERATOR_KEY_VAR} is empty")),
        Ok(key) => Ok(key),
        Err(_) => Ok(format!("opk_local_{}", crate::checkout::random_hex(24))),
    }
}
