//! `GET /api/packs`: the active packs, a page at a time. Public.
//!
//! The function behind this handler is also API Gateway's `$default` route, so a request for no
//! route gets this API's JSON 404 (or 405 on a known path).

use lambda_http::http::StatusCode;
use lambda_http::{Body, Request, Response};
use serde::Serialize;

use crate::handlers::respond;
use crate::packs::Pack;
use crate::packs::listing::{CursorSigner, PageRequest, parse_limit};
use crate::request::{LIST_PACKS, single_query_param};
use crate::response::json_response;
use crate::store::ListActivePacks;
use crate::timestamp::Timestamp;

/// What the list handler needs.
pub struct ListPacksState<S> {
    pub store: S,
    pub cursors: CursorSigner,
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
        LIST_PACKS.check(&request)?;
        let now = Timestamp::now();
        let limit = parse_limit(single_query_param(&request, "limit")?.as_deref())?;
        let after = single_query_param(&request, "cursor")?
            .map(|cursor| state.cursors.decode(&cursor, now))
            .transpose()?;
        let page = state
            .store
            .list_active_packs(&PageRequest { now, limit, after })
            .await?;
        Ok(json_response(
            StatusCode::OK,
            &ListResponse {
                packs: &page.packs,
                next_cursor: page.next.as_ref().map(|key| state.cursors.encode(key)),
            },
        ))
    })
    .await
}
