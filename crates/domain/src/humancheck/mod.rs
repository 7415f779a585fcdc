//! The human check at the door of a drop: a Cloudflare Turnstile token, sent in the `Human-Check`
//! header, verified server-side with siteverify ([`siteverify`]) and judged here ([`judge`]):
//! `success`, the `action` the widget was rendered with ([`Door::action`]: `join_<packId>` or
//! `start_<packId>`, or a hash of a long pack id),
//! a `hostname` among the configured ones, a `challenge_ts` at most [`MAX_AGE_SECONDS`] old and
//! not before the instant the door opened (a queue's `opensAt`: a token solved before the sale
//! is refused). Cloudflare spends a token on its first siteverify; the API also records each
//! token it accepts (its hash, [`token_hash`]) and refuses it again.

use serde::Deserialize;

use crate::ids::PackId;
use crate::timestamp::Timestamp;

/// The oldest a token's challenge may be (Cloudflare's own validity of a token).
pub const MAX_AGE_SECONDS: i64 = 300;

/// The form field and the header the client sends the token in.
pub const HEADER: &str = "human-check";

/// What the token was solved for: the widget's `action`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Door {
    /// Joining the queue of a pack.
    Join(PackId),
    /// Starting a purchase of a pack without a queue whose operator asks for the check.
    Start(PackId),
}

/// The longest `action` a Turnstile widget takes, of `[A-Za-z0-9_-]` (Cloudflare's widget
/// configuration): `join:<packId>` as issue 30 wrote it cannot be rendered.
pub const MAX_ACTION_CHARS: usize = 32;

impl Door {
    /// The `action` the widget must have been rendered with: `<verb>_<packId>` when that fits
    /// in [`MAX_ACTION_CHARS`] (pack ids are `[A-Za-z0-9_-]` already, so a client writes it
    /// without computing anything), else `<verb>h_` and the first characters of the base64url
    /// SHA-256 of the pack id (at least 150 bits: still one pack's door). `h_` after the verb
    /// never begins a readable action (that is `<verb>_`), so the two forms never collide.
    pub fn action(&self) -> String {
        use base64::Engine;
        let (verb, pack_id) = match self {
            Door::Join(pack_id) => ("join", pack_id),
            Door::Start(pack_id) => ("start", pack_id),
        };
        let readable = format!("{verb}_{pack_id}");
        if readable.len() <= MAX_ACTION_CHARS {
            return readable;
        }
        let digest =
            aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, pack_id.as_str().as_bytes());
        let hashed = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest.as_ref());
        let prefix = format!("{verb}h_");
        format!("{prefix}{}", &hashed[..MAX_ACTION_CHARS - prefix.len()])
    }
}

/// siteverify's answer (Cloudflare's fields; `cdata` and `metadata` are not used).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Answer {
    pub success: bool,
    #[serde(default)]
    pub challenge_ts: Option<String>,
    #[serde(default)]
    pub hostname: Option<String>,
    #[serde(default)]
    pub action: Option<String>,
    #[serde(default)]
    pub cdata: Option<String>,
    #[serde(default, rename = "error-codes")]
    pub error_codes: Vec<String>,
}

/// What a token must show.
#[derive(Debug, Clone)]
pub struct Expected<'a> {
    pub door: &'a Door,
    /// The hostnames the widget may be served from (the web app's, the native app's WebView
    /// page's).
    pub hostnames: &'a [String],
    pub now: Timestamp,
    /// The challenge must have been solved at or after this (the queue's opening).
    pub not_before: Option<Timestamp>,
}

/// Why a token was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Failure {
    /// The token does not prove what it must: 403 `human_check_failed`. The reason is for the
    /// logs.
    #[error("human check refused: {0}")]
    Refused(&'static str),
    /// siteverify could not say (unreachable, or its `internal-error`): 503, the fan retries.
    #[error("human check unavailable: {0}")]
    Unavailable(String),
}

/// Judges siteverify's `answer` against what the door expects.
pub fn judge(answer: &Answer, expected: &Expected<'_>) -> Result<(), Failure> {
    if answer
        .error_codes
        .iter()
        .any(|code| code == "internal-error")
    {
        return Err(Failure::Unavailable("siteverify internal-error".into()));
    }
    if !answer.success {
        return Err(Failure::Refused("not successful"));
    }
    if answer.action.as_deref() != Some(expected.door.action().as_str()) {
        return Err(Failure::Refused("another action"));
    }
    let hostname = answer.hostname.as_deref().unwrap_or_default();
    if !expected
        .hostnames
        .iter()
        .any(|known| known.eq_ignore_ascii_case(hostname))
    {
        return Err(Failure::Refused("another hostname"));
    }
    let solved = answer
        .challenge_ts
        .as_deref()
        .and_then(|ts| Timestamp::parse(ts).ok())
        .ok_or(Failure::Refused("no challenge time"))?;
    let age = expected.now.unix_nanos() - solved.unix_nanos();
    if age > i128::from(MAX_AGE_SECONDS) * 1_000_000_000 {
        return Err(Failure::Refused("challenge too old"));
    }
    if expected.not_before.is_some_and(|opened| solved < opened) {
        return Err(Failure::Refused("challenge before the door opened"));
    }
    Ok(())
}

/// The hash a spent token is recorded under (SHA-256, hex): the token itself is never stored.
pub fn token_hash(token: &str) -> String {
    aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, token.as_bytes())
        .as_ref()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// Until when a spent token is kept: past any instant at which its challenge is young enough.
pub fn spent_until(now: Timestamp) -> i64 {
    i64::try_from(now.unix_seconds()).unwrap_or(i64::MAX) + MAX_AGE_SECONDS + 60
}

#[cfg(test)]
mod tests {
    use super::*;

    fn passing(solved: Timestamp) -> Answer {
        Answer {
            success: true,
            challenge_ts: Some(solved.to_string()),
            hostname: Some("fans.example".into()),
            action: Some("join_p1".into()),
            ..Answer::default()
        }
    }

    #[test]
    fn an_unsuccessful_answer_is_refused_whatever_else_it_says() {
        let now = Timestamp::now();
        let door = Door::Join(PackId::parse("p1").unwrap());
        let hostnames = ["fans.example".to_owned()];
        let expected = Expected {
            door: &door,
            hostnames: &hostnames,
            now,
            not_before: None,
        };
        assert_eq!(judge(&passing(now), &expected), Ok(()));
        let unsuccessful = Answer {
            success: false,
            ..passing(now)
        };
        assert_eq!(
            judge(&unsuccessful, &expected),
            Err(Failure::Refused("not successful"))
        );
    }

    #[test]
    fn every_action_is_one_turnstile_renders_and_names_one_pack() {
        let action = |door: Door| door.action();
        let short = PackId::parse("drop-1").unwrap();
        assert_eq!(action(Door::Join(short.clone())), "join_drop-1");
        assert_eq!(action(Door::Start(short)), "start_drop-1");
        let long = PackId::parse("x".repeat(64)).unwrap();
        let longer = PackId::parse(format!("{}y", "x".repeat(63))).unwrap();
        let fits = PackId::parse("x".repeat(27)).unwrap();
        for door in [
            Door::Join(long.clone()),
            Door::Start(long.clone()),
            Door::Join(fits.clone()),
            Door::Start(fits),
        ] {
            let action = door.action();
            assert!(action.len() <= MAX_ACTION_CHARS, "{action}");
            assert!(
                action
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'),
                "{action}"
            );
        }
        assert!(action(Door::Join(long.clone())).starts_with("joinh_"));
        assert_ne!(action(Door::Join(long.clone())), action(Door::Join(longer)));
        assert_ne!(action(Door::Join(long.clone())), action(Door::Start(long)));
    }
}
