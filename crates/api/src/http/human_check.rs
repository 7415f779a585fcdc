//! The human check as the handlers use it: the `Human-Check` header ([`HumanCheckToken`], with
//! the request's source address for siteverify's `remoteip`) and [`verify_human`], which asks
//! siteverify, judges the answer for the door ([`domain::humancheck::judge`]) and spends the
//! token once, in that order: a refused token writes nothing.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;

use crate::http::error::{ApiError, ErrorCode};
use crate::http::request::source_address;
use clients::siteverify::Siteverify;
use domain::humancheck::{Door, Expected, Failure, HEADER, judge, spent_until, token_hash};
use domain::timestamp::Timestamp;
use store::ratelimit::SpendToken;

/// The longest token read (Cloudflare's are about 2 KiB).
pub const MAX_TOKEN_BYTES: usize = 4096;

/// siteverify and the hostnames the widget may be served from.
pub struct HumanCheck {
    pub siteverify: Siteverify,
    pub hostnames: Vec<String>,
}

/// The `Human-Check` header, when sent (visible ASCII, at most [`MAX_TOKEN_BYTES`]), and the
/// request's source address.
#[derive(Debug, Clone, Default)]
pub struct HumanCheckToken {
    pub token: Option<String>,
    pub remote_ip: Option<String>,
}

impl<St: Send + Sync> FromRequestParts<St> for HumanCheckToken {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &St) -> Result<Self, ApiError> {
        let token = parts
            .headers
            .get(HEADER)
            .and_then(|value| value.to_str().ok())
            .map(str::trim)
            .filter(|token| !token.is_empty() && token.len() <= MAX_TOKEN_BYTES)
            .map(str::to_owned);
        let request = axum::http::Request::from_parts(parts.clone(), ());
        Ok(Self {
            token,
            remote_ip: source_address(&request),
        })
    }
}

/// 403 `human_check_failed`.
pub fn human_check_failed() -> ApiError {
    ApiError::refused(
        ErrorCode::HumanCheckFailed,
        "The human check was missing, failed, expired or already used: solve it again and send \
         its new token in 'Human-Check'.",
    )
}

/// Verifies `sent` for `door`: siteverify's answer judged (a challenge solved at or after
/// `not_before`, the queue's opening, when there is one), then the token spent (a token seen
/// before is refused). 403 `human_check_failed` for a token that does not pass (nothing
/// written); 503 when siteverify cannot say, or the store cannot record the token.
pub async fn verify_human<S: SpendToken>(
    check: &HumanCheck,
    store: &S,
    sent: &HumanCheckToken,
    door: &Door,
    not_before: Option<Timestamp>,
) -> Result<(), ApiError> {
    let refused = |reason: &str| {
        tracing::info!(reason, action = %door.action(), "human check refused");
        human_check_failed()
    };
    let Some(token) = sent.token.as_deref() else {
        return Err(refused("no token"));
    };
    let expected = Expected {
        door,
        hostnames: &check.hostnames,
        now: Timestamp::now(),
        not_before,
    };
    let verdict = match check
        .siteverify
        .verify(token, sent.remote_ip.as_deref())
        .await
    {
        Ok(answer) => judge(&answer, &expected),
        Err(failure) => Err(failure),
    };
    match verdict {
        Ok(()) => {}
        Err(Failure::Refused(reason)) => return Err(refused(reason)),
        Err(Failure::Unavailable(detail)) => {
            return Err(ApiError::Unavailable {
                what: "siteverify",
                detail,
            });
        }
    }
    if store
        .spend(&token_hash(token), spent_until(expected.now))
        .await?
    {
        Ok(())
    } else {
        Err(refused("token used before"))
    }
}
