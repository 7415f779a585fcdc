//! Every function's state over one store, as one process serves them: built here once, for
//! `local-api` and the drop benchmark's `drop-api` alike, so a new function's state is added in
//! one place.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use shared::auth::TokenVerifier;
use shared::config::AuthConfig;
use shared::handlers::catalog::CatalogState;
use shared::handlers::get_pack::GetPackState;
use shared::handlers::list_packs::ListPacksState;
use shared::handlers::locker_room::LockerRoomsState;
use shared::handlers::me::MeState;
use shared::handlers::my_wallets::WalletsState;
use shared::handlers::profile::ProfileState;
use shared::handlers::purchase_json::PurchaseState;
use shared::handlers::web3_link::LinkState;
use shared::packs::listing::CursorSigner;
use shared::purchases::HoldPolicy;
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
}

impl<S: Store + Clone + 'static> App<S> {
    /// Every function's state over `store`. Panics if `settings.auth` does not make a verifier:
    /// both callers check it (or build it from constants) before.
    pub fn new(store: &S, settings: AppSettings) -> Self {
        let verifier =
            || TokenVerifier::from_config(&settings.auth).expect("checked auth settings");
        let max_body_bytes = settings.max_body_bytes;
        Self {
            purchases: Arc::new(PurchaseState {
                store: store.clone(),
                verifier: verifier(),
                hold: settings.hold,
                max_body_bytes,
                policy: settings.hold_policy,
            }),
            list: Arc::new(ListPacksState {
                store: store.clone(),
                cursors: CursorSigner::random(),
            }),
            catalog: Arc::new(CatalogState {
                store: store.clone(),
                cursors: CursorSigner::random(),
            }),
            get_pack: Arc::new(GetPackState {
                store: store.clone(),
                recent: Default::default(),
            }),
            link: Arc::new(LinkState {
                store: store.clone(),
                verifier: verifier(),
                max_body_bytes,
            }),
            wallets: Arc::new(WalletsState {
                store: store.clone(),
                verifier: verifier(),
            }),
            me: Arc::new(MeState {
                store: store.clone(),
                verifier: verifier(),
                cursors: CursorSigner::random(),
                revealed: Default::default(),
            }),
            profile: Arc::new(ProfileState {
                store: store.clone(),
                verifier: verifier(),
                max_body_bytes,
            }),
            locker_rooms: Arc::new(LockerRoomsState {
                store: store.clone(),
            }),
            top_ups: LocalTopUps::new(
                store,
                &settings.base,
                verifier(),
                max_body_bytes,
                settings.top_up_policy,
                &settings.webhook_secret,
            ),
            jwks: settings.jwks,
            openapi: settings.openapi,
            limits: settings.limits,
        }
    }
}
