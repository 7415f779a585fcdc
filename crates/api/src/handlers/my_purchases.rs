//! `GET /api/me/purchases` and `GET /api/me/items`: the caller's purchases and the items they
//! pulled, a page at a time. One function (`me-purchases`) serves both: they read the same
//! `USER#` partitions of the fan's indexes and nothing else.

use std::sync::Arc;

use axum::extract::{FromRequestParts, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::Response;
use serde::Serialize;
use utoipa::{IntoParams, ToSchema};

use crate::http::error::ApiError;
use crate::http::extract::{Fan, QueryParams};
use crate::http::paging::{
    MeCursor, PageJson, cursor, invalid_query, limit, list_key_after, next_cursor, pack_id,
};
use crate::http::response::json_response;
use crate::openapi::responses as doc;
use crate::state::MeState;
use crate::views::purchase::{ItemJson, PurchaseJson};
use domain::ids::PackId;
use domain::packs::MAX_RARITY_CHARS;
use domain::purchases::PurchaseStatus;
use domain::purchases::mine::{
    DEFAULT_ITEMS_LIMIT, DEFAULT_PURCHASES_LIMIT, ItemsPosition, MyItemsQuery, MyPurchasesQuery,
    StatusFilter,
};
use domain::timestamp::Timestamp;
use store::packs::GetRevealedSeed;
use store::purchases::{ListMyItems, ListMyPurchases};

/// A page of the caller's purchases.
#[derive(Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = MyPurchasesPage)]
struct Purchases<'a> {
    purchases: Vec<PurchaseJson<'a>>,
}

/// `?status=&packId=&limit=&cursor=`, checked in that order; the cursor as sent (it is bound
/// to the caller and the filters).
#[derive(Debug)]
pub struct PurchasesQuery {
    pub status: Option<StatusFilter>,
    pub pack_id: Option<PackId>,
    pub limit: usize,
    pub cursor: Option<String>,
}

impl<St: Send + Sync> FromRequestParts<St> for PurchasesQuery {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &St) -> Result<Self, ApiError> {
        let query = QueryParams::of(parts);
        let status = query
            .single("status")?
            .map(|text| {
                StatusFilter::parse(&text).ok_or_else(|| {
                    invalid_query(
                        "The 'status' parameter must be one of reserved, completed, opened, expired.",
                    )
                })
            })
            .transpose()?;
        Ok(Self {
            status,
            pack_id: pack_id(&query)?,
            limit: limit(&query, DEFAULT_PURCHASES_LIMIT)?,
            cursor: query.single("cursor")?,
        })
    }
}

/// The query of `GET /api/me/purchases` (read by [`my_purchases`]).
#[derive(IntoParams)]
#[into_params(parameter_in = Query, rename_all = "camelCase")]
pub struct MyPurchasesFilters {
    pub status: Option<PurchaseStatus>,
    /// Only this pack's (an id of the id grammar; any other value is a 400 `invalid_query`).
    #[param(pattern = "^[A-Za-z0-9_-]{1,64}$")]
    pub pack_id: Option<String>,
    /// Purchases per page.
    #[param(minimum = 1, maximum = 100, default = json!(DEFAULT_PURCHASES_LIMIT))]
    pub limit: Option<u32>,
}

/// `{"purchases": [...], "nextCursor": ...}`.
type MyPurchasesPage<'a> = PageJson<Purchases<'a>>;

/// `GET /api/me/purchases?status=&packId=&limit=&cursor=`.
#[utoipa::path(
    get,
    path = "/api/me/purchases",
    operation_id = "listMyPurchases",
    tag = "Me",
    summary = "List the signed-in user's purchases",
    description = "The caller's purchases, newest `reservedAt` first (then id, descending), each \
exactly as `GET` of one purchase answers it (but for the pack's seed: an opened purchase shows \
`fairness.serverSeed` as stored at its opening; `GET` of the purchase shows it once the pack's \
seed is published). `status=completed` is \"paid, not yet opened\"; a `reserved` purchase whose \
`expiresAt` has passed is `expired` whether or not its hold was released.

Pages: pass `nextCursor` back as `cursor`, with the same filters and token (a cursor of another \
user or other filters is a 400 `invalid_cursor`). A page may hold fewer than `limit` purchases \
while more follow (entries the filters skip); `nextCursor` is null only on the last page.",
    security(("sessionToken" = [])),
    params(MyPurchasesFilters, MeCursor),
    responses(
        (status = 200, description = "A page of the caller's purchases.", body = MyPurchasesPage),
        (status = 400, response = doc::BadRequest),
        doc::SignedIn,
    ),
)]
pub async fn my_purchases<S: ListMyPurchases + GetRevealedSeed>(
    State(state): State<Arc<MeState<S>>>,
    Fan(identity): Fan,
    query: PurchasesQuery,
) -> Result<Response, ApiError> {
    let PurchasesQuery {
        status,
        pack_id,
        limit,
        cursor: sent,
    } = query;
    let scope = [
        "purchases",
        identity.user_id.as_str(),
        status.map_or("", StatusFilter::as_str),
        pack_id.as_ref().map_or("", PackId::as_str),
    ];
    let after = list_key_after(&state.cursors, sent.as_deref(), &scope)?;
    let now = Timestamp::now();
    let mut page = state
        .store
        .list_my_purchases(&MyPurchasesQuery {
            user_id: identity.user_id.clone(),
            status,
            pack_id: pack_id.clone(),
            limit,
            after,
            now,
        })
        .await?;
    // Each purchase as GET of it answers: a seed published since its opening shown too.
    state
        .revealed
        .show_in(&state.store, &mut page.entries)
        .await?;
    Ok(json_response(
        StatusCode::OK,
        &PageJson {
            entries: Purchases {
                purchases: page
                    .entries
                    .iter()
                    .map(|purchase| PurchaseJson::at(purchase, now))
                    .collect(),
            },
            next_cursor: next_cursor(&state.cursors, &scope, page.next.as_deref()),
        },
    ))
}

/// A page of the caller's items.
#[derive(Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = MyItemsPage)]
struct Items<'a> {
    items: Vec<ItemJson<'a>>,
}

/// `?packId=&rarity=&limit=&cursor=`, checked in that order; the cursor as sent.
#[derive(Debug)]
pub struct ItemsQuery {
    pub pack_id: Option<PackId>,
    pub rarity: Option<String>,
    pub limit: usize,
    pub cursor: Option<String>,
}

impl<St: Send + Sync> FromRequestParts<St> for ItemsQuery {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &St) -> Result<Self, ApiError> {
        let query = QueryParams::of(parts);
        let pack_id = pack_id(&query)?;
        let rarity = query.single("rarity")?;
        if rarity
            .as_ref()
            .is_some_and(|r| r.is_empty() || r.chars().count() > MAX_RARITY_CHARS)
        {
            return Err(invalid_query(
                "The 'rarity' parameter must be a rarity's name (1-32 characters).",
            ));
        }
        Ok(Self {
            pack_id,
            rarity,
            limit: limit(&query, DEFAULT_ITEMS_LIMIT)?,
            cursor: query.single("cursor")?,
        })
    }
}

/// The query of `GET /api/me/items` (read by [`my_items`]).
#[derive(IntoParams)]
#[into_params(parameter_in = Query, rename_all = "camelCase")]
pub struct MyItemsFilters {
    /// Only this pack's (an id of the id grammar; any other value is a 400 `invalid_query`).
    #[param(pattern = "^[A-Za-z0-9_-]{1,64}$")]
    pub pack_id: Option<String>,
    #[param(min_length = 1, max_length = 32)]
    pub rarity: Option<String>,
    /// Items per page.
    #[param(minimum = 1, maximum = 100, default = json!(DEFAULT_ITEMS_LIMIT))]
    pub limit: Option<u32>,
}

/// `{"items": [...], "nextCursor": ...}`.
type MyItemsPage<'a> = PageJson<Items<'a>>;

/// `GET /api/me/items?packId=&rarity=&limit=&cursor=`.
#[utoipa::path(
    get,
    path = "/api/me/items",
    operation_id = "listMyItems",
    tag = "Me",
    summary = "List the items the signed-in user pulled from opened packs",
    description = "Every item of the caller's opened purchases, newest opening first, then \
purchase id (descending), then slot. A page may end inside a purchase; pages work as for \
`/api/me/purchases`.",
    security(("sessionToken" = [])),
    params(MyItemsFilters, MeCursor),
    responses(
        (status = 200, description = "A page of the caller's items.", body = MyItemsPage),
        (status = 400, response = doc::BadRequest),
        doc::SignedIn,
    ),
)]
pub async fn my_items<S: ListMyItems>(
    State(state): State<Arc<MeState<S>>>,
    Fan(identity): Fan,
    query: ItemsQuery,
) -> Result<Response, ApiError> {
    let ItemsQuery {
        pack_id,
        rarity,
        limit,
        cursor: sent,
    } = query;
    let scope = [
        "items",
        identity.user_id.as_str(),
        pack_id.as_ref().map_or("", PackId::as_str),
        rarity.as_deref().unwrap_or_default(),
    ];
    let after = cursor(
        &state.cursors,
        sent.as_deref(),
        &scope,
        ItemsPosition::parse,
    )?;
    let page = state
        .store
        .list_my_items(&MyItemsQuery {
            user_id: identity.user_id.clone(),
            pack_id: pack_id.clone(),
            rarity: rarity.clone(),
            limit,
            after,
        })
        .await?;
    let items = page.entries.iter().map(ItemJson::of).collect();
    Ok(json_response(
        StatusCode::OK,
        &PageJson {
            entries: Items { items },
            next_cursor: next_cursor(&state.cursors, &scope, page.next.as_deref()),
        },
    ))
}
