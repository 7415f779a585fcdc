//! A fan's sessions as the API sees them (issue 47, docs/sessions.md): the identity provider
//! issues the tokens, this API keeps what was ended. A token is refused from the next request on
//! once its session is revoked: by a logout (`current`, `all`, `others`), an operator, the
//! provider's own event, or the account's deletion.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The most sessions a fan's item names one by one (each until its token's expiry, pruned once
/// passed); past it the oldest give way. A logout of `all` needs none.
pub const MAX_NAMED: usize = 200;

/// What a verified token says of its session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionFacts {
    /// The provider's session id (`sid`), when the token carries one.
    pub sid: Option<String>,
    /// The token's `iat` (Unix seconds), when it carries one.
    pub issued_at: Option<i64>,
    /// The token's `exp` (Unix seconds).
    pub expires_at: i64,
    /// The SHA-256 of the token, hex: names a session that has no `sid`.
    pub token_digest: String,
}

impl SessionFacts {
    /// The name this session is revoked under: its `sid`, else its token.
    pub fn key(&self) -> String {
        match &self.sid {
            Some(sid) => format!("sid:{sid}"),
            None => format!("jwt:{}", self.token_digest),
        }
    }
}

/// What was ended of a fan's sessions.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Revocations {
    /// Every token issued at or before this instant (Unix seconds) is revoked (`all`, `others`,
    /// an operator's revocation), but the session `kept`.
    pub before: Option<i64>,
    /// The session a logout of `others` kept (its key).
    pub kept: Option<String>,
    /// Sessions revoked one by one (their keys), each until its token expires.
    #[serde(default)]
    pub named: BTreeMap<String, i64>,
    /// The account was deleted: every token of it is refused, whenever issued.
    #[serde(default)]
    pub deleted: bool,
}

/// Why a session is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    Revoked,
    AccountDeleted,
}

impl Revocations {
    /// Whether the session of `facts` was ended, and how. A token without `iat` counts as issued
    /// at the epoch: a logout of `all` ends it too.
    pub fn ends(&self, facts: &SessionFacts) -> Option<Ended> {
        if self.deleted {
            return Some(Ended::AccountDeleted);
        }
        let key = facts.key();
        if self.named.contains_key(&key) {
            return Some(Ended::Revoked);
        }
        let issued = facts.issued_at.unwrap_or(0);
        let before = self.before?;
        (issued <= before && self.kept.as_deref() != Some(key.as_str())).then_some(Ended::Revoked)
    }

    /// `self` after a logout of `scope` from the session of `facts` at `now` (Unix seconds).
    pub fn logout(mut self, scope: LogoutScope, facts: &SessionFacts, now: i64) -> Self {
        match scope {
            LogoutScope::Current => {
                self.named.insert(facts.key(), facts.expires_at);
                self.prune(now);
            }
            LogoutScope::All => self.revoke_all(now),
            LogoutScope::Others => {
                self.before = Some(now);
                self.kept = Some(facts.key());
            }
        }
        self
    }

    /// Every session issued until `now` ends (an operator's revocation, `all`).
    pub fn revoke_all(&mut self, now: i64) {
        self.before = Some(now);
        self.kept = None;
        self.named.clear();
    }

    /// The session `key` ends until `expires_at` (the provider's revocation of one session).
    pub fn revoke_named(&mut self, key: String, expires_at: i64, now: i64) {
        self.named.insert(key, expires_at);
        self.prune(now);
    }

    /// Drops named sessions whose tokens have expired, then the soonest to expire past
    /// [`MAX_NAMED`] (their tokens are the nearest to refusing themselves).
    fn prune(&mut self, now: i64) {
        self.named.retain(|_, expires_at| *expires_at > now);
        while self.named.len() > MAX_NAMED {
            let soonest = self
                .named
                .iter()
                .min_by_key(|(_, expires_at)| **expires_at)
                .map(|(key, _)| key.clone());
            match soonest {
                Some(key) => self.named.remove(&key),
                None => break,
            };
        }
    }
}

/// Which sessions a logout ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum LogoutScope {
    /// This session, until its token would have expired.
    Current,
    /// Every session issued until now, this one included.
    All,
    /// Every session issued until now but this one (its token must carry a `sid`).
    Others,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(sid: Option<&str>, issued_at: i64) -> SessionFacts {
        SessionFacts {
            sid: sid.map(str::to_owned),
            issued_at: Some(issued_at),
            expires_at: issued_at + 3600,
            token_digest: format!("digest-{issued_at}"),
        }
    }

    #[test]
    fn current_ends_this_session_only_until_its_token_expires() {
        let (this, other) = (facts(Some("a"), 100), facts(Some("b"), 100));
        let ended = Revocations::default().logout(LogoutScope::Current, &this, 200);
        assert_eq!(ended.ends(&this), Some(Ended::Revoked));
        assert_eq!(ended.ends(&other), None);
        // Once its token expired, the name is dropped at the next write.
        let later = ended.logout(LogoutScope::Current, &other, 100 + 3601);
        assert!(!later.named.contains_key("sid:a"));
    }

    #[test]
    fn all_ends_every_session_issued_until_then_and_not_a_later_one() {
        let ended = Revocations::default().logout(LogoutScope::All, &facts(None, 100), 200);
        assert_eq!(ended.ends(&facts(Some("x"), 150)), Some(Ended::Revoked));
        assert_eq!(ended.ends(&facts(None, 200)), Some(Ended::Revoked));
        assert_eq!(ended.ends(&facts(None, 201)), None);
        let no_iat = SessionFacts {
            issued_at: None,
            ..facts(None, 300)
        };
        assert_eq!(ended.ends(&no_iat), Some(Ended::Revoked));
    }

    #[test]
    fn others_keeps_this_session_and_a_later_all_ends_it() {
        let this = facts(Some("a"), 100);
        let ended = Revocations::default().logout(LogoutScope::Others, &this, 200);
        assert_eq!(ended.ends(&this), None);
        assert_eq!(ended.ends(&facts(Some("b"), 150)), Some(Ended::Revoked));
        let all = ended.logout(LogoutScope::All, &this, 300);
        assert_eq!(all.ends(&this), Some(Ended::Revoked));
    }

    #[test]
    fn a_deleted_account_ends_every_token_and_the_named_list_stays_bounded() {
        let mut revocations = Revocations::default();
        for n in 0..(MAX_NAMED as i64 + 5) {
            revocations.revoke_named(format!("sid:{n}"), 10_000 + n, 0);
        }
        assert_eq!(revocations.named.len(), MAX_NAMED);
        assert!(
            !revocations.named.contains_key("sid:0"),
            "the soonest to expire gave way"
        );
        revocations.deleted = true;
        assert_eq!(
            revocations.ends(&facts(None, 99_999)),
            Some(Ended::AccountDeleted)
        );
    }
}
