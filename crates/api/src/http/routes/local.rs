//! Every function in one process over one store (local-api, and the drop benchmark's drop-api
//! through it): [`local_routes`](super::local_routes) walks the functions
//! (`each_function`) and builds each state type once, by its [`LocalState`] constructor
//! (written beside the state, as its `from_env` is for the function's own `main`), shared by
//! every function over that type, as one function's instance shares its state between its
//! requests (one `PurchaseState` for the four purchase functions). A new function's state is
//! built here by its constructor alone.
//!
//! Nothing here runs in a Lambda function: the constructors are generic over the store and only
//! local-api instantiates them.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;

use super::{DEFAULT_FUNCTION, EachFunction, Routes, Serve};
use crate::auth::TokenVerifier;
use crate::config::{AuthConfig, Secret, StripeApi};
use crate::http::human_check::HumanCheck;
use clients::siteverify::Siteverify;
use clients::stripe::ReturnUrls;
use domain::purchases::HoldPolicy;
use domain::topups::TopUpPolicy;
use store::Store;

/// What the states of one process are made from besides the store: the settings a function
/// reads from its environment, and the stand-ins a process without the Internet calls instead of
/// Stripe and Turnstile.
pub struct LocalProcess {
    /// The token settings every signed-in route verifies with, checked by the maker of this
    /// process (see [`TokenVerifier::from_config`]).
    pub auth: AuthConfig,
    pub max_body_bytes: usize,
    /// How long a start holds a unit, and what a fan's unpaid holds may be.
    pub hold: Duration,
    pub hold_policy: HoldPolicy,
    pub top_up_policy: TopUpPolicy,
    /// The human check of a queue's join and of a start that asks for one: Turnstile's
    /// siteverify (or its stand-in), the widget's secret and the hostnames it may be served from.
    pub siteverify: String,
    pub turnstile_secret: Secret,
    pub human_hostnames: Vec<String>,
    /// Stripe (or its stand-in), and where its Checkout pages send the fan back.
    pub stripe: StripeApi,
    pub return_urls: ReturnUrls,
    /// The secret Stripe's events are signed with.
    pub webhook_secret: Secret,
    /// The key the operators' routes accept (local-api has no IAM).
    pub operator_key: Secret,
    /// What the in-process sender divides its retries' waits by.
    pub webhook_retry_scale: crate::handlers::webhooks::send::RetryScale,
    /// The identity provider's webhook secrets (`LOCAL_API_PROVIDER_WEBHOOK_SECRET`).
    pub provider_secrets: Vec<domain::webhooks::SigningSecret>,
    /// What was ended of the fans' sessions: the process's store (every verifier reads it).
    pub sessions: Arc<dyn crate::auth::verifier::RevocationSource>,
    /// The key of deleted fans' pseudonyms (`LOCAL_API_PSEUDONYM_KEY`, else one of its own).
    pub pseudonyms: domain::account::PseudonymKey,
}

impl LocalProcess {
    /// A verifier of [`Self::auth`], for a state of its own (as each function has its own).
    /// Panics if `auth` makes none: the maker of this process checks it before.
    pub fn verifier(&self) -> TokenVerifier {
        let mut verifier = TokenVerifier::from_config(&self.auth).expect("checked auth settings");
        verifier.read_sessions_from(self.sessions.clone());
        verifier
    }

    /// A human check of [`Self::siteverify`], for a state of its own.
    pub fn human_check(&self) -> HumanCheck {
        HumanCheck {
            siteverify: Siteverify::new(&self.siteverify, self.turnstile_secret.clone()),
            hostnames: self.human_hostnames.clone(),
        }
    }
}

/// A handler state as one process of every function builds it over `store`: what the function's
/// `from_env` builds, from [`LocalProcess`] instead of the environment.
pub trait LocalState<S>: Send + Sync + Sized + 'static {
    fn local(store: &S, process: &LocalProcess) -> Self;
}

/// The states built so far, one per type.
#[derive(Default)]
struct LocalStates(axum::http::Extensions);

impl LocalStates {
    /// The process's state of type `St`, made by `make` on first use.
    fn get_or_make<St: Send + Sync + 'static>(&mut self, make: impl FnOnce() -> St) -> Arc<St> {
        if let Some(state) = self.0.get::<Arc<St>>() {
            return state.clone();
        }
        let state = Arc::new(make());
        self.0.insert(state.clone());
        state
    }
}

/// Every function's routes over one store.
pub struct LocalRoutes {
    /// The routes of every function, merged (each handler in its class's rate limits, as
    /// [`super::Routes::into_router`] gives them).
    pub every: Router,
    /// The `$default` route's function ([`super::DEFAULT_FUNCTION`]), which API Gateway hands
    /// every request that matches no route.
    pub default: Router,
}

/// [`LocalRoutes`] in the making: every function's routes merged so far, over `store`.
pub(super) struct Local<'a, S> {
    store: &'a S,
    process: &'a LocalProcess,
    states: LocalStates,
    every: Router,
    default: Option<Router>,
}

impl<'a, S> Local<'a, S> {
    pub(super) fn new(store: &'a S, process: &'a LocalProcess) -> Self {
        Self {
            store,
            process,
            states: LocalStates::default(),
            every: Router::new(),
            default: None,
        }
    }

    pub(super) fn finish(self) -> LocalRoutes {
        LocalRoutes {
            every: self.every,
            default: self.default.expect("the default function is listed"),
        }
    }
}

impl<S: Store + Clone + Send + Sync + 'static> EachFunction for Local<'_, S> {
    type Store = S;
    type Build = Serve;
    fn function<St: LocalState<S>>(&mut self, routes: Routes<Arc<St>>) {
        let state = self
            .states
            .get_or_make(|| St::local(self.store, self.process));
        if routes.function == DEFAULT_FUNCTION {
            self.default = Some(routes.clone().function_app(state.clone()));
        }
        self.every = std::mem::take(&mut self.every).merge(routes.into_router(state));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Functions over one state type share one state (one verifier and its JWKS
    /// cache, one signer of cursors).
    #[test]
    fn a_state_type_is_built_once() {
        struct Counted(u8);
        let mut states = LocalStates::default();
        let first = states.get_or_make(|| Counted(1));
        let again = states.get_or_make(|| Counted(2));
        assert!(Arc::ptr_eq(&first, &again));
        assert_eq!(again.0, 1);
        let other = states.get_or_make(|| 3_u8);
        assert_eq!(*other, 3);
    }
}
