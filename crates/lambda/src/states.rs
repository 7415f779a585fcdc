//! Each function's state as its `main` builds it: configuration read once per cold start
//! (`api::config` over the environment), the store and the token verifier, warmed. Lambda
//! glue, kept out of the handlers so that they depend on no runtime: the handlers' states are
//! the API's types, their construction from the environment is the glue's ([`FromEnv`]).

use std::future::Future;

use crate::runtime::{require, store_from_env, verifier_from_env, warm};
use api::config::{self, Env};
use api::handlers::auth::AuthState;
use api::handlers::dashboard::{DashboardState, quests_part, queue_part};
use api::handlers::delete_account::DeletionState;
use api::handlers::events::EventsState;
use api::handlers::leaderboards::LeaderboardsState;
use api::handlers::locker_room::LockerRoomsState;
use api::handlers::orders::OrdersState;
use api::handlers::queue::QueueFnState;
use api::handlers::stripe_webhook::WebhookState;
use api::handlers::top_ups::TopUpState;
use api::http::operator::OperatorAuth;
use api::state::{MeState, ProfileState, RevealedSeeds};
use clients::stripe::StripeClient;
use domain::packs::listing::CursorSigner;
use store::DynamoStore;

/// A function state built from the environment. Exits with a clear message when configuration
/// is missing (`crate::runtime::require`).
pub trait FromEnv: Sized {
    fn from_env() -> impl Future<Output = Self>;
}

impl FromEnv for DashboardState<DynamoStore> {
    /// The state from the environment (`TABLE_NAME`, `AUTH_*`), warmed, with the quests and
    /// queue parts.
    async fn from_env() -> Self {
        let (store, dynamodb) = store_from_env();
        let verifier = verifier_from_env(&store);
        warm(&dynamodb, Some(&verifier)).await;
        Self {
            quests: Some(quests_part(store.clone())),
            queue: Some(queue_part(store.clone())),
            store,
            verifier,
        }
    }
}

impl FromEnv for EventsState<DynamoStore> {
    /// The state from the environment (`TABLE_NAME`, `AUTH_*`), warmed; its operators are known
    /// by IAM (API Gateway's authorizer).
    async fn from_env() -> Self {
        let (store, dynamodb) = store_from_env();
        let verifier = verifier_from_env(&store);
        warm(&dynamodb, Some(&verifier)).await;
        Self {
            store,
            verifier,
            operators: OperatorAuth::Iam,
        }
    }
}

/// What a signed-in function that reads a body needs, with its own secret `T` read by `secret`
/// (required): the store, the verifier and the body limit, warmed.
async fn signed_in_with<T>(
    secret: impl FnOnce(&Env) -> Result<T, config::ConfigError>,
) -> (DynamoStore, api::auth::TokenVerifier, usize, T) {
    let (store, dynamodb) = store_from_env();
    let verifier = verifier_from_env(&store);
    let secret = require(secret(&Env));
    let max_body_bytes = require(config::max_body_bytes(&Env));
    warm(&dynamodb, Some(&verifier)).await;
    (store, verifier, max_body_bytes, secret)
}

impl FromEnv for DeletionState<DynamoStore> {
    /// The state from the environment (`TABLE_NAME`, `AUTH_*`, `MAX_BODY_BYTES`,
    /// `ACCOUNT_PSEUDONYM_KEY`), warmed.
    async fn from_env() -> Self {
        let (store, verifier, max_body_bytes, pseudonyms) =
            signed_in_with(|env| config::pseudonym_key(env)).await;
        Self {
            store,
            verifier,
            max_body_bytes,
            pseudonyms,
        }
    }
}

impl FromEnv for AuthState<DynamoStore> {
    /// The state from the environment (`TABLE_NAME`, `AUTH_*`, `MAX_BODY_BYTES`,
    /// `AUTH_PROVIDER_WEBHOOK_SECRETS`), warmed; its operators are known by IAM.
    async fn from_env() -> Self {
        let (store, verifier, max_body_bytes, provider_secrets) =
            signed_in_with(|env| config::provider_webhook_secrets(env)).await;
        Self {
            store,
            verifier,
            max_body_bytes,
            operators: OperatorAuth::Iam,
            provider_secrets,
        }
    }
}

impl FromEnv for LeaderboardsState<DynamoStore> {
    /// The state from the environment (`TABLE_NAME`, `AUTH_*`), warmed.
    async fn from_env() -> Self {
        let (store, dynamodb) = store_from_env();
        let verifier = verifier_from_env(&store);
        warm(&dynamodb, Some(&verifier)).await;
        Self { store, verifier }
    }
}

impl FromEnv for LockerRoomsState<DynamoStore> {
    /// The state from the environment (`TABLE_NAME`), warmed.
    async fn from_env() -> Self {
        let (store, dynamodb) = store_from_env();
        warm(&dynamodb, None).await;
        Self { store }
    }
}

impl FromEnv for MeState<DynamoStore> {
    /// The state of a fan's-view function, from the environment (`TABLE_NAME`, `AUTH_*`,
    /// `CURSOR_SECRET`), warmed: what each of their `main`s runs.
    async fn from_env() -> Self {
        let (store, dynamodb) = store_from_env();
        let verifier = verifier_from_env(&store);
        let cursors = CursorSigner::new(&require(config::cursor_secret(&Env)));
        warm(&dynamodb, Some(&verifier)).await;
        Self {
            store,
            verifier,
            cursors,
            revealed: RevealedSeeds::default(),
        }
    }
}

impl FromEnv for ProfileState<DynamoStore> {
    /// The state from the environment (`TABLE_NAME`, `AUTH_*`, `MAX_BODY_BYTES`), warmed.
    async fn from_env() -> Self {
        let (store, dynamodb) = store_from_env();
        let state = Self {
            verifier: verifier_from_env(&store),
            store,
            max_body_bytes: require(config::max_body_bytes(&Env)),
        };
        warm(&dynamodb, Some(&state.verifier)).await;
        state
    }
}

impl FromEnv for QueueFnState<DynamoStore> {
    /// The state from the environment (`TABLE_NAME`, `AUTH_*`, `QUEUE_RECEIPT_KEY`,
    /// `TURNSTILE_SECRET`, `HUMAN_CHECK_HOSTNAMES`), read once per cold start, warmed.
    async fn from_env() -> Self {
        let (store, dynamodb) = store_from_env();
        let verifier = verifier_from_env(&store);
        let state = Self::new(
            store,
            verifier,
            require(config::queue_receipt_signer(&Env)),
            require(config::human_check(&Env)),
        );
        warm(&dynamodb, Some(&state.verifier)).await;
        state
    }
}

impl FromEnv for WebhookState<DynamoStore> {
    /// The state from the environment (`TABLE_NAME`, `STRIPE_WEBHOOK_SECRET`,
    /// `MAX_BODY_BYTES`), warmed. Exits with a clear message when configuration is missing.
    async fn from_env() -> Self {
        let (store, dynamodb) = store_from_env();
        let state = Self {
            store,
            secret: require(config::stripe_webhook_secret(&Env)),
            max_body_bytes: require(config::max_body_bytes(&Env)),
        };
        warm(&dynamodb, None).await;
        state
    }
}

impl FromEnv for TopUpState<DynamoStore> {
    /// The state from the environment (`TABLE_NAME`, `AUTH_*`, `MAX_BODY_BYTES`, `TOPUP_*`,
    /// `STRIPE_API_BASE`, `STRIPE_SECRET_KEY`), warmed. Exits with a clear message when
    /// configuration is missing.
    async fn from_env() -> Self {
        let (store, dynamodb) = store_from_env();
        let state = Self {
            verifier: verifier_from_env(&store),
            store,
            max_body_bytes: require(config::max_body_bytes(&Env)),
            policy: require(config::top_up_policy(&Env)),
            stripe: StripeClient::new(&require(config::stripe_api(&Env))),
            return_urls: require(config::top_up_return_urls(&Env)),
        };
        warm(&dynamodb, Some(&state.verifier)).await;
        state
    }
}

impl FromEnv for OrdersState<DynamoStore> {
    /// The state from the environment (`TABLE_NAME`, `AUTH_*`, `MAX_BODY_BYTES`,
    /// `CURSOR_SECRET`, `STRIPE_API_BASE`, `STRIPE_SECRET_KEY`, `TOPUP_SUCCESS_URL`,
    /// `TOPUP_CANCEL_URL`), warmed. Exits with a clear message when configuration is missing.
    async fn from_env() -> Self {
        let (store, dynamodb) = store_from_env();
        let state = Self {
            verifier: verifier_from_env(&store),
            store,
            max_body_bytes: require(config::max_body_bytes(&Env)),
            cursors: CursorSigner::new(&require(config::cursor_secret(&Env))),
            stripe: StripeClient::new(&require(config::stripe_api(&Env))),
            return_urls: require(config::top_up_return_urls(&Env)),
        };
        warm(&dynamodb, Some(&state.verifier)).await;
        state
    }
}
