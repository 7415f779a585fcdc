//! `GET /api/me/purchases` and `GET /api/me/items`: the caller's purchases and the items they
//! pulled, a page at a time. One function (`me-purchases`) serves both: they read the same
//! `USER#` partitions of the fan's indexes and nothing else.

use lambda_http::http::StatusCode;
use lambda_http::{Body, Request, Response};
use serde::Serialize;

use crate::handlers::me::{MeState, PageJson, cursor, invalid_query, limit, next_cursor, pack_id};
use crate::handlers::purchase_json::PurchaseJson;
use crate::http::request::{bearer_token, single_query_param};
use crate::http::respond;
use crate::http::response::json_response;
use crate::http::routes::{MY_ITEMS, MY_PURCHASES};
use crate::packs::MAX_RARITY_CHARS;
use crate::purchases::mine::{
    DEFAULT_ITEMS_LIMIT, DEFAULT_PURCHASES_LIMIT, ItemsPosition, MyItemsQuery, MyPurchasesQuery,
    StatusFilter, is_list_key,
};
use crate::store::packs::GetRevealedSeed;
use crate::store::purchases::{ListMyItems, ListMyPurchases};
use crate::timestamp::Timestamp;

/// The `me-purchases` function: each of its routes to its handler (the handlers check the
/// route themselves, so anything else is their 404/405).
pub async fn me_purchases<S: ListMyPurchases + ListMyItems + GetRevealedSeed>(
    state: &MeState<S>,
    request: Request,
) -> Response<Body> {
    if MY_ITEMS.is_for(&request) {
        my_items(state, request).await
    } else {
        my_purchases(state, request).await
    }
}

#[derive(Serialize)]
struct Purchases<'a> {
    purchases: Vec<PurchaseJson<'a>>,
}

/// `GET /api/me/purchases?status=&packId=&limit=&cursor=`.
pub async fn my_purchases<S: ListMyPurchases + GetRevealedSeed>(
    state: &MeState<S>,
    request: Request,
) -> Response<Body> {
    respond(&request, async {
        MY_PURCHASES.params(&request)?;
        let identity = state.verifier.verify(bearer_token(&request)?).await?;
        let status = single_query_param(&request, "status")?
            .map(|text| {
                StatusFilter::parse(&text).ok_or_else(|| {
                    invalid_query(
                        "The 'status' parameter must be one of reserved, completed, opened, expired.",
                    )
                })
            })
            .transpose()?;
        let pack_id = pack_id(&request)?;
        let limit = limit(&request, DEFAULT_PURCHASES_LIMIT)?;
        let scope = [
            "purchases",
            identity.user_id.as_str(),
            status.map_or("", StatusFilter::as_str),
            pack_id.as_deref().unwrap_or_default(),
        ];
        let after = cursor(&state.cursors, &request, &scope, |position| {
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
        state.revealed.show_in(&state.store, &mut page.entries).await?;
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
    })
    .await
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

/// `GET /api/me/items?packId=&rarity=&limit=&cursor=`.
pub async fn my_items<S: ListMyItems>(state: &MeState<S>, request: Request) -> Response<Body> {
    respond(&request, async {
        MY_ITEMS.params(&request)?;
        let identity = state.verifier.verify(bearer_token(&request)?).await?;
        let pack_id = pack_id(&request)?;
        let rarity = single_query_param(&request, "rarity")?;
        if rarity
            .as_ref()
            .is_some_and(|r| r.is_empty() || r.chars().count() > MAX_RARITY_CHARS)
        {
            return Err(invalid_query(
                "The 'rarity' parameter must be a rarity's name (1-32 characters).",
            ));
        }
        let limit = limit(&request, DEFAULT_ITEMS_LIMIT)?;
        let scope = [
            "items",
            identity.user_id.as_str(),
            pack_id.as_deref().unwrap_or_default(),
            rarity.as_deref().unwrap_or_default(),
        ];
        let after = cursor(&state.cursors, &request, &scope, ItemsPosition::parse)?;
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
    })
    .await
}
