//! The rate limits on a route ([`domain::ratelimit`]), as a wrapper of the handler of each route
//! of the declaration (`routes.rs`), with its class ([`Limited`]), and the fan's part in the
//! [`crate::http::extract::Fan`] extractor ([`Limiting::fan`]).
//!
//! A request is counted on its address before any extractor, and on its fan once
//! the token is verified (the `sub` of a token nobody checked could be anyone's, and counting on
//! it would let a script spend another fan's quota). A request the fan's window refuses gives
//! its address's count back: a script behind a carrier NAT spends only its own quota, never
//! its neighbours'. Every answer of a limited route carries `RateLimit-Policy` and `RateLimit`;
//! a refusal is 429 `rate_limited` with `Retry-After`. The counters unreachable: reads and
//! other writes are served (fail open), starts and joins are 503 (fail closed).
//!
//! Only starts and joins are counted in the table, exactly across instances
//! ([`RouteClass::counted_across_instances`]); reads and other writes are counted in the
//! process's memory, with no DynamoDB write (docs/rate-limits.md says by how much that lets a
//! fan past a quota, and why that is enough).
//!
//! The [`Limiter`] comes to each [`Limited`] handler as a request extension, set once around the
//! whole router ([`crate::http::layers::api_layers`]): a router built without one (a handler's
//! unit tests) is not limited.

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use axum::extract::Request;
use axum::handler::Handler;
use axum::http::{HeaderMap, HeaderName, HeaderValue};
use axum::response::{IntoResponse, Response};
use smallvec::SmallVec;

use crate::http::app_config::{ConfigCache, gate};
use crate::http::error::ApiError;
use crate::http::request::source_key;
use crate::http::response::{Caching, Freshness};
use domain::ids::UserId;
use domain::ratelimit::{
    Counter, CounterKey, MAX_RETRY_JITTER_SECONDS, Quota, RatePolicy, RouteClass, Scope, Standing,
    Taken, Window, counter_key, fields, retry_after,
};
use store::StoreError;
use store::metrics::{self, Metric};
use store::ratelimit::TakeFromWindow;

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
    Arc::new(domain::timestamp::unix_now)
}

/// The window a request is counted in: its counter, its quota, and the time it was taken at.
struct Current {
    counter: Counter,
    quota: Quota,
    now: i64,
}

/// The rate limits of one process: the policy, the store's counters (starts and joins), this
/// process's own (reads and other writes), and the fans' windows of the store this process has
/// seen full (refused at once, with no write, until they end: one fan's flood costs the store one
/// failed write per instance and window, never one per request). An address's window is asked
/// of the store every time: docs/rate-limits.md says why.
pub struct Limiter {
    counters: Box<dyn Counters>,
    /// The windows of the classes counted per instance: the in-memory store's counters, the
    /// same condition the table's run, with nothing written anywhere else.
    local: store::MemoryStore,
    policy: RatePolicy,
    policy_fields: PolicyFields,
    clock: Clock,
    full: SeenFull,
}

/// The `RateLimit-Policy` value of each limited class for a request's usual windows (its
/// address's, then its fan's), written once: it is the same on every answer of the class.
struct PolicyFields(Vec<(RouteClass, [HeaderValue; 2])>);

impl PolicyFields {
    fn new(policy: &RatePolicy) -> Self {
        let value = |windows: &[(Scope, Quota)], class| {
            HeaderValue::try_from(fields::policy(class, windows.iter().copied())).ok()
        };
        Self(
            RouteClass::LIMITED
                .into_iter()
                .filter_map(|class| {
                    let quotas = policy.of(class)?;
                    let address = (Scope::Address, quotas.address);
                    let fan = (Scope::Fan, quotas.fan);
                    Some((
                        class,
                        [value(&[address], class)?, value(&[address, fan], class)?],
                    ))
                })
                .collect(),
        )
    }

    /// The value for `standings` when they are the usual windows of `class`.
    fn get(&self, class: RouteClass, standings: &[Standing]) -> Option<HeaderValue> {
        let usual = match standings {
            [address] if address.scope == Scope::Address => 0,
            [address, fan] if address.scope == Scope::Address && fan.scope == Scope::Fan => 1,
            _ => return None,
        };
        let (_, values) = self.0.iter().find(|(limited, _)| *limited == class)?;
        Some(values[usual].clone())
    }
}

/// The fans' windows a process has seen full, until they end.
#[derive(Default)]
struct SeenFull {
    /// Whether any window was ever seen full: almost every request comes while none is, and
    /// reads this flag, not the lock every worker thread would take. Relaxed: a request that
    /// misses a window just seen full asks the store, which refuses it as well.
    any: AtomicBool,
    windows: Mutex<HashSet<Counter>>,
}

impl SeenFull {
    fn any(&self) -> bool {
        self.any.load(Ordering::Relaxed)
    }

    fn contains(&self, counter: &Counter) -> bool {
        self.any()
            && self
                .windows
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .contains(counter)
    }

    fn insert(&self, counter: Counter, now: i64) {
        let mut windows = self.windows.lock().unwrap_or_else(PoisonError::into_inner);
        windows.retain(|seen| seen.window.end > now);
        windows.insert(counter);
        self.any.store(true, Ordering::Relaxed);
    }
}

impl Limiter {
    pub fn new<S: TakeFromWindow + 'static>(store: S, policy: RatePolicy, clock: Clock) -> Self {
        Self {
            counters: Box::new(store),
            local: store::MemoryStore::default(),
            policy_fields: PolicyFields::new(&policy),
            policy,
            clock,
            full: SeenFull::default(),
        }
    }

    pub fn policy(&self) -> &RatePolicy {
        &self.policy
    }

    /// The counters `class`'s windows are kept in: the table's, or this process's.
    fn counters(&self, class: RouteClass) -> &dyn Counters {
        if class.counted_across_instances() {
            &*self.counters
        } else {
            &self.local
        }
    }

    /// The window of `key` (`scope`) for a request of `class` now; `None` for a class that is
    /// not limited.
    fn current(&self, class: RouteClass, scope: Scope, key: CounterKey) -> Option<Current> {
        let quota = self.policy.of(class)?.quota(scope);
        let now = (self.clock)();
        let counter = Counter {
            class,
            scope,
            key,
            window: Window::at(now, quota),
        };
        Some(Current {
            counter,
            quota,
            now,
        })
    }

    /// The standing of `key`'s window of `class` when this process has seen it full, read from
    /// memory only (no store call).
    fn known_full(&self, class: RouteClass, scope: Scope, key: CounterKey) -> Option<Standing> {
        let Current {
            counter,
            quota,
            now,
        } = self.current(class, scope, key)?;
        self.full
            .contains(&counter)
            .then(|| Standing::of(scope, quota, Taken::Full, counter.window, now))
    }

    /// Takes one request of `class` from the window of `key` (`scope`): its standing after it, or
    /// `None` for a class that is not limited.
    async fn take(
        &self,
        class: RouteClass,
        scope: Scope,
        key: CounterKey,
    ) -> Result<Option<(Counter, Standing)>, StoreError> {
        let Some(Current {
            counter,
            quota,
            now,
        }) = self.current(class, scope, key)
        else {
            return Ok(None);
        };
        // Only a fan's window in the table is remembered full: nothing gives a fan's count back,
        // while the refusals of the burst that filled an address's window give its counts back
        // at once (and a window in memory refuses with no write anyway).
        let remembered = scope == Scope::Fan && class.counted_across_instances();
        let known_full = remembered && self.full.contains(&counter);
        let taken = if known_full {
            Taken::Full
        } else {
            self.counters(class).take(&counter, quota.quota).await?
        };
        if taken == Taken::Full && remembered && !known_full {
            self.full.insert(counter.clone(), now);
        }
        let standing = Standing::of(scope, quota, taken, counter.window, now);
        Ok(Some((counter, standing)))
    }
}

/// What a limited request carries from [`Limited`] to the [`crate::http::extract::Fan`]
/// extractor, and back ([`Counting`]). One reference count of the request's own to clone, not
/// the limiter's, which every worker thread shares.
#[derive(Clone)]
pub struct Limiting(Arc<Counting>);

impl Limiting {
    /// Counts the request on the signed-in fan's window (called by the `Fan` extractor once the
    /// token is verified).
    pub async fn fan(&self, user_id: &UserId) -> Result<(), ApiError> {
        let key = counter_key(Scope::Fan, user_id.as_str());
        self.0.count(Scope::Fan, key).await
    }
}

/// A limited request's class, the counters it took, and their standings for the fields.
struct Counting {
    limiter: Arc<Limiter>,
    class: RouteClass,
    taken: Mutex<Counts<(Counter, Standing)>>,
}

/// What a request was counted on: its address's and its fan's windows, at most.
type Counts<T> = SmallVec<[T; 2]>;

impl Counting {
    fn standings(&self) -> Counts<Standing> {
        self.taken
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .map(|(_, standing)| *standing)
            .collect()
    }

    /// Counts the request on `scope`'s window of `key`: `Ok` when served; the 429 when that
    /// window is full (the counts taken before it given back), or the 503 of a class that
    /// fails closed when the counters cannot be reached (one that fails open is served).
    async fn count(&self, scope: Scope, key: CounterKey) -> Result<(), ApiError> {
        let taken = match self.limiter.take(self.class, scope, key).await {
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
        let earlier: Counts<Counter> = {
            let mut taken = self.taken.lock().unwrap_or_else(PoisonError::into_inner);
            let earlier = taken.iter().map(|(counter, _)| counter.clone()).collect();
            taken.push((counter, standing));
            earlier
        };
        if !standing.refused {
            return Ok(());
        }
        for counter in &earlier {
            if let Err(error) = self.limiter.counters(self.class).give_back(counter).await {
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
        // Nothing seen full (almost always): no token to decode, no `sub` to hash.
        if !self.limiter.full.any() {
            return Ok(());
        }
        let Some(sub) = unverified_sub(headers) else {
            return Ok(());
        };
        let key = counter_key(Scope::Fan, &sub);
        let Some(standing) = self.limiter.known_full(self.class, Scope::Fan, key) else {
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

    /// Writes `RateLimit-Policy` and `RateLimit` of every window the request was counted on.
    fn write_fields(&self, headers: &mut HeaderMap) {
        let standings = self.standings();
        if standings.is_empty() {
            return;
        }
        // The text is the fields' ASCII; taken as it is, without a copy.
        let written = |text: String| HeaderValue::try_from(text).ok();
        let policy = self
            .limiter
            .policy_fields
            .get(self.class, &standings)
            .or_else(|| {
                let windows = standings.iter().map(|s| (s.scope, s.quota));
                written(fields::policy(self.class, windows))
            });
        for (name, value) in [
            (RATELIMIT_POLICY, policy),
            (RATELIMIT, written(fields::limit(self.class, &standings))),
        ] {
            if let Some(value) = value {
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

/// A handler in the rate limits of its route's class (each route of the declaration is one:
/// `routes.rs`). A wrapper of the handler, not a `route_layer`: a layer would box the route once
/// more and make axum's `from_fn` clone and box it again, on every request.
#[derive(Clone)]
pub struct Limited<H> {
    class: RouteClass,
    freshness: Option<Freshness>,
    handler: H,
}

impl<H> Limited<H> {
    /// `handler` in the limits of `class`; a public read's answers kept as `freshness` says.
    pub fn new(class: RouteClass, freshness: Option<Freshness>, handler: H) -> Self {
        Self {
            class,
            freshness,
            handler,
        }
    }
}

impl<H, T, S> Handler<T, S> for Limited<H>
where
    H: Handler<T, S>,
    T: 'static,
    S: Send + 'static,
{
    type Future = Pin<Box<dyn Future<Output = Response> + Send>>;

    fn call(self, request: Request, state: S) -> Self::Future {
        let Self {
            class,
            freshness,
            handler,
        } = self;
        Box::pin(async move {
            let caching = Caching::of(request.headers(), freshness);
            let response = limit(class, request, move |request| handler.call(request, state)).await;
            caching.mark(response).await
        })
    }
}

/// Runs a request of `class` through `run` (its handler): first the app configuration's gate
/// (an unsupported app version, maintenance: [`crate::http::app_config`]), which spends none of
/// the fan's limits when it refuses; then counts it on its source address,
/// hands the rest to the `Fan` extractor ([`Limiting`] as a request extension), and writes the
/// fields on the answer, whatever it is.
async fn limit<F: Future<Output = Response>>(
    class: RouteClass,
    mut request: Request,
    run: impl FnOnce(Request) -> F,
) -> Response {
    // Read, not taken: `GET /api/config` answers from the same copy.
    let config = request.extensions().get::<Arc<ConfigCache>>();
    if let Some(refusal) = gate(config, class, request.headers()).await {
        return refusal.into_response();
    }
    // Taken out, not cloned: nothing after this reads it.
    let Some(limiter) = request.extensions_mut().remove::<Arc<Limiter>>() else {
        return run(request).await;
    };
    if limiter.policy.of(class).is_none() {
        return run(request).await;
    }
    let counting = Arc::new(Counting {
        limiter,
        class,
        taken: Mutex::default(),
    });
    let counted = match counting.refuse_known_full(request.headers()) {
        Err(refusal) => Err(refusal),
        Ok(()) => match source_key(&request) {
            Some(address) => counting.count(Scope::Address, address).await,
            None => Ok(()),
        },
    };
    let mut response = match counted {
        Ok(()) => {
            request
                .extensions_mut()
                .insert(Limiting(Arc::clone(&counting)));
            run(request).await
        }
        Err(refusal) => refusal.into_response(),
    };
    counting.write_fields(response.headers_mut());
    response
}
