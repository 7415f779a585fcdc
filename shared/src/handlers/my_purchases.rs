//! `GET /api/me/purchases` and `GET /api/me/items`: the caller's purchases and the items they
//! pulled, a page at a time. One function (`me-purchases`) serves both: they read the same
//! `USER#` partitions of the fan's indexes and nothing else.

use std::sync::Arc;

use axum::extract::{FromRequestParts, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::Response;
use serde::Serialize;

use crate::handlers::me::{MeState, PageJson, cursor, invalid_query, limit, next_cursor, pack_id};
use crate::handlers::purchase_json::PurchaseJson;
use crate::http::error::ApiError;
use crate::http::extract::{Fan, QueryParams};
use crate::http::response::json_response;
use crate::ids::PackId;
use crate::packs::MAX_RARITY_CHARS;
use crate::purchases::mine::{
    DEFAULT_ITEMS_LIMIT, DEFAULT_PURCHASES_LIMIT, ItemsPosition, MyItemsQuery, MyPurchasesQuery,
    StatusFilter, is_list_key,
};
use crate::store::packs::GetRevealedSeed;
use crate::store::purchases::{ListMyItems, ListMyPurchases};
use crate::timestamp::Timestamp;

#[derive(Serialize)]
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

/// `GET /api/me/purchases?status=&packId=&limit=&cursor=`.
#[utoipa::path(
    get,
    path = "/api/me/purchases",
    operation_id = "my_purchases",
    tag = "me"
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
    let after = cursor(&state.cursors, sent.as_deref(), &scope, |position| {
        is_list_key(position).then(|| position.to_owned())
    })?;
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

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ItemJson<'a> {
    item_id: &'a str,
    name: &'a str,
    rarity: &'a str,
    image_url: Option<&'a str>,
    pack_id: &'a str,
    purchase_id: &'a str,
    slot: u32,
    opened_at: Timestamp,
}

#[derive(Serialize)]
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

/// `GET /api/me/items?packId=&rarity=&limit=&cursor=`.
#[utoipa::path(get, path = "/api/me/items", operation_id = "my_items", tag = "me")]
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
    let items = page
        .entries
        .iter()
        .map(|mine| ItemJson {
            item_id: &mine.item.item_id,
            name: &mine.item.name,
            rarity: &mine.item.rarity,
            image_url: mine.item.image_url.as_deref(),
            pack_id: &mine.pack_id,
            purchase_id: &mine.purchase_id,
            slot: mine.item.slot,
            opened_at: mine.opened_at,
        })
        .collect();
    Ok(json_response(
        StatusCode::OK,
        &PageJson {
            entries: Items { items },
            next_cursor: next_cursor(&state.cursors, &scope, page.next.as_deref()),
        },
    ))
}
