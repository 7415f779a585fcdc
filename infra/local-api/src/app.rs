//! Every function's state over one store, as one process serves them: built here once, for
//! `local-api` and the drop benchmark's `drop-api` alike, so a new function's state is added in
//! one place.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use serde_json::Value;
use shared::auth::TokenVerifier;
use shared::config::AuthConfig;
use shared::handlers::catalog::CatalogState;
use shared::handlers::dashboard::{DashboardState, quests_part, queue_part};
use shared::handlers::get_pack::GetPackState;
use shared::handlers::leaderboards::LeaderboardsState;
use shared::handlers::list_packs::ListPacksState;
use shared::handlers::locker_room::LockerRoomsState;
use shared::handlers::me::MeState;
use shared::handlers::my_wallets::WalletsState;
use shared::handlers::profile::ProfileState;
use shared::handlers::purchase_json::PurchaseState;
use shared::handlers::queue::QueueFnState;
use shared::handlers::web3_link::LinkState;
use shared::http::limit::{Limiter, system_clock};
use shared::http::routes::{
    cash_top_ups_routes, catalog_routes, complete_purchase_routes, dashboard_routes,
    get_pack_routes, get_purchase_routes, leaderboards_routes, list_packs_routes,
    locker_rooms_routes, me_cash_routes, me_profile_routes, me_purchases_routes, me_wallets_routes,
    open_pack_routes, quest_claims_routes, quests_routes, queue_routes, start_purchase_routes,
    stripe_webhook_routes, web3_link_routes,
};
use shared::packs::listing::CursorSigner;
use shared::purchases::HoldPolicy;
use shared::queue::entry::ReceiptSigner;
use shared::ratelimit::RatePolicy;
use shared::store::Store;
use shared::topups::TopUpPolicy;

use crate::checkout::LocalTopUps;
use crate::server::{App, Limits};

/// What the states are made from besides the store.
pub struct AppSettings {
    /// The token settings every signed-in route verifies with (checked before: see
    /// [`TokenVerifier::from_config`]).
    pub auth: AuthConfig,
    pub max_body_bytes: usize,
    /// How long a start holds a unit, and what a fan's unpaid holds may be.
    pub hold: Duration,
    pub hold_policy: HoldPolicy,
    pub top_up_policy: TopUpPolicy,
    /// This server's address (`http://127.0.0.1:<port>`): the local Checkout's pages are on it.
    pub base: String,
    /// Stripe's webhook signing secret, of the local Checkout and the webhook route.
    pub webhook_secret: String,
    /// The identity provider's keys, served at `/.well-known/jwks.json`.
    pub jwks: Value,
    pub openapi: Value,
    pub limits: Limits,
    /// The rate limits (`RATE_LIMIT_*`), counted in the store on each connection's peer address,
    /// as the functions count on API Gateway's `sourceIp`; `None`: not limited (the drop
    /// benchmark, whose thousands of fans share one loopback address).
    pub rate_limits: Option<RatePolicy>,
}

impl App {
    /// Every function's state over `store`, and its routes. Panics if `settings.auth` does not
    /// make a verifier: both callers check it (or build it from constants) before.
    pub fn new<S: Store + Clone + 'static>(store: &S, settings: AppSettings) -> Self {
        let verifier =
            || TokenVerifier::from_config(&settings.auth).expect("checked auth settings");
        let max_body_bytes = settings.max_body_bytes;
        // One state for the purchase functions (one process: one JWKS cache), one for the fan's
        // own views (me-purchases, me-cash) and the quests (quests, quest-claims).
        let purchases = Arc::new(PurchaseState {
            store: store.clone(),
            verifier: verifier(),
            hold: settings.hold,
            max_body_bytes,
            policy: settings.hold_policy,
            human: Some(crate::siteverify::human_check(&settings.base)),
        });
        let me = Arc::new(MeState {
            store: store.clone(),
            verifier: verifier(),
            cursors: CursorSigner::random(),
            revealed: Default::default(),
        });
        let list = Arc::new(ListPacksState {
            store: store.clone(),
            cursors: CursorSigner::random(),
        });
        let top_ups = LocalTopUps::new(
            store,
            &settings.base,
            verifier(),
            max_body_bytes,
            settings.top_up_policy,
            &settings.webhook_secret,
        );
        let functions = Router::new()
            .merge(list_packs_routes().into_router(list.clone()))
            .merge(get_pack_routes().into_router(Arc::new(GetPackState {
                store: store.clone(),
                recent: Default::default(),
            })))
            .merge(web3_link_routes().into_router(Arc::new(LinkState {
                store: store.clone(),
                verifier: verifier(),
                max_body_bytes,
            })))
            .merge(start_purchase_routes().into_router(purchases.clone()))
            .merge(get_purchase_routes().into_router(purchases.clone()))
            .merge(complete_purchase_routes().into_router(purchases.clone()))
            .merge(open_pack_routes().into_router(purchases))
            .merge(me_purchases_routes().into_router(me.clone()))
            .merge(me_cash_routes().into_router(me.clone()))
            .merge(quests_routes().into_router(me.clone()))
            .merge(quest_claims_routes().into_router(me))
            .merge(me_profile_routes().into_router(Arc::new(ProfileState {
                store: store.clone(),
                verifier: verifier(),
                max_body_bytes,
            })))
            .merge(
                locker_rooms_routes().into_router(Arc::new(LockerRoomsState {
                    store: store.clone(),
                })),
            )
            .merge(me_wallets_routes().into_router(Arc::new(WalletsState {
                store: store.clone(),
                verifier: verifier(),
            })))
            .merge(cash_top_ups_routes().into_router(top_ups.top_ups))
            .merge(stripe_webhook_routes().into_router(top_ups.webhook))
            .merge(catalog_routes().into_router(Arc::new(CatalogState {
                store: store.clone(),
                cursors: CursorSigner::random(),
            })))
            .merge(
                leaderboards_routes().into_router(Arc::new(LeaderboardsState {
                    store: store.clone(),
                    verifier: verifier(),
                })),
            )
            .merge(queue_routes().into_router(Arc::new(QueueFnState::new(
                store.clone(),
                verifier(),
                ReceiptSigner::random(),
                crate::siteverify::human_check(&settings.base),
            ))))
            .merge(dashboard_routes().into_router(Arc::new(DashboardState {
                store: store.clone(),
                verifier: verifier(),
                quests: Some(quests_part(store.clone())),
                queue: Some(queue_part(store.clone())),
            })));
        let functions = match settings.rate_limits {
            Some(policy) => Limiter::new(store.clone(), policy, system_clock()).layer(functions),
            None => functions,
        };
        Self {
            functions,
            default: list_packs_routes().function_app(list),
            jwks: settings.jwks,
            openapi: settings.openapi,
            limits: settings.limits,
            checkout: top_ups.checkout,
        }
    }
}
