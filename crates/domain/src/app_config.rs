//! What the app reads at start (`GET /api/config`): the oldest app version each platform may
//! still call with, feature flags and maintenance. Set by an operator without a deploy
//! (`app-config`, docs/operations.md), kept in the table, read by each instance at most once per
//! [`CONFIG_MAX_AGE_SECONDS`].
//!
//! The rules here: what a valid configuration is ([`AppConfig::parse`]), whether an app version
//! may call ([`AppConfig::version_gate`]) and whether writes are in maintenance
//! ([`AppConfig::maintenance_at`]).

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::timestamp::Timestamp;
use crate::urls::normalised_https_url;

/// How old, in seconds, an instance's copy of the configuration may be before a request reads
/// it again: what an operator's switch waits to take effect everywhere.
pub const CONFIG_MAX_AGE_SECONDS: u64 = 5;

/// The request header naming the app and its version: `<platform>/<version>`, `ios/2.3.1`.
pub const APP_VERSION_HEADER: &str = "x-app-version";

/// The most feature flags a configuration holds (it is one item, read on every cold start).
pub const MAX_FLAGS: usize = 100;

/// What `Retry-After` says during maintenance with no planned end, in seconds.
pub const MAINTENANCE_RETRY_SECONDS: u64 = 60;

/// A platform the app ships on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Platform {
    Ios,
    Android,
    Web,
}

impl Platform {
    pub const ALL: [Platform; 3] = [Platform::Ios, Platform::Android, Platform::Web];

    pub const fn as_str(self) -> &'static str {
        match self {
            Platform::Ios => "ios",
            Platform::Android => "android",
            Platform::Web => "web",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.as_str() == text)
    }
}

/// An app version: up to three dot-separated whole numbers (`2`, `2.3`, `2.3.1`), a missing
/// part being 0; compared part by part.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct AppVersion([u32; 3]);

impl AppVersion {
    pub fn parse(text: &str) -> Option<Self> {
        let mut parts = [0; 3];
        for (i, part) in text.split('.').enumerate() {
            let slot = parts.get_mut(i)?;
            // Digits only, at most 6 of them: no sign, no space, no `1e3`.
            if part.is_empty() || part.len() > 6 || !part.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            *slot = part.parse().ok()?;
        }
        Some(Self(parts))
    }
}

impl fmt::Display for AppVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [major, minor, patch] = self.0;
        write!(f, "{major}.{minor}.{patch}")
    }
}

impl Serialize for AppVersion {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for AppVersion {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Self::parse(&text).ok_or_else(|| serde::de::Error::custom("not an app version"))
    }
}

/// What an app below its platform's minimum must do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Update {
    /// It may not call the API: every request it sends is refused with 426.
    Forced,
    /// It is served; the app asks its fan to update.
    Flexible,
}

/// A platform's oldest supported version, and where its fans update.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MinimumVersion {
    pub version: AppVersion,
    pub update: Update,
    /// The store page (`https`, normalised as [`normalised_https_url`] keeps URLs).
    pub store_url: String,
}

/// A planned maintenance: writes are refused from `starts_at` until `ends_at`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Window {
    pub starts_at: Timestamp,
    pub ends_at: Timestamp,
}

/// The maintenance switch and the planned window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Maintenance {
    /// On: writes are refused now, whatever the window says.
    #[serde(default)]
    pub active: bool,
    #[serde(default)]
    pub window: Option<Window>,
}

/// The configuration an operator sets (its `revision` is the store's).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AppConfig {
    #[serde(default)]
    pub minimum_versions: BTreeMap<Platform, MinimumVersion>,
    #[serde(default)]
    pub flags: BTreeMap<String, bool>,
    #[serde(default)]
    pub maintenance: Maintenance,
}

/// Why a configuration was refused (said to the operator).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AppConfigError {
    #[error("not a configuration: {0}")]
    Malformed(String),
    #[error("{0}'s storeUrl is not an https URL on a public domain name")]
    StoreUrl(&'static str),
    #[error("flag name {0:?}: 1-64 characters of a-z, A-Z, 0-9, '.', '_', '-'")]
    FlagName(String),
    #[error("more than {MAX_FLAGS} flags")]
    TooManyFlags,
    #[error("the maintenance window ends before it starts")]
    Window,
}

/// Why a request's app may not call: below its platform's forced minimum; its fan updates from
/// `store_url`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionRefusal {
    pub store_url: String,
}

impl AppConfig {
    /// An operator's configuration (JSON), checked and normalised.
    pub fn parse(json: &str) -> Result<Self, AppConfigError> {
        let mut config: AppConfig =
            serde_json::from_str(json).map_err(|e| AppConfigError::Malformed(e.to_string()))?;
        for (platform, minimum) in &mut config.minimum_versions {
            minimum.store_url = normalised_https_url(&minimum.store_url)
                .ok_or(AppConfigError::StoreUrl(platform.as_str()))?;
        }
        if config.flags.len() > MAX_FLAGS {
            return Err(AppConfigError::TooManyFlags);
        }
        if let Some(name) = config.flags.keys().find(|name| !is_flag_name(name)) {
            return Err(AppConfigError::FlagName(name.clone()));
        }
        if let Some(window) = config.maintenance.window
            && window.ends_at <= window.starts_at
        {
            return Err(AppConfigError::Window);
        }
        Ok(config)
    }

    /// Whether a request whose app says `header` (`X-App-Version`) may call: a request without
    /// one is served (old clients, tools), and so is one whose header is not
    /// `<platform>/<version>` of a known platform (it says nothing the gate can go by: refusing
    /// it would answer 400 before a missing token's 401), an app at or above its platform's
    /// minimum, or below a flexible one.
    pub fn version_gate(&self, header: Option<&str>) -> Result<(), VersionRefusal> {
        let Some((platform, version)) = header
            .and_then(|header| header.split_once('/'))
            .and_then(|(p, v)| Some((Platform::parse(p)?, AppVersion::parse(v)?)))
        else {
            return Ok(());
        };
        match self.minimum_versions.get(&platform) {
            Some(minimum) if minimum.update == Update::Forced && version < minimum.version => {
                Err(VersionRefusal {
                    store_url: minimum.store_url.clone(),
                })
            }
            _ => Ok(()),
        }
    }

    /// `Some(seconds to retry after)` when writes are in maintenance at `now`: the switch is on,
    /// or `now` is in the planned window (retry at its end).
    pub fn maintenance_at(&self, now: Timestamp) -> Option<u64> {
        let in_window = self
            .maintenance
            .window
            .filter(|window| window.starts_at <= now && now < window.ends_at);
        match (self.maintenance.active, in_window) {
            (_, Some(window)) => Some(
                window
                    .ends_at
                    .unix_seconds()
                    .saturating_sub(now.unix_seconds())
                    .max(1),
            ),
            (true, None) => Some(MAINTENANCE_RETRY_SECONDS),
            (false, None) => None,
        }
    }
}

fn is_flag_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(json: &str) -> AppConfig {
        AppConfig::parse(json).unwrap()
    }

    const FORCED_IOS: &str = r#"{"minimumVersions": {"ios": {"version": "2.3",
        "update": "forced", "storeUrl": "https://APPS.apple.com/app/id1"}}}"#;

    #[test]
    fn versions_compare_part_by_part_with_missing_parts_zero() {
        let v = |text| AppVersion::parse(text).unwrap();
        assert!(v("2.10") > v("2.9"));
        assert_eq!(v("2"), v("2.0.0"));
        assert!(v("1.99.99") < v("2"));
        for bad in [
            "", "2.", ".2", "1.2.3.4", "v2", "1.-2", "1.2 ", "+1", "1234567",
        ] {
            assert_eq!(AppVersion::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_forced_minimum_refuses_older_apps_of_its_platform_only() {
        let config = config(FORCED_IOS);
        let refused = Err(VersionRefusal {
            store_url: "https://apps.apple.com/app/id1".into(),
        });
        assert_eq!(config.version_gate(Some("ios/2.2.9")), refused);
        assert_eq!(config.version_gate(Some("ios/2.3.0")), Ok(()));
        assert_eq!(config.version_gate(Some("android/1.0")), Ok(()));
        assert_eq!(config.version_gate(None), Ok(()));
        for unknown in ["", "ios", "ios/", "IOS/2", "tv/1.0", "ios/2.x"] {
            assert_eq!(config.version_gate(Some(unknown)), Ok(()), "{unknown}");
        }
        let flexible = config_with(FORCED_IOS.replace("forced", "flexible"));
        assert_eq!(flexible.version_gate(Some("ios/1.0")), Ok(()));
    }

    fn config_with(json: String) -> AppConfig {
        AppConfig::parse(&json).unwrap()
    }

    #[test]
    fn operator_mistakes_are_refused() {
        let bad = |json: &str| AppConfig::parse(json).unwrap_err();
        assert_eq!(
            bad(&FORCED_IOS.replace("https://APPS", "http://apps")),
            AppConfigError::StoreUrl("ios")
        );
        assert!(matches!(
            bad(r#"{"flags": {"a b": true}}"#),
            AppConfigError::FlagName(_)
        ));
        assert!(matches!(
            bad(r#"{"flag": {}}"#),
            AppConfigError::Malformed(_)
        ));
        assert_eq!(
            bad(
                r#"{"maintenance": {"window": {"startsAt": "2026-01-02T00:00:00Z",
                "endsAt": "2026-01-01T00:00:00Z"}}}"#
            ),
            AppConfigError::Window
        );
    }

    #[test]
    fn maintenance_is_the_switch_or_the_window() {
        let at = |text| Timestamp::parse(text).unwrap();
        let planned = config(
            r#"{"maintenance": {"window": {"startsAt": "2026-01-01T00:00:00Z",
                "endsAt": "2026-01-01T00:10:00Z"}}}"#,
        );
        assert_eq!(planned.maintenance_at(at("2025-12-31T23:59:59Z")), None);
        assert_eq!(
            planned.maintenance_at(at("2026-01-01T00:00:00Z")),
            Some(600)
        );
        assert_eq!(
            planned.maintenance_at(at("2026-01-01T00:09:59.5Z")),
            Some(1)
        );
        assert_eq!(planned.maintenance_at(at("2026-01-01T00:10:00Z")), None);
        let switched = config(r#"{"maintenance": {"active": true}}"#);
        assert_eq!(
            switched.maintenance_at(at("2026-01-01T00:00:00Z")),
            Some(MAINTENANCE_RETRY_SECONDS)
        );
    }
}
