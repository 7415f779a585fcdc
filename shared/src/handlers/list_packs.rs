//! `GET /api/packs`: the active packs, a page at a time. Public.
//!
//! The function behind this handler is also API Gateway's `$default` route, so a request for no
//! route gets this API's JSON 404 (or 405 on a known path).

use lambda_http::http::StatusCode;
use lambda_http::{Body, Request, Response};

use crate::handlers::respond;
use crate::packs::document::PackDocument;
use crate::packs::listing::{CursorSigner, PageRequest, parse_limit};
use crate::request::{LIST_PACKS, single_query_param};
use crate::response::json_text_response;
use crate::store::ListActivePacks;
use crate::timestamp::Timestamp;

/// What the list handler needs.
pub struct ListPacksState<S> {
    pub store: S,
    pub cursors: CursorSigner,
}

/// `{"packs": [...], "nextCursor": ...}`, the packs' stored JSON copied in as it is.
pub fn page_json(packs: &[PackDocument], next_cursor: Option<&str>) -> String {
    let size: usize = packs.iter().map(|p| p.fields().len() + 40).sum();
    let mut out = String::with_capacity(size + 64);
    out.push_str("{\"packs\":[");
    for (index, pack) in packs.iter().enumerate() {
        if index > 0 {
            out.push(',');
        }
        pack.write_json(&mut out);
    }
    out.push_str("],\"nextCursor\":");
    match next_cursor {
        // Cursors are base64url text: nothing in them needs escaping.
        Some(cursor) => {
            out.push('"');
            out.push_str(cursor);
            out.push('"');
        }
        None => out.push_str("null"),
    }
    out.push('}');
    out
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
        let next_cursor = page.next.as_ref().map(|key| state.cursors.encode(key));
        Ok(json_text_response(
            StatusCode::OK,
            page_json(&page.packs, next_cursor.as_deref()),
        ))
    })
    .await
}
