//! Stripe's webhook signatures, exactly as Stripe documents them
//! (<https://docs.stripe.com/webhooks#verify-manually>): the `Stripe-Signature` header is a
//! comma-separated list of `key=value` pairs; `t` is the Unix time Stripe signed at, each `v1` a
//! signature (several while a secret is rotated), `v0` and any other key ignored. A `v1` is the
//! lower-case hex HMAC-SHA256, keyed with the whole endpoint secret (`whsec_...` as given, not
//! decoded), of `{t}.{raw body}`. Any one matching `v1` passes, compared in constant time; a `t`
//! more than [`TOLERANCE_SECONDS`] from now fails (a replayed old event).

use aws_lc_rs::hmac;

/// How far `t` may be from now, either way (Stripe's libraries use 300 s).
pub const TOLERANCE_SECONDS: u64 = 300;

/// Why a signature does not hold. The caller answers every one the same (400
/// `invalid_signature`); the reason is for the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    #[error("no Stripe-Signature header")]
    Missing,
    #[error("the header has no usable timestamp `t`")]
    NoTimestamp,
    #[error("the header has no `v1` signature")]
    NoV1,
    #[error("the timestamp is more than {TOLERANCE_SECONDS} s from now")]
    OutsideTolerance,
    #[error("no `v1` signature matches")]
    Mismatch,
}

/// Checks `header` (the `Stripe-Signature` value) over `body`, as received byte for byte, with
/// `secret` at `now` (Unix seconds).
pub fn verify(
    header: Option<&str>,
    body: &[u8],
    secret: &str,
    now: u64,
) -> Result<(), SignatureError> {
    let header = header.ok_or(SignatureError::Missing)?;
    let mut timestamp: Option<&str> = None;
    let mut signatures = Vec::new();
    for pair in header.split(',') {
        let Some((key, value)) = pair.split_once('=') else {
            continue;
        };
        match key.trim() {
            // A header with `t` twice is not one Stripe sends: refused rather than guessed.
            "t" if timestamp.is_some() => return Err(SignatureError::NoTimestamp),
            "t" => timestamp = Some(value.trim()),
            "v1" => signatures.push(value.trim()),
            _ => {}
        }
    }
    let timestamp = timestamp.ok_or(SignatureError::NoTimestamp)?;
    let signed_at: u64 = (!timestamp.is_empty() && timestamp.bytes().all(|b| b.is_ascii_digit()))
        .then(|| timestamp.parse().ok())
        .flatten()
        .ok_or(SignatureError::NoTimestamp)?;
    if signatures.is_empty() {
        return Err(SignatureError::NoV1);
    }
    if now.abs_diff(signed_at) > TOLERANCE_SECONDS {
        return Err(SignatureError::OutsideTolerance);
    }
    let key = hmac::Key::new(hmac::HMAC_SHA256, secret.as_bytes());
    let mut message = Vec::with_capacity(timestamp.len() + 1 + body.len());
    message.extend_from_slice(timestamp.as_bytes());
    message.push(b'.');
    message.extend_from_slice(body);
    // `hmac::verify` compares in constant time; every candidate is tried, so the time taken
    // does not tell which one matched.
    let mut matched = false;
    for signature in signatures {
        if let Some(tag) = decode_hex(signature) {
            matched |= hmac::verify(&key, &message, &tag).is_ok();
        }
    }
    if matched {
        Ok(())
    } else {
        Err(SignatureError::Mismatch)
    }
}

/// The `Stripe-Signature` header Stripe would send for `body` signed with `secret` at
/// `timestamp`: what the local API's checkout page sends its own webhook route.
pub fn sign(body: &[u8], secret: &str, timestamp: u64) -> String {
    let key = hmac::Key::new(hmac::HMAC_SHA256, secret.as_bytes());
    let mut message = format!("{timestamp}.").into_bytes();
    message.extend_from_slice(body);
    let tag = hmac::sign(&key, &message);
    let hex: String = tag.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    format!("t={timestamp},v1={hex}")
}

/// Lower- or upper-case hex of a 32-byte tag; anything else is no signature.
fn decode_hex(text: &str) -> Option<Vec<u8>> {
    if text.len() != 64 {
        return None;
    }
    crate::packs::draw::parse_hex(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "whsec_test_secret_0123456789";
    /// Computed independently with Python's standard library:
    /// `hmac.new(b"whsec_test_secret_0123456789", b"1700000000." + BODY, hashlib.sha256).hexdigest()`
    const BODY: &[u8] = br#"{"id":"evt_1","type":"checkout.session.completed"}"#;
    const VECTOR: &str = "8148423589a812fdc91e48207e03f4da7292dd1e03eb1c297a8caf63643af5f6";

    #[test]
    fn signing_and_verifying_agree_and_tolerate_five_minutes_either_way() {
        let header = sign(BODY, SECRET, 1_700_000_000);
        assert_eq!(verify(Some(&header), BODY, SECRET, 1_700_000_000), Ok(()));
        assert_eq!(verify(Some(&header), BODY, SECRET, 1_700_000_300), Ok(()));
        assert_eq!(verify(Some(&header), BODY, SECRET, 1_699_999_700), Ok(()));
        assert_eq!(
            verify(Some(&header), BODY, SECRET, 1_700_000_301),
            Err(SignatureError::OutsideTolerance)
        );
        assert_eq!(
            verify(Some(&header), BODY, SECRET, 1_699_999_699),
            Err(SignatureError::OutsideTolerance)
        );
    }

    #[test]
    fn the_python_vector_verifies() {
        let header = format!("t=1700000000,v1={VECTOR}");
        assert_eq!(sign(BODY, SECRET, 1_700_000_000), header);
        assert_eq!(verify(Some(&header), BODY, SECRET, 1_700_000_000), Ok(()));
    }

    #[test]
    fn malformed_headers_are_refused() {
        let good = sign(BODY, SECRET, 1_700_000_000);
        let v1 = good.split_once(",v1=").unwrap().1;
        for (header, error) in [
            (None, SignatureError::Missing),
            (Some(format!("v1={v1}")), SignatureError::NoTimestamp),
            (Some(format!("t=,v1={v1}")), SignatureError::NoTimestamp),
            (Some(format!("t=-1,v1={v1}")), SignatureError::NoTimestamp),
            (
                Some(format!("t=1700000000,t=1700000000,v1={v1}")),
                SignatureError::NoTimestamp,
            ),
            (Some("t=1700000000".to_owned()), SignatureError::NoV1),
            (Some(format!("t=1700000000,v0={v1}")), SignatureError::NoV1),
            (
                Some("t=1700000000,v1=zz".to_owned()),
                SignatureError::Mismatch,
            ),
        ] {
            assert_eq!(
                verify(header.as_deref(), BODY, SECRET, 1_700_000_000),
                Err(error),
                "{header:?}"
            );
        }
    }
}
