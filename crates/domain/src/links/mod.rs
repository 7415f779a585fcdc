//! Web3 links: the rules a payload must meet and the record kept per user.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::ids::{UserId, WalletId};
use crate::timestamp::Timestamp;
use crate::truthy::is_truthy;

/// The provider a link is for. The spec's path says `web3` where the real provider's name stands.
pub const WEB3_PROVIDER: &str = "web3";

/// The deepest nesting of arrays and objects accepted in a payload.
pub const MAX_PAYLOAD_DEPTH: usize = 64;

/// A payload that cannot be linked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PayloadError {
    #[error("the payload is missing or not truthy")]
    NotTruthy,
    #[error("the payload is nested deeper than {MAX_PAYLOAD_DEPTH} levels")]
    TooDeep,
}

/// A payload is linkable when present, truthy (JavaScript's rule) and nested at most
/// [`MAX_PAYLOAD_DEPTH`] levels deep.
pub fn check_payload(payload: Option<&RawValue>) -> Result<&RawValue, PayloadError> {
    match payload {
        Some(payload) if nesting_exceeds(payload.get(), MAX_PAYLOAD_DEPTH) => {
            Err(PayloadError::TooDeep)
        }
        Some(payload) if is_truthy(payload) => Ok(payload),
        _ => Err(PayloadError::NotTruthy),
    }
}

/// Whether the arrays and objects of a valid JSON text nest deeper than `max`.
fn nesting_exceeds(json: &str, max: usize) -> bool {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for byte in json.bytes() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// What is written for a link: linking again replaces the payload and e-mail and keeps the first
/// `linkedAt`; the payload is recorded as the wallet `wallet_id` (its id, from its canonical JSON).
#[derive(Debug, Clone)]
pub struct LinkUpsert<'a> {
    pub user_id: &'a UserId,
    pub email: Option<&'a str>,
    pub provider: &'static str,
    pub payload: &'a RawValue,
    pub wallet_id: WalletId,
    pub at: Timestamp,
}

impl LinkUpsert<'_> {
    /// The events of the link, written `write` to the wallet: `wallet.linked`.
    pub fn events(&self, write: crate::wallets::WalletWrite) -> Vec<crate::events::NewEvent> {
        vec![crate::events::NewEvent::fan(
            self.user_id,
            crate::events::WalletLinked {
                wallet_id: self.wallet_id.clone(),
                provider: self.provider.to_owned(),
                added: write == crate::wallets::WalletWrite::Add,
            },
        )]
    }
}

/// The stored link, as read back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Web3Link {
    pub user_id: String,
    pub email: Option<String>,
    pub provider: String,
    /// The payload's exact JSON text.
    pub payload: String,
    pub linked_at: Timestamp,
    pub updated_at: Timestamp,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(json: &str) -> Result<(), PayloadError> {
        let raw: Box<RawValue> = serde_json::from_str(json).unwrap();
        check_payload(Some(&raw)).map(|_| ())
    }

    #[test]
    fn nesting_is_limited_and_brackets_in_strings_do_not_count() {
        let nested = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        assert_eq!(check(&nested(MAX_PAYLOAD_DEPTH)), Ok(()));
        assert_eq!(
            check(&nested(MAX_PAYLOAD_DEPTH + 1)),
            Err(PayloadError::TooDeep)
        );
        let in_string = format!(r#""{}\"{}""#, "[".repeat(200), "{".repeat(200));
        assert_eq!(check(&in_string), Ok(()));
    }

    #[test]
    fn missing_or_falsy_is_not_truthy() {
        assert_eq!(
            check_payload(None).map(|_| ()),
            Err(PayloadError::NotTruthy)
        );
        for falsy in ["null", "false", "\"\"", "0", "-0.0e3"] {
            assert_eq!(check(falsy), Err(PayloadError::NotTruthy), "{falsy}");
        }
    }
}
