//! The rate limits on a route ([`crate::ratelimit`]), as an axum layer each route of the
//! declaration (`routes.rs`) wears with its class ([`limit`]), and the fan's part in the
//! [`crate::http::extract::Fan`] extractor ([`Limiting::fan`]).
//!
//! A request is counted on its address by the layer, before any extractor, and on its fan once
//! the token is verified (the `sub` of a token nobody checked could be anyone's, and counting on
//! it would let a script spend another fan's quota). A request the fan's window refuses gives
//! its address's count back: a script behind a carrier NAT spends only its own quota, never
//! its neighbours'. Every answer of a limited route carries `RateLimit-Policy` and `RateLimit`;
//! a refusal is 429 `rate_limited` with `Retry-After`. The counters unreachable: reads and
//! other writes are served (fail open), starts and joins are 503 (fail closed).
//!
//! The [`Limiter`] comes to the layer as a request extension, set once around the whole router
//! ([`crate::http::layers::api_layers`]): a router built without one (a handler's unit tests)
//! is not limited.

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};

use axum::extract::Request;
use axum::http::{HeaderMap, HeaderName, HeaderValue};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::http::error::ApiError;
use crate::http::request::source_address;
use crate::ids::UserId;
use crate::metrics::{self, Metric};
use crate::ratelimit::{
    Counter, MAX_RETRY_JITTER_SECONDS, RatePolicy, RouteClass, Scope, Standing, Taken, Window,
    counter_key, fields, retry_after,
};
use crate::store::StoreError;
use crate::store::ratelimit::TakeFromWindow;

type Boxed<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The counters, as the limiter holds any store's.
trait Counters: Send + Sync {
    fn take<'a>(&'a self, counter: &'a Counter, quota: u32)
    -> Boxed<'a, Result<Taken, StoreError>>;
    fn give_back<'a>(&'a self, counter: &'a Counter) -> Boxed<'a, Result<(), StoreError>>;
}

impl<S: TakeFromWindow> Counters for S {
    fn take<'a>(
        &'a self,
        counter: &'a Counter,
        quota: u32,
    ) -> Boxed<'a, Result<Taken, StoreError>> {
        Box::pin(TakeFromWindow::take(self, counter, quota))
    }
    fn give_back<'a>(&'a self, counter: &'a Counter) -> Boxed<'a, Result<(), StoreError>> {
        Box::pin(TakeFromWindow::give_back(self, counter))
    }
}

/// The clock of the windows, in seconds since the epoch (a test fixes it, so that a window
/// cannot end in the middle of what it counts).
pub type Clock = Arc<dyn Fn() -> i64 + Send + Sync>;

/// The system clock.
pub fn system_clock() -> Clock {
    Arc::new(|| i64::try_from(crate::timestamp::Timestamp::now().unix_seconds()).unwrap_or(0))
}

/// The rate limits of one process: the policy, the store's counters, and the windows this
/// process has seen full (refused at once, with no write, until they end: a script's flood
/// costs the store one failed write per instance and window, never one per request).
pub struct Limiter {
    counters: Box<dyn Counters>,
    policy: RatePolicy,
    clock: Clock,
    full: Mutex<HashSet<Counter>>,
}

impl Limiter {
    pub fn new<S: TakeFromWindow + 'static>(store: S, policy: RatePolicy, clock: Clock) -> Self {
        Self {
            counters: Box::new(store),
            policy,
            clock,
            full: Mutex::default(),
        }
    }

    pub fn policy(&self) -> &RatePolicy {
        &self.policy
    }

    /// The standing of `who`'s window of `class` when this process has seen it full, read from
    /// memory only (no store call).
    fn known_full(&self, class: RouteClass, scope: Scope, who: &str) -> Option<Standing> {
        let quota = self.policy.of(class)?.quota(scope);
        let now = (self.clock)();
        let counter = Counter {
            class,
            scope,
            key: counter_key(scope, who),
            window: Window::at(now, quota),
        };
        let full = self.full.lock().unwrap_or_else(PoisonError::into_inner);
        full.contains(&counter)
            .then(|| Standing::of(scope, quota, Taken::Full, counter.window, now))
    }

    /// Takes one request of `class` from `who`'s window (`scope`): its standing after it, or
    /// `None` for a class that is not limited.
    async fn take(
        &self,
        class: RouteClass,
        scope: Scope,
        who: &str,
    ) -> Result<Option<(Counter, Standing)>, StoreError> {
        let Some(policy) = self.policy.of(class) else {
            return Ok(None);
        };
        let quota = policy.quota(scope);
        let now = (self.clock)();
        let counter = Counter {
            class,
            scope,
            key: counter_key(scope, who),
            window: Window::at(now, quota),
        };
        let known_full = self
            .full
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(&counter);
        let taken = if known_full {
            Taken::Full
        } else {
            self.counters.take(&counter, quota.quota).await?
        };
        if taken == Taken::Full && !known_full {
            let mut full = self.full.lock().unwrap_or_else(PoisonError::into_inner);
            full.retain(|seen| seen.window.end > now);
            full.insert(counter.clone());
        }
        let standing = Standing::of(scope, quota, taken, counter.window, now);
        Ok(Some((counter, standing)))
    }
}

/// What a limited request carries from the layer to the [`crate::http::extract::Fan`]
/// extractor, and back: its class, the counters it took, their standings for the fields.
#[derive(Clone)]
pub struct Limiting {
    limiter: Arc<Limiter>,
    class: RouteClass,
    taken: Arc<Mutex<Vec<(Counter, Standing)>>>,
}

impl Limiting {
    fn standings(&self) -> Vec<Standing> {
        self.taken
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .map(|(_, standing)| *standing)
            .collect()
    }

    /// Counts the request on `scope`'s window of `who`: `Ok` when served; the 429 when that
    /// window is full (the counts taken before it given back), or the 503 of a class that
    /// fails closed when the counters cannot be reached (one that fails open is served).
    async fn count(&self, scope: Scope, who: &str) -> Result<(), ApiError> {
        let taken = match self.limiter.take(self.class, scope, who).await {
            Ok(taken) => taken,
            Err(error) if self.class.fails_open() => {
                tracing::warn!(class = %self.class, error = %error.detail(), "rate limits unreachable; served");
                return Ok(());
            }
            Err(error) => {
                tracing::warn!(class = %self.class, "rate limits unreachable; refused");
                return Err(error.into());
            }
        };
        let Some((counter, standing)) = taken else {
            return Ok(());
        };
        let earlier: Vec<Counter> = {
            let mut taken = self.taken.lock().unwrap_or_else(PoisonError::into_inner);
            let earlier = taken.iter().map(|(counter, _)| counter.clone()).collect();
            taken.push((counter, standing));
            earlier
        };
        if !standing.refused {
            return Ok(());
        }
        for counter in &earlier {
            if let Err(error) = self.limiter.counters.give_back(counter).await {
                tracing::warn!(error = %error.detail(), "a count could not be given back");
            }
        }
        Err(self.refusal(scope))
    }

    /// Refuses at once, with no write, a request whose token names a fan whose window this
    /// process has seen full. The token is not verified here: a forged `sub` only gets its own
    /// request refused (the window it names is full for its owner too), and sparing the
    /// address's count is what keeps a script's flood off its neighbours' shared address key.
    fn refuse_known_full(&self, headers: &HeaderMap) -> Result<(), ApiError> {
        let Some(sub) = unverified_sub(headers) else {
            return Ok(());
        };
        let Some(standing) = self.limiter.known_full(self.class, Scope::Fan, &sub) else {
            return Ok(());
        };
        self.taken
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((Counter::unnamed(self.class), standing));
        Err(self.refusal(Scope::Fan))
    }

    /// The 429 of a request `scope`'s window refused, counted in `RateLimited`.
    fn refusal(&self, scope: Scope) -> ApiError {
        metrics::count(Metric::RateLimited);
        metrics::property("rateClass", self.class.name());
        metrics::property("rateScope", scope.name());
        ApiError::RateLimited {
            class: self.class.name(),
            retry_after: retry_after(&self.standings(), jitter()),
        }
    }

    /// Counts the request on the signed-in fan's window (called by the `Fan` extractor once the
    /// token is verified).
    pub async fn fan(&self, user_id: &UserId) -> Result<(), ApiError> {
        self.count(Scope::Fan, user_id.as_str()).await
    }

    /// Writes `RateLimit-Policy` and `RateLimit` of every window the request was counted on.
    fn write_fields(&self, headers: &mut HeaderMap) {
        let standings = self.standings();
        if standings.is_empty() {
            return;
        }
        for (name, value) in [
            (RATELIMIT_POLICY, fields::policy(self.class, &standings)),
            (RATELIMIT, fields::limit(self.class, &standings)),
        ] {
            // The text is the fields' ASCII; taken as it is, without a copy.
            if let Ok(value) = HeaderValue::try_from(value) {
                headers.insert(name, value);
            }
        }
    }
}

const RATELIMIT_POLICY: HeaderName = HeaderName::from_static("ratelimit-policy");
const RATELIMIT: HeaderName = HeaderName::from_static("ratelimit");

/// The `sub` a bearer token claims, unverified (only to look a window up in memory).
fn unverified_sub(headers: &HeaderMap) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Claims {
        sub: String,
    }
    let token = crate::http::request::bearer_token(headers).ok()?;
    jsonwebtoken::dangerous::insecure_decode_claims::<Claims>(token)
        .ok()
        .map(|claims| claims.sub)
}

/// 0 to [`MAX_RETRY_JITTER_SECONDS`] seconds, at random.
fn jitter() -> u32 {
    let mut byte = [0u8; 1];
    // No randomness is no jitter: the `Retry-After` is still the window's end.
    if getrandom::fill(&mut byte).is_err() {
        return 0;
    }
    u32::from(byte[0]) % (MAX_RETRY_JITTER_SECONDS + 1)
}

/// The layer of a route of `class`: counts the request on its source address, hands the rest
/// to the `Fan` extractor ([`Limiting`] as a request extension), and writes the fields on the
/// answer, whatever it is.
pub async fn limit(class: RouteClass, mut request: Request, next: Next) -> Response {
    let Some(limiter) = request.extensions().get::<Arc<Limiter>>().cloned() else {
        return next.run(request).await;
    };
    if limiter.policy.of(class).is_none() {
        return next.run(request).await;
    }
    let limiting = Limiting {
        limiter,
        class,
        taken: Arc::default(),
    };
    let counted = match limiting.refuse_known_full(request.headers()) {
        Err(refusal) => Err(refusal),
        Ok(()) => match source_address(&request) {
            Some(address) => limiting.count(Scope::Address, &address).await,
            None => Ok(()),
        },
    };
    let mut response = match counted {
        Ok(()) => {
            request.extensions_mut().insert(limiting.clone());
            next.run(request).await
        }
        Err(refusal) => refusal.into_response(),
    };
    limiting.write_fields(response.headers_mut());
    response
}
