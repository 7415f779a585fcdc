//! `GET /api/packs`: the active packs, a page at a time. Public.
//!
//! The function behind this handler is also API Gateway's `$default` route, so a request for no
//! route gets this API's JSON 404 (or 405 on a known path).

use std::sync::Arc;

use axum::extract::{FromRequestParts, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::Response;

use utoipa::IntoParams;

use crate::http::error::{ApiError, ErrorBody, ErrorCode};
use crate::http::extract::QueryParams;
use crate::http::paging::next_cursor_schema;
use crate::http::query::{id_param, parse_limit};
use crate::http::refusals::{LEAGUE_NOT_FOUND, TEAM_NOT_FOUND, find_league, find_team};
use crate::http::response::json_text_response;
use crate::http::routes::{LocalProcess, LocalState};
use crate::openapi::schemas::Id;
use crate::openapi::{examples, responses as doc};
use crate::views::pack::PackJson;
use domain::ids::{LeagueId, TeamId};
use domain::packs::document::PackDocument;
use domain::packs::listing::{CursorSigner, DEFAULT_LIMIT, PackFilter, PageRequest};
use domain::timestamp::Timestamp;
use store::catalog::{GetLeague, GetTeam};
use store::packs::ListActivePacks;

/// What the list handler needs.
pub struct ListPacksState<S> {
    pub store: S,
    pub cursors: CursorSigner,
}

impl<S: Send + Sync + Clone + 'static> LocalState<S> for ListPacksState<S> {
    fn local(store: &S, _process: &LocalProcess) -> Self {
        Self {
            store: store.clone(),
            cursors: CursorSigner::random(),
        }
    }
}

// The schema of `page_json`'s text.
/// A page of active packs.
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PackList {
    pub packs: Vec<PackJson>,
    #[schema(schema_with = next_cursor_schema, required)]
    pub next_cursor: Option<String>,
}

/// `{"packs": [...], "nextCursor": ...}`, the packs' stored JSON copied in as it is, with their
/// countdowns from `now`. Into a `String` of exactly its length: the body takes it as it is, and
/// any other with a second allocation.
pub fn page_json(packs: &[PackDocument], next_cursor: Option<&str>, now: Timestamp) -> String {
    let packs_len: usize = packs.iter().map(|pack| pack.json_len(now) + 1).sum();
    let cursor_len = next_cursor.map_or("null".len(), |cursor| cursor.len() + 2);
    let mut out = String::with_capacity(
        "{\"packs\":[],\"nextCursor\":}".len() + packs_len.saturating_sub(1) + cursor_len,
    );
    out.push_str("{\"packs\":[");
    for (index, pack) in packs.iter().enumerate() {
        if index > 0 {
            out.push(',');
        }
        pack.write_json(now, &mut out);
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

/// The query of `GET /api/packs` (read by [`list_packs`]).
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListPacksQuery {
    /// Only the packs of this league (a league's `id`; an unknown one is a 404
    /// `league_not_found`).
    #[param(rename = "leagueId", value_type = Option<Id>, example = "nba")]
    pub league_id: Option<String>,
    /// Only the packs of this team (a team's `id`; an unknown one is a 404 `team_not_found`).
    /// With `leagueId`, the packs naming both.
    #[param(rename = "teamId", value_type = Option<Id>, example = "nba-lal")]
    pub team_id: Option<String>,
    /// Packs per page.
    #[param(minimum = 1, maximum = 100, default = json!(DEFAULT_LIMIT))]
    pub limit: Option<u32>,
    /// The `nextCursor` of the previous page, as given, with the same filters (opaque and
    /// signed; any other value is a 400).
    #[param(min_length = 1, max_length = 256)]
    pub cursor: Option<String>,
}

/// `?leagueId=&teamId=&limit=&cursor=`, checked in that order: the filters and the limit
/// checked, the cursor as sent (it is decoded against the time and the filters).
#[derive(Debug)]
pub struct PacksQuery {
    pub filter: PackFilter,
    pub limit: usize,
    pub cursor: Option<String>,
}

impl<St: Send + Sync> FromRequestParts<St> for PacksQuery {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &St) -> Result<Self, ApiError> {
        let query = QueryParams::of(parts);
        let filter = PackFilter {
            league: id_param(&query, "leagueId", LeagueId::parse)?,
            team: id_param(&query, "teamId", TeamId::parse)?,
        };
        let limit = parse_limit(query.single("limit")?.as_deref())?;
        let cursor = query.single("cursor")?;
        Ok(Self {
            filter,
            limit,
            cursor,
        })
    }
}

#[utoipa::path(
    get,
    path = "/api/packs",
    operation_id = "listPacks",
    tag = "Packs",
    summary = "List the active packs",
    description = "A pack is active when its `status` is `active`, its sale has started \
(`saleStartsAt <= now`) and has not ended (`saleEndsAt` is null or later than now). Sold-out \
active packs are listed with `remaining: 0`. Order: `saleStartsAt` newest first, then `id` \
ascending.

`leagueId` and `teamId` list only the active packs naming that league or team (both: naming \
both), in the same order; an id the catalogue does not hold is a 404 (`league_not_found`, \
`team_not_found`), a league or team without active packs an empty page.

Pages: pass the previous page's `nextCursor` as `cursor`, with the same filters. A page may hold \
fewer than `limit` packs while more follow; `nextCursor` is null only on the last page.",
    security(),
    params(ListPacksQuery),
    responses(
        (status = 200, description = "A page of active packs.", body = PackList,
            examples(("page" = (value = json!(examples::pack_page()))))),
        (status = 400, response = doc::BadRequest),
        (status = 404, description = "`leagueId` or `teamId` names nothing in the catalogue \
(`league_not_found`, `team_not_found`).", body = ErrorBody,
            examples(
                ("unknownLeague" = (value = json!(doc::error_example(ErrorCode::LeagueNotFound, LEAGUE_NOT_FOUND)))),
                ("unknownTeam" = (value = json!(doc::error_example(ErrorCode::TeamNotFound, TEAM_NOT_FOUND)))),
            )),
        (status = 500, response = doc::InternalError),
        (status = 503, response = doc::Unavailable),
    ),
)]
pub async fn list_packs<S: ListActivePacks + GetLeague + GetTeam>(
    State(state): State<Arc<ListPacksState<S>>>,
    query: PacksQuery,
) -> Result<Response, ApiError> {
    let now = Timestamp::now();
    let after = query
        .cursor
        .map(|cursor| state.cursors.decode_listing(&query.filter, &cursor, now))
        .transpose()
        .map_err(|_| {
            ApiError::refused(
                ErrorCode::InvalidCursor,
                "The cursor is not one this API issued for this list; start again without it.",
            )
        })?;
    let page = state
        .store
        .list_active_packs(&PageRequest {
            now,
            limit: query.limit,
            after,
            filter: query.filter.clone(),
        })
        .await?;
    // An unknown league or team has no packs: only an empty page asks whether it exists.
    if page.packs.is_empty() {
        if let Some(league) = &query.filter.league {
            find_league(&state.store, league).await?;
        }
        if let Some(team) = &query.filter.team {
            find_team(&state.store, team).await?;
        }
    }
    let next_cursor = page
        .next
        .as_ref()
        .map(|key| state.cursors.encode_listing(&query.filter, key));
    Ok(json_text_response(
        StatusCode::OK,
        page_json(&page.packs, next_cursor.as_deref(), now),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_is_written_into_exactly_its_length() {
        let documents: Vec<PackDocument> = [0, 9, 10, 12_345, u64::MAX]
            .into_iter()
            .map(|remaining| PackDocument::from_stored("{\"id\":\"p\"}", remaining).unwrap())
            .collect();
        for count in 0..=documents.len() {
            for cursor in [None, Some("eyJpZCI6InAifQ")] {
                let page = page_json(&documents[..count], cursor, Timestamp::now());
                assert_eq!(page.capacity(), page.len(), "{page}");
                let parsed: serde_json::Value = serde_json::from_str(&page).unwrap();
                assert_eq!(parsed["packs"].as_array().unwrap().len(), count);
                assert_eq!(parsed["nextCursor"].as_str(), cursor);
            }
        }
    }
}
