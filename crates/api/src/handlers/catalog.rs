//! The catalogue, public and cacheable like the packs: `GET /api/leagues`,
//! `GET /api/leagues/{leagueId}`, `GET /api/teams` (`?leagueId=`) and `GET /api/teams/{teamId}`.
//! One function (`catalog`) serves the four: they read the `LEAGUE#` and `TEAM#` items and the
//! catalogue's partitions of GSI1, nothing else.

use std::sync::Arc;

use axum::extract::{FromRequestParts, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::Response;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::http::error::{ApiError, ErrorBody, ErrorCode};
use crate::http::extract::{Path, QueryParams};
use crate::http::paging::{ListCursor, ListLimit, ListQuery, PageJson, cursor, next_cursor};
use crate::http::query::id_param;
use crate::http::refusals::{LEAGUE_NOT_FOUND, TEAM_NOT_FOUND, find_league, find_team};
use crate::http::response::json_response;
use crate::http::routes::{LocalProcess, LocalState};
use crate::openapi::schemas::Id;
use crate::openapi::{examples, responses as doc};
use domain::catalog::order::{parse_league_key, parse_team_key};
use domain::catalog::{League, Team};
use domain::ids::{LeagueId, TeamId};
use domain::packs::listing::CursorSigner;
use store::catalog::{CatalogPageRequest, GetLeague, GetTeam, ListLeagues, ListTeams};

/// What the catalogue's handlers need: the store and the cursors' signer (`CURSOR_SECRET`).
pub struct CatalogState<S> {
    pub store: S,
    pub cursors: CursorSigner,
}

impl<S: Send + Sync + Clone + 'static> LocalState<S> for CatalogState<S> {
    fn local(store: &S, _process: &LocalProcess) -> Self {
        Self {
            store: store.clone(),
            cursors: CursorSigner::random(),
        }
    }
}

/// `?leagueId=` of the teams' list, checked before the page's parameters.
#[derive(Debug)]
pub struct LeagueFilter(pub Option<LeagueId>);

impl<St: Send + Sync> FromRequestParts<St> for LeagueFilter {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &St) -> Result<Self, ApiError> {
        id_param(&QueryParams::of(parts), "leagueId", LeagueId::parse).map(Self)
    }
}

/// The `leagueId` filter of `GET /api/teams` (read by [`LeagueFilter`]).
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
pub struct TeamsFilter {
    /// Only the teams of this league (a league's `id`; an unknown one is a 404
    /// `league_not_found`).
    #[param(rename = "leagueId", value_type = Option<Id>, example = "nba")]
    pub league_id: Option<String>,
}

/// A page of leagues.
#[derive(Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = LeaguePage)]
struct Leagues {
    leagues: Vec<League>,
}

/// A page of teams.
#[derive(Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = TeamPage)]
struct Teams {
    teams: Vec<Team>,
}

type LeaguePage = PageJson<Leagues>;
type TeamPage = PageJson<Teams>;

#[derive(Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct LeagueAnswer {
    league: League,
}

#[derive(Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct TeamAnswer {
    team: Team,
}

/// `/api/leagues/{leagueId}`
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(rename_all = "camelCase", parameter_in = Path)]
pub struct LeaguePath {
    /// The league's `id`. A path segment that is not an id once percent-decoded is 404
    /// `not_found`.
    #[param(value_type = String, pattern = "^[A-Za-z0-9_-]{1,64}$", example = "nba")]
    pub league_id: LeagueId,
}

/// `/api/teams/{teamId}`
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(rename_all = "camelCase", parameter_in = Path)]
pub struct TeamPath {
    /// The team's `id`. A path segment that is not an id once percent-decoded is 404
    /// `not_found`.
    #[param(value_type = String, pattern = "^[A-Za-z0-9_-]{1,64}$", example = "nba-lal")]
    pub team_id: TeamId,
}

/// The page request of `query` for the list `scope` (of `league`'s teams, when set): its
/// cursor must be this API's, issued for this list and filter, and hold a list key `valid`
/// accepts.
fn page_request(
    cursors: &CursorSigner,
    query: &ListQuery,
    scope: &[&str],
    league: Option<LeagueId>,
    valid: impl FnOnce(&str) -> bool,
) -> Result<CatalogPageRequest, ApiError> {
    let after = cursor(cursors, query.cursor.as_deref(), scope, |position| {
        valid(position).then(|| position.to_owned())
    })?;
    Ok(CatalogPageRequest {
        limit: query.limit,
        after,
        league,
    })
}

/// Every league of the catalogue, by name.
#[utoipa::path(
    get,
    path = "/api/leagues",
    operation_id = "listLeagues",
    tag = "Catalogue",
    summary = "List the leagues",
    description = "The leagues of the catalogue, by name (case folded), then `id`. Pages: pass \
the previous page's `nextCursor` as `cursor`; `nextCursor` is null on the last page.",
    security(),
    params(ListLimit, ListCursor),
    responses(
        (status = 200, description = "A page of leagues.", body = LeaguePage,
            examples(("page" = (value = json!(examples::league_page()))))),
        (status = 400, response = doc::BadRequest),
        (status = 500, response = doc::InternalError),
        (status = 503, response = doc::Unavailable),
    ),
)]
pub async fn list_leagues<S: ListLeagues>(
    State(state): State<Arc<CatalogState<S>>>,
    query: ListQuery,
) -> Result<Response, ApiError> {
    const SCOPE: [&str; 1] = ["leagues"];
    let request = page_request(&state.cursors, &query, &SCOPE, None, |position| {
        parse_league_key(position).is_some()
    })?;
    let page = state.store.list_leagues(&request).await?;
    Ok(json_response(
        StatusCode::OK,
        &PageJson {
            next_cursor: next_cursor(&state.cursors, &SCOPE, page.next.as_deref()),
            entries: Leagues {
                leagues: page.entries,
            },
        },
    ))
}

/// One league.
#[utoipa::path(
    get,
    path = "/api/leagues/{leagueId}",
    operation_id = "getLeague",
    tag = "Catalogue",
    summary = "Get one league",
    security(),
    params(LeaguePath),
    responses(
        (status = 200, description = "The league.", body = LeagueAnswer,
            examples(("league" = (value = json!({"league": examples::league()}))))),
        (status = 404, description = "No league has this id (`league_not_found`); or the id is \
not an id (`not_found`).", body = ErrorBody,
            examples(
                ("unknown" = (value = json!(doc::error_example(ErrorCode::LeagueNotFound, LEAGUE_NOT_FOUND)))),
                ("notAnId" = (value = json!(doc::not_an_id()))),
            )),
        (status = 405, response = doc::MethodNotAllowed),
        (status = 500, response = doc::InternalError),
        (status = 503, response = doc::Unavailable),
    ),
)]
pub async fn get_league<S: GetLeague>(
    State(state): State<Arc<CatalogState<S>>>,
    Path(LeaguePath { league_id }): Path<LeaguePath>,
) -> Result<Response, ApiError> {
    let league = find_league(&state.store, &league_id).await?;
    Ok(json_response(StatusCode::OK, &LeagueAnswer { league }))
}

/// Every team, or one league's.
#[utoipa::path(
    get,
    path = "/api/teams",
    operation_id = "listTeams",
    tag = "Catalogue",
    summary = "List the teams",
    description = "The teams of the catalogue by league (its `id`), then name (case folded), \
then `id`; with `leagueId`, that league's teams only (a league without teams: an empty page). \
Pages: pass the previous page's `nextCursor` as `cursor`, with the same `leagueId`; \
`nextCursor` is null on the last page.",
    security(),
    params(TeamsFilter, ListLimit, ListCursor),
    responses(
        (status = 200, description = "A page of teams.", body = TeamPage,
            examples(("page" = (value = json!(examples::team_page()))))),
        (status = 400, response = doc::BadRequest),
        (status = 404, description = "`leagueId` names no league (`league_not_found`).",
            body = ErrorBody,
            example = json!(doc::error_example(ErrorCode::LeagueNotFound, LEAGUE_NOT_FOUND))),
        (status = 500, response = doc::InternalError),
        (status = 503, response = doc::Unavailable),
    ),
)]
pub async fn list_teams<S: ListTeams + GetLeague>(
    State(state): State<Arc<CatalogState<S>>>,
    LeagueFilter(league): LeagueFilter,
    query: ListQuery,
) -> Result<Response, ApiError> {
    let scope = ["teams", league.as_ref().map(LeagueId::as_str).unwrap_or("")];
    let request = page_request(&state.cursors, &query, &scope, league.clone(), |position| {
        parse_team_key(position)
            .is_some_and(|(of, _)| league.as_ref().is_none_or(|league| *league == of))
    })?;
    let page = state.store.list_teams(&request).await?;
    // An unknown league has no teams: only an empty page asks whether it exists.
    if page.entries.is_empty()
        && let Some(league) = &league
    {
        find_league(&state.store, league).await?;
    }
    Ok(json_response(
        StatusCode::OK,
        &PageJson {
            next_cursor: next_cursor(&state.cursors, &scope, page.next.as_deref()),
            entries: Teams {
                teams: page.entries,
            },
        },
    ))
}

/// One team.
#[utoipa::path(
    get,
    path = "/api/teams/{teamId}",
    operation_id = "getTeam",
    tag = "Catalogue",
    summary = "Get one team",
    security(),
    params(TeamPath),
    responses(
        (status = 200, description = "The team.", body = TeamAnswer,
            examples(("team" = (value = json!({"team": examples::team()}))))),
        (status = 404, description = "No team has this id (`team_not_found`); or the id is not \
an id (`not_found`).", body = ErrorBody,
            examples(
                ("unknown" = (value = json!(doc::error_example(ErrorCode::TeamNotFound, TEAM_NOT_FOUND)))),
                ("notAnId" = (value = json!(doc::not_an_id()))),
            )),
        (status = 405, response = doc::MethodNotAllowed),
        (status = 500, response = doc::InternalError),
        (status = 503, response = doc::Unavailable),
    ),
)]
pub async fn get_team<S: GetTeam>(
    State(state): State<Arc<CatalogState<S>>>,
    Path(TeamPath { team_id }): Path<TeamPath>,
) -> Result<Response, ApiError> {
    let team = find_team(&state.store, &team_id).await?;
    Ok(json_response(StatusCode::OK, &TeamAnswer { team }))
}
