//! `GET /api/packs`: the active packs, a page at a time. Public.
//!
//! The function behind this handler is also API Gateway's `$default` route, so a request for no
//! route gets this API's JSON 404 (or 405 on a known path).

use std::sync::Arc;

use axum::extract::{FromRequestParts, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::Response;

use crate::http::error::{ApiError, ErrorCode};
use crate::http::extract::QueryParams;
use crate::http::response::{json_text_response, publicly_cached};
use crate::packs::document::PackDocument;
use crate::packs::listing::{CursorSigner, DEFAULT_LIMIT, MAX_LIMIT, PageRequest};
use crate::store::packs::ListActivePacks;
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

/// `limit`: a whole number from 1 to [`MAX_LIMIT`]; absent means [`DEFAULT_LIMIT`].
pub fn parse_limit(value: Option<&str>) -> Result<usize, ApiError> {
    parse_limit_or(value, DEFAULT_LIMIT)
}

/// `limit`: a whole number from 1 to [`MAX_LIMIT`]; absent means `default`.
pub fn parse_limit_or(value: Option<&str>, default: usize) -> Result<usize, ApiError> {
    let Some(text) = value else {
        return Ok(default);
    };
    let limit = (text.len() <= 3 && text.bytes().all(|b| b.is_ascii_digit()))
        .then(|| text.parse::<usize>().ok())
        .flatten();
    match limit {
        Some(limit) if (1..=MAX_LIMIT).contains(&limit) => Ok(limit),
        _ => Err(ApiError::refused(
            ErrorCode::InvalidLimit,
            format!("The limit must be a whole number from 1 to {MAX_LIMIT}."),
        )),
    }
}

/// `?limit=&cursor=`: the limit checked, the cursor as sent (it is decoded against the time).
#[derive(Debug)]
pub struct PacksQuery {
    pub limit: usize,
    pub cursor: Option<String>,
}

impl<St: Send + Sync> FromRequestParts<St> for PacksQuery {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &St) -> Result<Self, ApiError> {
        let query = QueryParams::of(parts);
        let limit = parse_limit(query.single("limit")?.as_deref())?;
        let cursor = query.single("cursor")?;
        Ok(Self { limit, cursor })
    }
}

#[utoipa::path(get, path = "/api/packs", operation_id = "list_packs", tag = "packs")]
pub async fn list_packs<S: ListActivePacks>(
    State(state): State<Arc<ListPacksState<S>>>,
    query: PacksQuery,
) -> Result<Response, ApiError> {
    let now = Timestamp::now();
    let after = query
        .cursor
        .map(|cursor| state.cursors.decode(&cursor, now))
        .transpose()
        .map_err(|_| {
            ApiError::refused(
                ErrorCode::InvalidCursor,
                "The cursor is not one this API issued; start again without it.",
            )
        })?;
    let page = state
        .store
        .list_active_packs(&PageRequest {
            now,
            limit: query.limit,
            after,
        })
        .await?;
    let next_cursor = page.next.as_ref().map(|key| state.cursors.encode(key));
    Ok(publicly_cached(json_text_response(
        StatusCode::OK,
        page_json(&page.packs, next_cursor.as_deref()),
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limit_is_1_to_100_defaulting_to_50() {
        assert_eq!(parse_limit(None), Ok(50));
        for (text, limit) in [("1", 1), ("100", 100), ("007", 7)] {
            assert_eq!(parse_limit(Some(text)), Ok(limit));
        }
        for bad in [
            "0",
            "101",
            "-1",
            "+5",
            "1.0",
            "",
            " 5",
            "abc",
            "99999999999999999999",
            "1e2",
        ] {
            assert!(parse_limit(Some(bad)).is_err(), "{bad}");
        }
    }
}
