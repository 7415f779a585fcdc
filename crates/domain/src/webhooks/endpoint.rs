//! An endpoint events are delivered to: its URL, the types it wants, a description, whether it
//! is enabled (and why not), and its signing secrets (the previous one still signs for 24 hours
//! after a rotation, Svix's grace).

use std::collections::BTreeSet;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::signature::{SecretError, SigningSecret};
use crate::events::EventType;
use crate::ids::InvalidId;
use crate::timestamp::Timestamp;

/// How long the previous secret keeps signing after a rotation, in seconds.
pub const ROTATION_GRACE_SECONDS: i64 = 24 * 3600;
/// The longest description, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 200;
/// The longest URL, in bytes.
pub const MAX_URL_BYTES: usize = 2048;

const ID_PREFIX: &str = "ep_";
const ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const ID_CHARS: usize = 26;

/// An endpoint's id: `ep_` and 26 characters of Crockford base32 (128 random bits).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct EndpointId(String);

impl EndpointId {
    pub fn generate() -> Self {
        let mut random = [0u8; 16];
        getrandom::fill(&mut random).expect("the system random source works");
        let value = u128::from_be_bytes(random) >> 2;
        let text = (0..ID_CHARS)
            .rev()
            .map(|at| char::from(ALPHABET[usize::try_from((value >> (5 * at)) & 31).unwrap_or(0)]));
        Self(ID_PREFIX.chars().chain(text).collect())
    }

    pub fn parse(text: impl Into<String>) -> Result<Self, InvalidId> {
        let text = text.into();
        let valid = text
            .strip_prefix(ID_PREFIX)
            .is_some_and(|id| id.len() == ID_CHARS && id.bytes().all(|b| ALPHABET.contains(&b)));
        if valid {
            Ok(Self(text))
        } else {
            Err(InvalidId {
                kind: "an endpoint id",
                rule: "ep_ and 26 characters of Crockford base32",
            })
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

id_text!(EndpointId);

/// Which URLs an endpoint may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UrlPolicy {
    /// `https` only: every deployed stack.
    HttpsOnly,
    /// `https`, or `http` to a loopback host: tests only (`WEBHOOK_ALLOW_LOOPBACK_FOR_TESTS`).
    AlsoLoopbackHttp,
}

/// Why an endpoint's settings are refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EndpointError {
    #[error("the URL must be an absolute https URL of at most 2048 bytes, without credentials")]
    Url,
    #[error("the description holds at most 200 characters, none hidden")]
    Description,
    #[error(transparent)]
    Secret(#[from] SecretError),
}

/// An endpoint's URL, as its WHATWG serialisation (what was checked is what is sent).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct EndpointUrl(String);

impl EndpointUrl {
    pub fn parse(text: &str, policy: UrlPolicy) -> Result<Self, EndpointError> {
        let url = url::Url::parse(text.trim()).map_err(|_| EndpointError::Url)?;
        let scheme_ok = match url.scheme() {
            "https" => true,
            "http" => policy == UrlPolicy::AlsoLoopbackHttp && is_loopback_host(&url),
            _ => false,
        };
        let serialised = String::from(url.clone());
        let acceptable = scheme_ok
            && url.host().is_some()
            && url.username().is_empty()
            && url.password().is_none()
            && url.fragment().is_none()
            && serialised.len() <= MAX_URL_BYTES;
        acceptable
            .then_some(Self(serialised))
            .ok_or(EndpointError::Url)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

fn is_loopback_host(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(name)) => name == "localhost",
        None => false,
    }
}

/// `text` as an endpoint's description: trimmed, inner runs of white space made one space, at
/// most [`MAX_DESCRIPTION_CHARS`], no character that hides what a reader sees.
pub fn normalised_description(text: &str) -> Result<String, EndpointError> {
    let normal = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if normal.chars().count() > MAX_DESCRIPTION_CHARS || crate::text::hidden_char(&normal).is_some()
    {
        return Err(EndpointError::Description);
    }
    Ok(normal)
}

/// The event types an endpoint wants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subscription {
    All,
    Only(BTreeSet<EventType>),
}

impl Subscription {
    pub fn wants(&self, event_type: EventType) -> bool {
        match self {
            Self::All => true,
            Self::Only(types) => types.contains(&event_type),
        }
    }
}

/// Why an endpoint is disabled.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::EnumString,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum DisabledReason {
    /// An operator disabled it.
    Operator,
    /// It answered 410 Gone.
    Gone,
    /// Every attempt failed for [`super::retry::FAILING_DISABLES_SECONDS`].
    Failing,
}

/// Whether an endpoint receives deliveries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndpointState {
    Enabled,
    Disabled {
        reason: DisabledReason,
        at: Timestamp,
    },
}

impl EndpointState {
    pub fn is_enabled(self) -> bool {
        self == Self::Enabled
    }
}

/// A signing secret's text (`whsec_…`), checked, never printed.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretText(String);

impl fmt::Debug for SecretText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SecretText(..)")
    }
}

impl SecretText {
    pub fn parse(text: String) -> Result<Self, SecretError> {
        SigningSecret::parse(&text)?;
        Ok(Self(text))
    }

    /// A new random secret.
    pub fn generate() -> Result<Self, getrandom::Error> {
        SigningSecret::generate().map(|(_, text)| Self(text))
    }

    /// The text, to store or to show its owner once.
    pub fn expose(&self) -> &str {
        &self.0
    }

    fn signing(&self) -> SigningSecret {
        SigningSecret::parse(&self.0).expect("checked when made")
    }
}

/// An endpoint's secrets: the current one, and after a rotation the previous one until it stops
/// signing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Secrets {
    pub current: SecretText,
    pub previous: Option<(SecretText, Timestamp)>,
}

impl Secrets {
    /// The secrets that sign a delivery at `now`: the current one, and the previous one while
    /// its grace lasts.
    pub fn signing(&self, now: Timestamp) -> Vec<SigningSecret> {
        let mut secrets = vec![self.current.signing()];
        if let Some((previous, until)) = &self.previous
            && now < *until
        {
            secrets.push(previous.signing());
        }
        secrets
    }

    /// After a rotation at `now` to `next`: the current secret signs on for 24 hours.
    pub fn rotated(&self, next: SecretText, now: Timestamp) -> Self {
        let until = now
            .plus_seconds(ROTATION_GRACE_SECONDS)
            .expect("a day after now is in range");
        Self {
            current: next,
            previous: Some((self.current.clone(), until)),
        }
    }
}

/// An endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub id: EndpointId,
    pub url: EndpointUrl,
    pub subscription: Subscription,
    pub description: String,
    pub state: EndpointState,
    pub secrets: Secrets,
    /// When the current streak of failed attempts began (none while deliveries succeed).
    pub failing_since: Option<Timestamp>,
    /// The count of its writes (1 when created): a change is written only at the revision it
    /// was decided on, so that no two writers overwrite each other.
    pub revision: u64,
}

impl Endpoint {
    /// Whether an event of `event_type` is delivered to it now.
    pub fn receives(&self, event_type: EventType) -> bool {
        self.state.is_enabled() && self.subscription.wants(event_type)
    }
}

/// An operator's change of an endpoint's settings: each field given replaces its own.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EndpointChange {
    pub url: Option<EndpointUrl>,
    pub subscription: Option<Subscription>,
    pub description: Option<String>,
    /// `true` enables it (a new failing streak then starts from none); `false` disables it,
    /// unless it is disabled already (its first reason kept).
    pub enabled: Option<bool>,
}

impl Endpoint {
    /// The endpoint after `change`, made at `now` (its revision unchanged: the store counts it).
    pub fn changed(&self, change: EndpointChange, now: Timestamp) -> Self {
        let mut next = self.clone();
        next.url = change.url.unwrap_or(next.url);
        next.subscription = change.subscription.unwrap_or(next.subscription);
        next.description = change.description.unwrap_or(next.description);
        match change.enabled {
            Some(true) => {
                next.state = EndpointState::Enabled;
                next.failing_since = None;
            }
            Some(false) if next.state.is_enabled() => {
                next.state = EndpointState::Disabled {
                    reason: DisabledReason::Operator,
                    at: now,
                };
            }
            _ => {}
        }
        next
    }

    /// The endpoint after its secret's rotation at `now` to `next`.
    pub fn rotated(&self, next: SecretText, now: Timestamp) -> Self {
        Self {
            secrets: self.secrets.rotated(next, now),
            ..self.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Timestamp {
        Timestamp::parse(text).unwrap()
    }

    #[test]
    fn ids_are_generated_and_parsed() {
        let id = EndpointId::generate();
        assert_eq!(EndpointId::parse(id.as_str()).unwrap(), id);
        assert_ne!(EndpointId::generate(), id);
        assert!(EndpointId::parse("ep_short").is_err());
        assert!(EndpointId::parse(id.as_str().replace("ep_", "ev_")).is_err());
    }

    #[test]
    fn urls_are_https_unless_a_test_allows_loopback_http() {
        let https = EndpointUrl::parse(
            " https://hooks.example.com:8443/in?a=1 ",
            UrlPolicy::HttpsOnly,
        );
        assert_eq!(
            https.unwrap().as_str(),
            "https://hooks.example.com:8443/in?a=1"
        );
        for refused in [
            "http://hooks.example.com/",
            "http://127.0.0.1:9000/",
            "ftp://hooks.example.com/",
            "https://user:pw@hooks.example.com/",
            "https://hooks.example.com/#frag",
            "/relative",
        ] {
            assert_eq!(
                EndpointUrl::parse(refused, UrlPolicy::HttpsOnly),
                Err(EndpointError::Url),
                "{refused}"
            );
        }
        assert!(EndpointUrl::parse("http://127.0.0.1:9000/", UrlPolicy::AlsoLoopbackHttp).is_ok());
        assert!(EndpointUrl::parse("http://[::1]:9000/", UrlPolicy::AlsoLoopbackHttp).is_ok());
        assert_eq!(
            EndpointUrl::parse("http://10.0.0.1/", UrlPolicy::AlsoLoopbackHttp),
            Err(EndpointError::Url)
        );
    }

    #[test]
    fn descriptions_are_normalised() {
        assert_eq!(
            normalised_description("  CRM \n  sync ").unwrap(),
            "CRM sync"
        );
        assert_eq!(
            normalised_description("a\u{202E}b"),
            Err(EndpointError::Description)
        );
        assert!(normalised_description(&"x".repeat(201)).is_err());
    }

    #[test]
    fn the_previous_secret_signs_for_24_hours_after_a_rotation() {
        let first = SecretText::generate().unwrap();
        let secrets = Secrets {
            current: first,
            previous: None,
        };
        let now = at("2026-11-29T08:00:00Z");
        assert_eq!(secrets.signing(now).len(), 1);
        let rotated = secrets.rotated(SecretText::generate().unwrap(), now);
        assert_eq!(rotated.previous.as_ref().unwrap().0, secrets.current);
        assert_eq!(rotated.signing(at("2026-11-30T07:59:59Z")).len(), 2);
        assert_eq!(rotated.signing(at("2026-11-30T08:00:00Z")).len(), 1);
        assert_eq!(format!("{:?}", rotated.current), "SecretText(..)");
    }

    #[test]
    fn an_endpoint_receives_what_it_subscribed_to_while_enabled() {
        let mut endpoint = Endpoint {
            id: EndpointId::generate(),
            url: EndpointUrl::parse("https://hooks.example.com/", UrlPolicy::HttpsOnly).unwrap(),
            subscription: Subscription::Only([EventType::WalletLinked].into()),
            description: String::new(),
            state: EndpointState::Enabled,
            secrets: Secrets {
                current: SecretText::generate().unwrap(),
                previous: None,
            },
            failing_since: None,
            revision: 1,
        };
        assert!(endpoint.receives(EventType::WalletLinked));
        assert!(!endpoint.receives(EventType::WalletRemoved));
        endpoint.subscription = Subscription::All;
        assert!(endpoint.receives(EventType::WalletRemoved));
        endpoint.state = EndpointState::Disabled {
            reason: DisabledReason::Gone,
            at: at("2026-11-29T08:00:00Z"),
        };
        assert!(!endpoint.receives(EventType::WalletLinked));
        let now = at("2026-11-30T08:00:00Z");
        let kept = endpoint.changed(
            EndpointChange {
                enabled: Some(false),
                ..EndpointChange::default()
            },
            now,
        );
        assert_eq!(kept.state, endpoint.state, "the first reason is kept");
        endpoint.failing_since = Some(now);
        let enabled = endpoint.changed(
            EndpointChange {
                enabled: Some(true),
                description: Some("CRM".into()),
                ..EndpointChange::default()
            },
            now,
        );
        assert!(enabled.state.is_enabled() && enabled.failing_since.is_none());
        assert_eq!((enabled.description.as_str(), enabled.revision), ("CRM", 1));
    }
}
