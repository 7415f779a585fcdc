//! The app's configuration as an instance holds it ([`ConfigCache`]: read from the store at most
//! once per [`CONFIG_MAX_AGE_SECONDS`], one read at a time), and what every route does with it
//! before its handler ([`gate`]): an app below its platform's forced minimum gets 426
//! `app_version_unsupported`, and during maintenance a write gets 503 `maintenance`.
//!
//! Why in every function: a request reaches only the function of its route, so each must refuse
//! for itself; what it costs is one `GetItem` per instance per few seconds, none per request.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::http::HeaderMap;

use crate::http::error::ApiError;
use domain::app_config::{APP_VERSION_HEADER, AppConfig, CONFIG_MAX_AGE_SECONDS, VersionRefusal};
use domain::ratelimit::RouteClass;
use domain::timestamp::Timestamp;
use store::StoreError;
use store::app_config::{GetAppConfig, StoredAppConfig};

/// The configuration an instance goes by: the stored one, or the defaults (no minimum, no
/// flags, no maintenance) when none was ever set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Current {
    pub config: AppConfig,
    /// 0: none was ever set.
    pub revision: u64,
}

impl From<Option<StoredAppConfig>> for Current {
    fn from(stored: Option<StoredAppConfig>) -> Self {
        stored.map_or_else(Self::default, |stored| Self {
            config: stored.config,
            revision: stored.revision,
        })
    }
}

type Read = Pin<Box<dyn Future<Output = Result<Option<StoredAppConfig>, StoreError>> + Send>>;

/// What a cache reads from: the store, type-erased (every function's store is another type).
type Source = Box<dyn Fn() -> Read + Send + Sync>;

/// An instance's copy of the configuration.
pub struct ConfigCache {
    source: Source,
    max_age: Duration,
    /// The copy and when it was read (`None`: never read yet).
    held: Mutex<Option<(Instant, Arc<Current>)>>,
    /// Held while a read is under way, so that the requests finding the copy old wait for one
    /// read rather than each making its own.
    reading: tokio::sync::Mutex<()>,
}

impl ConfigCache {
    /// A cache of `store`'s configuration, read again when older than
    /// [`CONFIG_MAX_AGE_SECONDS`].
    pub fn new<S: GetAppConfig + Clone + 'static>(store: &S) -> Self {
        Self::with_max_age(store, Duration::from_secs(CONFIG_MAX_AGE_SECONDS))
    }

    /// A cache that reads again once its copy is `max_age` old (0: on every request).
    pub fn with_max_age<S: GetAppConfig + Clone + 'static>(store: &S, max_age: Duration) -> Self {
        let store = store.clone();
        Self {
            source: Box::new(move || {
                let store = store.clone();
                Box::pin(async move { store.app_config().await })
            }),
            max_age,
            held: Mutex::default(),
            reading: tokio::sync::Mutex::const_new(()),
        }
    }

    fn fresh(&self) -> Option<Arc<Current>> {
        let held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        held.as_ref()
            .filter(|(read_at, _)| read_at.elapsed() < self.max_age)
            .map(|(_, current)| Arc::clone(current))
    }

    /// What the instance holds now, however old, without reading (`None`: nothing yet).
    pub fn held(&self) -> Option<Arc<Current>> {
        let held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        held.as_ref().map(|(_, current)| Arc::clone(current))
    }

    /// The configuration, read again if the copy is too old. When the store cannot be read,
    /// the old copy (or the defaults) is kept for another `max_age`, so that an outage costs one
    /// read per instance per few seconds, not one per request; the read's failure is logged.
    pub async fn current(&self) -> Arc<Current> {
        if let Some(current) = self.fresh() {
            return current;
        }
        let _reading = self.reading.lock().await;
        if let Some(current) = self.fresh() {
            return current;
        }
        let current = match (self.source)().await {
            Ok(stored) => Arc::new(Current::from(stored)),
            Err(error) => {
                tracing::warn!(error = %error.detail(), "the app configuration could not be read; keeping the copy held");
                self.held().unwrap_or_default()
            }
        };
        *self.held.lock().unwrap_or_else(PoisonError::into_inner) =
            Some((Instant::now(), Arc::clone(&current)));
        current
    }
}

/// The refusal, if any, of a request of `class` with `headers` under `config` at `now`: a
/// forced update's 426 for every class but the exempt (Stripe's webhook), and maintenance's 503
/// for the writes (a payment Stripe already took is credited by the exempt webhook; a Cash
/// payment refused here was never begun).
pub fn refusal(
    config: &AppConfig,
    class: RouteClass,
    headers: &HeaderMap,
    now: Timestamp,
) -> Option<ApiError> {
    if class == RouteClass::Exempt {
        return None;
    }
    let version = headers
        .get(APP_VERSION_HEADER)
        .map(|value| value.to_str().unwrap_or("\u{fffd}"));
    if let Err(VersionRefusal { store_url }) = config.version_gate(version) {
        return Some(ApiError::AppVersionUnsupported { store_url });
    }
    let retry_after = config.maintenance_at(now).filter(|_| writes(class))?;
    Some(ApiError::Maintenance {
        retry_after: u32::try_from(retry_after).unwrap_or(u32::MAX),
    })
}

/// Whether a request of `class` with `headers` could be refused at all: a read without
/// `X-App-Version` never is, and does not wait for the configuration.
fn gated(class: RouteClass, headers: &HeaderMap) -> bool {
    writes(class) || (class != RouteClass::Exempt && headers.contains_key(APP_VERSION_HEADER))
}

fn writes(class: RouteClass) -> bool {
    matches!(
        class,
        RouteClass::Start | RouteClass::Join | RouteClass::Write
    )
}

/// Runs [`refusal`] on a request of `class` with the cache the layers put on it (none: no
/// gate, as in a handler's unit test).
pub async fn gate(
    cache: Option<&Arc<ConfigCache>>,
    class: RouteClass,
    headers: &HeaderMap,
) -> Option<ApiError> {
    let cache = cache.filter(|_| gated(class, headers))?;
    let current = cache.current().await;
    refusal(&current.config, class, headers, Timestamp::now())
}

/// The instance's configuration, for the handlers that answer it: the cache the layers put on
/// the request (500 when a router was served without it: a wiring mistake).
pub struct HeldConfig(Arc<ConfigCache>);

impl HeldConfig {
    /// The configuration, read again if the copy is too old.
    pub async fn current(&self) -> Arc<Current> {
        self.0.current().await
    }

    /// What the instance holds, without waiting for a read: a copy too old is read again in the
    /// background for the next request, so that an instance answering only health checks
    /// still follows the operator's switch.
    pub fn peek(&self) -> Option<Arc<Current>> {
        if self.0.fresh().is_none() {
            let cache = Arc::clone(&self.0);
            tokio::spawn(async move { cache.current().await });
        }
        self.0.held()
    }
}

impl<St: Send + Sync> axum::extract::FromRequestParts<St> for HeldConfig {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _: &St,
    ) -> Result<Self, ApiError> {
        parts
            .extensions
            .get::<Arc<ConfigCache>>()
            .map(|cache| Self(Arc::clone(cache)))
            .ok_or_else(|| ApiError::Internal {
                detail: "no app configuration on the request: the router is served without \
                         `ApiLayers::with_config`"
                    .into(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::error::ErrorCode;

    fn config(json: &str) -> AppConfig {
        AppConfig::parse(json).unwrap()
    }

    fn headers(version: Option<&str>) -> HeaderMap {
        let mut headers = HeaderMap::new();
        if let Some(version) = version {
            headers.insert(APP_VERSION_HEADER, version.parse().unwrap());
        }
        headers
    }

    fn code(refusal: Option<ApiError>) -> Option<(u16, ErrorCode)> {
        refusal.map(|e| (e.status().as_u16(), e.code()))
    }

    #[test]
    fn maintenance_refuses_writes_of_every_class_but_the_webhook_and_serves_reads() {
        let config = config(r#"{"maintenance": {"active": true}}"#);
        let now = Timestamp::now();
        for class in [RouteClass::Start, RouteClass::Join, RouteClass::Write] {
            assert!(gated(class, &headers(None)));
            assert_eq!(
                code(refusal(&config, class, &headers(None), now)),
                Some((503, ErrorCode::Maintenance)),
                "{class:?}"
            );
        }
        for class in [RouteClass::Read, RouteClass::Exempt] {
            assert_eq!(
                refusal(&config, class, &headers(None), now),
                None,
                "{class:?}"
            );
        }
        assert!(
            !gated(RouteClass::Read, &headers(None)),
            "a plain read waits for nothing"
        );
        assert!(!gated(RouteClass::Exempt, &headers(Some("ios/1"))));
    }

    #[test]
    fn a_forced_update_refuses_every_class_but_the_webhook() {
        let config = config(
            r#"{"minimumVersions": {"web": {"version": "5", "update": "forced",
                "storeUrl": "https://fan.example/"}}}"#,
        );
        let now = Timestamp::now();
        for class in RouteClass::LIMITED {
            assert_eq!(
                code(refusal(&config, class, &headers(Some("web/4.9")), now)),
                Some((426, ErrorCode::AppVersionUnsupported)),
                "{class:?}"
            );
            assert_eq!(
                refusal(&config, class, &headers(Some("web/4.9 ")), now),
                None
            );
            assert_eq!(
                refusal(&config, class, &headers(Some("web/5.0.0")), now),
                None
            );
        }
        let old = headers(Some("web/1"));
        assert_eq!(refusal(&config, RouteClass::Exempt, &old, now), None);
    }

    #[test]
    fn a_planned_window_says_when_to_retry() {
        let config = config(
            r#"{"maintenance": {"window": {"startsAt": "2030-01-01T00:00:00Z",
                "endsAt": "2030-01-01T00:20:00Z"}}}"#,
        );
        let during = Timestamp::parse("2030-01-01T00:05:00Z").unwrap();
        let refused = refusal(&config, RouteClass::Write, &headers(None), during);
        assert_eq!(refused, Some(ApiError::Maintenance { retry_after: 900 }));
        let after = Timestamp::parse("2030-01-01T00:20:00Z").unwrap();
        assert_eq!(
            refusal(&config, RouteClass::Write, &headers(None), after),
            None
        );
    }
}
