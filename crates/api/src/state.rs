//! The states several handler modules share, each a function's (an `Arc`, built once per cold
//! start): the fan's views' ([`MeState`]), the purchases' ([`PurchaseState`]) and the
//! profile's ([`ProfileState`], also the fan's own locker room's). A state one handler module
//! alone uses stays in that module.

use std::time::Duration;

use crate::auth::TokenVerifier;
use crate::http::extract::handler_state;
use crate::http::human_check::HumanCheck;
use crate::http::routes::{LocalProcess, LocalState};
use domain::ids::PackId;
use domain::packs::draw::ServerSeed;
use domain::packs::listing::CursorSigner;
use domain::purchases::{HoldPolicy, Purchase};
use store::StoreError;
use store::packs::GetRevealedSeed;

/// What the fan's views need: the store, the token verifier, and the cursors' signer (the
/// secret of list-packs', `CURSOR_SECRET`).
pub struct MeState<S> {
    pub store: S,
    pub verifier: TokenVerifier,
    pub cursors: CursorSigner,
    /// The packs' published seeds this instance has read.
    pub revealed: RevealedSeeds,
}

handler_state!(MeState: verifier);

impl<S: Send + Sync + Clone + 'static> LocalState<S> for MeState<S> {
    fn local(store: &S, process: &LocalProcess) -> Self {
        Self {
            store: store.clone(),
            verifier: process.verifier(),
            cursors: CursorSigner::random(),
            revealed: RevealedSeeds::default(),
        }
    }
}

/// The server seeds this instance has read from packs' public items. A published seed never
/// changes, so it is kept for the life of the instance; a pack without one is asked again.
#[derive(Debug, Default)]
pub struct RevealedSeeds(std::sync::Mutex<std::collections::HashMap<String, ServerSeed>>);

impl RevealedSeeds {
    fn known(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<String, ServerSeed>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Shows each opened purchase of `purchases` that was opened before its pack's seed was
    /// revealed with that seed once published (and the one committed to), as GET of the purchase
    /// does: from what this instance knows, else one read of every such pack at once.
    pub async fn show_in(
        &self,
        store: &impl GetRevealedSeed,
        purchases: &mut [Purchase],
    ) -> Result<(), StoreError> {
        let unseen = |purchase: &Purchase| {
            purchase
                .fairness
                .as_ref()
                .is_some_and(|fairness| fairness.server_seed.is_none())
        };
        let mut asked: Vec<&PackId> = {
            let known = self.known();
            purchases
                .iter()
                .filter(|p| unseen(p) && !known.contains_key(p.pack_id.as_str()))
                .map(|p| &p.pack_id)
                .collect()
        };
        asked.sort_unstable();
        asked.dedup();
        if !asked.is_empty() {
            let seeds = store.revealed_seeds(&asked).await?;
            let mut known = self.known();
            for (pack_id, seed) in asked.iter().zip(seeds) {
                if let Some(seed) = seed {
                    known.insert(pack_id.to_string(), seed);
                }
            }
        }
        let known = self.known();
        for purchase in purchases.iter_mut() {
            if let Some(fairness) = purchase.fairness.as_mut()
                && fairness.server_seed.is_none()
                && let Some(seed) = known.get(purchase.pack_id.as_str())
                && seed.commitment() == fairness.server_seed_hash
            {
                fairness.server_seed = Some(seed.to_hex());
            }
        }
        Ok(())
    }
}

/// What the purchase handlers need (the store's operations differ per function).
pub struct PurchaseState<S> {
    pub store: S,
    pub verifier: TokenVerifier,
    /// How long a start holds a unit.
    pub hold: Duration,
    pub max_body_bytes: usize,
    /// What a fan's unpaid holds may be.
    pub policy: HoldPolicy,
    /// The human check a start on a `humanCheck` pack passes (start-purchase's
    /// `TURNSTILE_SECRET`); `None`: not configured, and such a start is refused 503.
    pub human: Option<HumanCheck>,
}

handler_state!(PurchaseState: verifier, max_body_bytes);

impl<S: Send + Sync + Clone + 'static> LocalState<S> for PurchaseState<S> {
    fn local(store: &S, process: &LocalProcess) -> Self {
        Self {
            store: store.clone(),
            verifier: process.verifier(),
            hold: process.hold,
            max_body_bytes: process.max_body_bytes,
            policy: process.hold_policy,
            human: Some(process.human_check()),
        }
    }
}

/// What the profile's handlers need.
pub struct ProfileState<S> {
    pub store: S,
    pub verifier: TokenVerifier,
    pub max_body_bytes: usize,
}

handler_state!(ProfileState: verifier, max_body_bytes);

impl<S: Send + Sync + Clone + 'static> LocalState<S> for ProfileState<S> {
    fn local(store: &S, process: &LocalProcess) -> Self {
        Self {
            store: store.clone(),
            verifier: process.verifier(),
            max_body_bytes: process.max_body_bytes,
        }
    }
}
