//! What the fan's own views share (`GET /api/me/...`): their state, and the query parameters
//! of a page: `limit`, a `cursor` bound to the caller and the filters, ids.

use std::borrow::Cow;

use serde::Serialize;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, SchemaType, Type};
use utoipa::{IntoParams, PartialSchema, ToSchema};

use crate::auth::TokenVerifier;
use crate::http::error::{ApiError, ErrorCode};
use crate::http::extract::{QueryParams, handler_state};
use crate::http::query::parse_limit_or;
use crate::http::routes::{LocalProcess, LocalState};
use crate::openapi::schemas::with_properties;
use domain::ids::PackId;
use domain::packs::draw::ServerSeed;
use domain::packs::listing::{CursorSigner, cursor_scope};
use domain::purchases::Purchase;
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

pub fn invalid_query(message: &'static str) -> ApiError {
    ApiError::refused(ErrorCode::InvalidQuery, message)
}

/// `limit`: 1-100, `default` when absent.
pub fn limit(query: &QueryParams, default: usize) -> Result<usize, ApiError> {
    parse_limit_or(query.single("limit")?.as_deref(), default)
}

/// `packId`, an id of the id grammar, when given.
pub fn pack_id(query: &QueryParams) -> Result<Option<PackId>, ApiError> {
    query
        .single("packId")?
        .map(|id| {
            PackId::parse(id).map_err(|_| {
                invalid_query("The 'packId' parameter must be an id (1-64 of A-Za-z0-9_-).")
            })
        })
        .transpose()
}

/// The `cursor` of the fan's lists (read by [`cursor`]), after their filters and `limit`.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
pub struct MeCursor {
    /// The `nextCursor` of the previous page, as given, with the same filters and token (any
    /// other value is a 400 `invalid_cursor`).
    #[param(min_length = 1, max_length = 256)]
    pub cursor: Option<String>,
}

/// The position a `cursor` holds, when one is given: it must be this API's, issued for this
/// list, this caller and these filters (`scope`), and hold a position `valid` accepts.
pub fn cursor<T>(
    cursors: &CursorSigner,
    cursor: Option<&str>,
    scope: &[&str],
    valid: impl FnOnce(&str) -> Option<T>,
) -> Result<Option<T>, ApiError> {
    let Some(cursor) = cursor else {
        return Ok(None);
    };
    cursors
        .decode_scoped(&cursor_scope(scope), cursor)
        .ok()
        .and_then(|position| valid(&position))
        .map(Some)
        .ok_or_else(|| {
            ApiError::refused(
                ErrorCode::InvalidCursor,
                "The cursor is not one this API issued for this list, caller and filters; \
                 start again without it.",
            )
        })
}

/// The `nextCursor` of a page whose next position is `next`, for `scope`.
pub fn next_cursor(cursors: &CursorSigner, scope: &[&str], next: Option<&str>) -> Option<String> {
    next.map(|position| cursors.encode_scoped(&cursor_scope(scope), position))
}

/// `{"<entries>": [...], "nextCursor": ...}`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PageJson<T> {
    #[serde(flatten)]
    pub entries: T,
    pub next_cursor: Option<String>,
}

/// The page's schema is its entries' object (named as it is) with `nextCursor`.
impl<T: ToSchema> PartialSchema for PageJson<T> {
    fn schema() -> RefOr<Schema> {
        with_properties(T::schema(), [("nextCursor", next_cursor_schema())])
    }
}

impl<T: ToSchema> ToSchema for PageJson<T> {
    fn name() -> Cow<'static, str> {
        T::name()
    }

    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        T::schemas(schemas);
    }
}

/// `nextCursor`: what a page passes on to the next.
pub fn next_cursor_schema() -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(SchemaType::from_iter([Type::String, Type::Null]))
        .description(Some(
            "Pass as `cursor` for the next page; null on the last page.",
        ))
        .into()
}
