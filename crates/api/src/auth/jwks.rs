//! The identity provider's signing keys, cached across warm invocations.
//!
//! - Inline keys (`AUTH_JWKS`) never change.
//! - Remote keys (`AUTH_JWKS_URL`) are fetched on first use, then again only when a token names an
//!   unknown `kid` (key rotation) or the keys are older than [`MAX_KEY_AGE`], and never more often
//!   than once per `min_refresh` (once per [`EMPTY_RETRY`] while no key is cached at all). Fetches
//!   are single-flight: concurrent requests wait for the one under way.
//! - A failed fetch keeps the keys already cached. With no key cached the verifier answers
//!   [`JwksError::Unavailable`] (503), not 401: the token may well be good.

use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Limited};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use lambda_http::http::{Request, Uri, header};

use crate::auth::keys::{KeySet, VerifyingKey};
use crate::config::{AuthConfig, ConfigError, JwksSetting, is_loopback};
use clients::http_client::{Roots, Schemes, https_connector};

/// Keys older than this are refreshed on the next request (the old ones keep working if that
/// fails), so that a key the provider revoked stops being accepted.
pub const MAX_KEY_AGE: Duration = Duration::from_secs(3600);
/// The gap between two fetches while no key is cached (bounded by `min_refresh`).
pub const EMPTY_RETRY: Duration = Duration::from_secs(2);
/// The largest JWKS document read.
pub const MAX_JWKS_BYTES: usize = 256 * 1024;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
const FETCH_TIMEOUT: Duration = Duration::from_secs(3);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JwksError {
    /// No cached key has this `kid`, and a refetch was not allowed or did not bring it.
    #[error("no signing key with this kid")]
    UnknownKid,
    /// No key could be had at all.
    #[error("signing keys unavailable: {0}")]
    Unavailable(String),
}

type HttpsClient = Client<hyper_rustls::HttpsConnector<HttpConnector>, Empty<Bytes>>;

/// The JWKS address and an HTTP client for it, built on first use. It trusts the Mozilla root
/// store compiled into the binary: no certificate file is read at cold start.
struct Remote {
    url: Uri,
    https_only: bool,
    client: std::sync::OnceLock<HttpsClient>,
}

impl Remote {
    fn client(&self) -> &HttpsClient {
        if let Some(client) = self.client.get() {
            return client;
        }
        let schemes = if self.https_only {
            Schemes::HttpsOnly
        } else {
            Schemes::HttpsOrHttp
        };
        let client = Client::builder(TokioExecutor::new()).build(https_connector(
            Roots::WebPki,
            schemes,
            Some(CONNECT_TIMEOUT),
        ));
        // Fetches are single-flight, so no other thread builds one meanwhile.
        self.client.get_or_init(|| client)
    }
}

#[derive(Default)]
struct CacheState {
    keys: KeySet,
    fetched_at: Option<Instant>,
    last_attempt: Option<Instant>,
    last_error: Option<String>,
    attempts: u64,
}

impl CacheState {
    fn is_stale(&self, now: Instant) -> bool {
        self.fetched_at
            .is_none_or(|at| now.duration_since(at) >= MAX_KEY_AGE)
    }

    fn may_fetch(&self, now: Instant, min_refresh: Duration) -> bool {
        let gap = if self.keys.is_empty() {
            min_refresh.min(EMPTY_RETRY)
        } else {
            min_refresh
        };
        self.last_attempt
            .is_none_or(|at| now.duration_since(at) >= gap)
    }
}

pub struct JwksCache {
    remote: Option<Remote>,
    min_refresh: Duration,
    state: RwLock<CacheState>,
    refresh: tokio::sync::Mutex<()>,
}

impl JwksCache {
    /// Keys given once (`AUTH_JWKS`), never refetched.
    pub fn inline(keys: KeySet) -> Self {
        Self {
            remote: None,
            min_refresh: Duration::MAX,
            state: RwLock::new(CacheState {
                keys,
                ..CacheState::default()
            }),
            refresh: tokio::sync::Mutex::new(()),
        }
    }

    /// Keys fetched from `url` (https, or http on loopback) on first use.
    pub fn remote(url: &str, min_refresh: Duration) -> Result<Self, ConfigError> {
        let invalid = |problem: String| ConfigError::Invalid {
            name: "AUTH_JWKS_URL",
            problem,
        };
        let parsed = url::Url::parse(url).map_err(|e| invalid(e.to_string()))?;
        let uri: Uri = url
            .parse()
            .map_err(|e: lambda_http::http::uri::InvalidUri| invalid(e.to_string()))?;
        Ok(Self {
            remote: Some(Remote {
                url: uri,
                https_only: !is_loopback(&parsed),
                client: std::sync::OnceLock::new(),
            }),
            min_refresh,
            state: RwLock::new(CacheState::default()),
            refresh: tokio::sync::Mutex::new(()),
        })
    }

    pub fn from_config(config: &AuthConfig) -> Result<Self, ConfigError> {
        match &config.jwks {
            JwksSetting::Url(url) => Self::remote(url, config.jwks_min_refresh),
            JwksSetting::Inline(json) => {
                let keys =
                    KeySet::from_json(json.as_bytes()).map_err(|e| ConfigError::Invalid {
                        name: "AUTH_JWKS",
                        problem: e.to_string(),
                    })?;
                if keys.is_empty() {
                    return Err(ConfigError::Invalid {
                        name: "AUTH_JWKS",
                        problem: "no usable signing key (each needs a kid and an RSA, P-256, P-384 or Ed25519 public key)".into(),
                    });
                }
                Ok(Self::inline(keys))
            }
        }
    }

    /// How many fetches of the remote JWKS were attempted so far.
    pub fn fetch_attempts(&self) -> u64 {
        self.read().attempts
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, CacheState> {
        // The state is replaced whole under the lock, so a poisoned lock still holds a consistent
        // value.
        self.state
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The verifying key named `kid`.
    pub async fn key(&self, kid: &str) -> Result<Arc<VerifyingKey>, JwksError> {
        let Some(remote) = &self.remote else {
            return self.read().keys.get(kid).ok_or(JwksError::UnknownKid);
        };
        {
            let state = self.read();
            if let Some(key) = state.keys.get(kid)
                && !state.is_stale(Instant::now())
            {
                return Ok(key);
            }
        }
        let _single_flight = self.refresh.lock().await;
        let may_fetch = {
            let state = self.read();
            let now = Instant::now();
            match state.keys.get(kid) {
                // Another request refreshed while this one waited.
                Some(key) if !state.is_stale(now) => return Ok(key),
                _ => state.may_fetch(now, self.min_refresh),
            }
        };
        if may_fetch {
            self.refetch(remote).await;
        }
        let state = self.read();
        match state.keys.get(kid) {
            Some(key) => Ok(key),
            None if state.keys.is_empty() => Err(JwksError::Unavailable(
                state
                    .last_error
                    .clone()
                    .unwrap_or_else(|| "no keys fetched yet".into()),
            )),
            None => Err(JwksError::UnknownKid),
        }
    }

    /// Fetches the keys ahead of the first request (at a cold start, while other set-up runs).
    /// A failure is logged and leaves no trace: the first request then fetches as it would have.
    pub async fn prefetch(&self) {
        let Some(remote) = &self.remote else { return };
        let _single_flight = self.refresh.lock().await;
        if !self.read().keys.is_empty() {
            return;
        }
        let started = Instant::now();
        match fetch(remote).await {
            Ok(keys) => {
                let mut state = self
                    .state
                    .write()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                tracing::info!(keys = keys.len(), "prefetched the identity provider's JWKS");
                state.attempts += 1;
                state.last_attempt = Some(started);
                state.keys = keys;
                state.fetched_at = Some(started);
            }
            Err(error) => tracing::warn!(error = %error, "JWKS prefetch failed"),
        }
    }

    async fn refetch(&self, remote: &Remote) {
        let started = Instant::now();
        let result = fetch(remote).await;
        let mut state = self
            .state
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        state.attempts += 1;
        state.last_attempt = Some(started);
        match result {
            Ok(keys) => {
                tracing::info!(keys = keys.len(), "fetched the identity provider's JWKS");
                state.keys = keys;
                state.fetched_at = Some(started);
                state.last_error = None;
            }
            Err(error) => {
                tracing::warn!(error = %error, cached_keys = state.keys.len(), "JWKS fetch failed");
                state.last_error = Some(error);
            }
        }
    }
}

async fn fetch(remote: &Remote) -> Result<KeySet, String> {
    let client = remote.client();
    let request = Request::get(remote.url.clone())
        .header(header::ACCEPT, "application/json")
        .header(header::USER_AGENT, "fan-api")
        .body(Empty::new())
        .map_err(|e| format!("bad request: {e}"))?;
    let body = tokio::time::timeout(FETCH_TIMEOUT, async {
        let response = client
            .request(request)
            .await
            .map_err(|e| format!("request failed: {e}"))?;
        if !response.status().is_success() {
            return Err(format!("answered HTTP {}", response.status()));
        }
        Limited::new(response.into_body(), MAX_JWKS_BYTES)
            .collect()
            .await
            .map(|collected| collected.to_bytes())
            .map_err(|e| {
                format!("reading the body failed (or it is over {MAX_JWKS_BYTES} bytes): {e}")
            })
    })
    .await
    .map_err(|_| format!("no answer within {FETCH_TIMEOUT:?}"))??;
    let keys = KeySet::from_json(&body).map_err(|e| e.to_string())?;
    if keys.is_empty() {
        return Err("document holds no usable signing key".into());
    }
    Ok(keys)
}
