//! Standard Webhooks 1.0 signatures (standardwebhooks.com; docs/events.md): what this API signs its
//! own webhooks with (issue 46) and what it checks an identity provider's with (issue 47, Svix
//! signs so). A signature is `v1,` and the base64 of HMAC-SHA256, keyed with the endpoint's secret,
//! over `{webhook-id}.{webhook-timestamp}.{body}`: the exact bytes sent. A header holds one or more,
//! space-separated, so that a sender signs with the old and the new secret while a rotation lasts.

use aws_lc_rs::hmac;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;

/// The prefix of a secret's text: `whsec_` and the base64 of its bytes.
pub const SECRET_PREFIX: &str = "whsec_";

/// The fewest and most bytes of a secret (the specification's 192 and 512 bits).
pub const SECRET_BYTES: std::ops::RangeInclusive<usize> = 24..=64;

/// How far a signature's timestamp may be from the receiver's clock, either way, in seconds:
/// the specification's and Svix's 5 minutes.
pub const TOLERANCE_SECONDS: i64 = 300;

/// An endpoint's signing secret.
#[derive(Clone)]
pub struct SigningSecret(hmac::Key);

impl std::fmt::Debug for SigningSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SigningSecret(..)")
    }
}

/// Why a secret's text is refused (never the text itself).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SecretError {
    #[error("a signing secret is `whsec_` and base64")]
    NotASecret,
    #[error("a signing secret holds 24 to 64 bytes")]
    Length,
}

impl SigningSecret {
    /// The secret of `text` (`whsec_` and base64; the prefix may be left out, as the
    /// specification's libraries accept).
    pub fn parse(text: &str) -> Result<Self, SecretError> {
        let encoded = text.strip_prefix(SECRET_PREFIX).unwrap_or(text);
        let bytes = BASE64
            .decode(encoded)
            .map_err(|_| SecretError::NotASecret)?;
        if !SECRET_BYTES.contains(&bytes.len()) {
            return Err(SecretError::Length);
        }
        Ok(Self(hmac::Key::new(hmac::HMAC_SHA256, &bytes)))
    }

    /// A new random secret of 32 bytes, and its text (shown to the endpoint's owner once).
    pub fn generate() -> Result<(Self, String), getrandom::Error> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes)?;
        let text = format!("{SECRET_PREFIX}{}", BASE64.encode(bytes));
        Ok((Self(hmac::Key::new(hmac::HMAC_SHA256, &bytes)), text))
    }

    /// `v1,<base64>` of `body` sent as message `id` at `timestamp` (Unix seconds).
    pub fn sign(&self, id: &str, timestamp: i64, body: &[u8]) -> String {
        let tag = hmac::sign(&self.0, &signed_content(id, timestamp, body));
        format!("v1,{}", BASE64.encode(tag.as_ref()))
    }

    fn verifies(&self, id: &str, timestamp: i64, body: &[u8], signature: &[u8]) -> bool {
        hmac::verify(&self.0, &signed_content(id, timestamp, body), signature).is_ok()
    }
}

/// The bytes signed: `{id}.{timestamp}.{body}`.
fn signed_content(id: &str, timestamp: i64, body: &[u8]) -> Vec<u8> {
    let mut content = Vec::with_capacity(id.len() + 24 + body.len());
    content.extend_from_slice(id.as_bytes());
    content.push(b'.');
    content.extend_from_slice(itoa::Buffer::new().format(timestamp).as_bytes());
    content.push(b'.');
    content.extend_from_slice(body);
    content
}

/// The `webhook-signature` value of `body` under every secret of `secrets` (the current one, and
/// the previous while a rotation lasts), space-separated.
pub fn signature_header(
    secrets: &[SigningSecret],
    id: &str,
    timestamp: i64,
    body: &[u8],
) -> String {
    secrets
        .iter()
        .map(|secret| secret.sign(id, timestamp, body))
        .collect::<Vec<_>>()
        .join(" ")
}

/// What a received webhook carried: its three headers' values.
#[derive(Debug, Clone, Copy)]
pub struct Received<'a> {
    pub id: &'a str,
    pub timestamp: &'a str,
    pub signature: &'a str,
}

/// Why a received webhook is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    #[error("the webhook's timestamp is not a number of seconds")]
    BadTimestamp,
    #[error("the webhook's timestamp is over 5 minutes from now")]
    Stale,
    #[error("no signature of the webhook matches")]
    NoMatch,
}

/// Checks `received` with `body` against `secrets` at `now` (Unix seconds): its timestamp within
/// [`TOLERANCE_SECONDS`] of `now`, and one of its `v1` signatures (any other version is skipped)
/// made with one of the secrets, compared in constant time.
pub fn verify(
    secrets: &[SigningSecret],
    received: Received<'_>,
    body: &[u8],
    now: i64,
) -> Result<(), VerifyError> {
    let timestamp: i64 = received
        .timestamp
        .trim()
        .parse()
        .map_err(|_| VerifyError::BadTimestamp)?;
    if (now - timestamp).abs() > TOLERANCE_SECONDS {
        return Err(VerifyError::Stale);
    }
    let matched = received
        .signature
        .split_ascii_whitespace()
        .filter_map(|signature| signature.strip_prefix("v1,"))
        .filter_map(|encoded| BASE64.decode(encoded).ok())
        .any(|signature| {
            secrets
                .iter()
                .any(|secret| secret.verifies(received.id, timestamp, body, &signature))
        });
    if matched {
        Ok(())
    } else {
        Err(VerifyError::NoMatch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The specification's own example (its README's "Signature scheme", and every library's
    /// test): this secret, id, timestamp and body sign to this value.
    #[test]
    fn the_specifications_example_signs_as_published() {
        let secret = SigningSecret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        let body = br#"{"test": 2432232314}"#;
        let signature = secret.sign("msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body);
        assert_eq!(signature, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
        let received = Received {
            id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
            timestamp: "1614265330",
            signature: &format!("v1a,ignored {signature}"),
        };
        let secrets = [secret];
        assert_eq!(verify(&secrets, received, body, 1614265330), Ok(()));
        assert_eq!(
            verify(&secrets, received, b"{}", 1614265330),
            Err(VerifyError::NoMatch)
        );
        assert_eq!(
            verify(&secrets, received, body, 1614265330 + 301),
            Err(VerifyError::Stale)
        );
    }

    #[test]
    fn secrets_outside_the_lengths_are_refused() {
        assert_eq!(
            SigningSecret::parse("whsec_c2hvcnQ=").unwrap_err(),
            SecretError::Length
        );
        assert_eq!(
            SigningSecret::parse("whsec_not base64!").unwrap_err(),
            SecretError::NotASecret
        );
        let (_, text) = SigningSecret::generate().unwrap();
        assert!(SigningSecret::parse(&text).is_ok());
    }
}
