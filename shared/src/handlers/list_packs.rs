//! `GET /api/packs`: the active packs, a page at a time. Public.
//!
//! The function behind this handler is also API Gateway's `$default` route, so any other path
//! gets the JSON 404 of this API.

use lambda_http::http::{Method, StatusCode};
use lambda_http::{Body, Request, Response};
use serde::Serialize;

use crate::handlers::respond;
use crate::packs::Pack;
use crate::packs::listing::{ListingKey, PageRequest, parse_limit};
use crate::request::{Route, single_query_param};
use crate::response::json_response;
use crate::store::ListActivePacks;
use crate::timestamp::Timestamp;

pub const ROUTE: Route = Route {
    method: Method::GET,
    path: "/api/packs",
    allow: "GET",
};

/// What the list handler needs.
pub struct ListPacksState<S> {
    pub store: S,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ListResponse<'a> {
    packs: &'a [Pack],
    next_cursor: Option<String>,
}

pub async fn list_packs<S: ListActivePacks>(
    state: &ListPacksState<S>,
    request: Request,
) -> Response<Body> {
    respond(&request, async {
        ROUTE.check(&request)?;
        let now = Timestamp::now();
        let limit = parse_limit(single_query_param(&request, "limit")?)?;
        let after = single_query_param(&request, "cursor")?
            .map(|cursor| ListingKey::from_cursor(cursor, now))
            .transpose()?;
        let page = state
            .store
            .list_active_packs(&PageRequest { now, limit, after })
            .await?;
        Ok(json_response(
            StatusCode::OK,
            &ListResponse {
                packs: &page.packs,
                next_cursor: page.next.as_ref().map(ListingKey::to_cursor),
            },
        ))
    })
    .await
}
