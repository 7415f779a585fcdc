//! The collector-score leaderboards (the `leaderboards` function): `GET
//! /api/leaderboards/{board}` (public, cacheable) and `GET /api/leaderboards/{board}/me`.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde::{Deserialize, Deserializer, Serialize};
use utoipa::ToSchema;

use crate::auth::TokenVerifier;
use crate::http::error::{ApiError, ErrorBody, ErrorCode};
use crate::http::extract::{Fan, Path, QueryParams, handler_state};
use crate::http::query::parse_limit_or;
use crate::http::refusals::{find_league, find_team};
use crate::http::response::json_response;
use crate::http::routes::{LocalProcess, LocalState};
use crate::openapi::responses as doc;
use crate::views::leaderboards::StandingJson;
use domain::leaderboards::{Board, BoardEntry, MAX_BOARD_ENTRIES};
use domain::timestamp::Timestamp;
use store::catalog::{GetLeague, GetTeam};
use store::leaderboards::{GetStanding, ReadBoard};

/// The boards' store and the token verifier (for `/me`).
pub struct LeaderboardsState<S> {
    pub store: S,
    pub verifier: TokenVerifier,
}

handler_state!(LeaderboardsState: verifier);

impl<S: Send + Sync + Clone + 'static> LocalState<S> for LeaderboardsState<S> {
    fn local(store: &S, process: &LocalProcess) -> Self {
        Self {
            store: store.clone(),
            verifier: process.verifier(),
        }
    }
}

/// The `{board}` path segment: `global`, `league:<leagueId>` or `team:<teamId>`.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
pub struct BoardPath {
    /// `global`, `league:<leagueId>` or `team:<teamId>` (the `:` is part of the segment). Any
    /// other segment names no resource: 404 `not_found`.
    #[param(value_type = String, pattern = "^(global|league:[A-Za-z0-9_-]{1,64}|team:[A-Za-z0-9_-]{1,64})$", example = "league:nba")]
    #[serde(deserialize_with = "board")]
    pub board: Board,
}

fn board<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Board, D::Error> {
    let text = String::deserialize(deserializer)?;
    Board::parse(&text).map_err(serde::de::Error::custom)
}

/// 404 `league_not_found` / `team_not_found` for a board of a league or team the catalogue does
/// not have; asked only when the board has nothing to show (an unknown one never has).
async fn known<S: GetLeague + GetTeam>(store: &S, board: &Board) -> Result<(), ApiError> {
    match board {
        Board::Global => Ok(()),
        Board::League(id) => find_league(store, id).await.map(drop),
        Board::Team(id) => find_team(store, id).await.map(drop),
    }
}

/// One line of a board.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = BoardEntry)]
struct EntryJson<'a> {
    /// Among every fan with a score on the board (fans without a display name are not listed
    /// but hold their place, so ranks may skip).
    #[schema(minimum = 1)]
    rank: u64,
    #[schema(value_type = String, pattern = "^[A-Za-z0-9_.-]{3,24}$")]
    display_name: &'a str,
    #[schema(format = "uri", pattern = "^https://", max_length = 2048, required)]
    avatar_url: Option<&'a str>,
    score: u64,
}

/// `GET /api/leaderboards/{board}`.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = Leaderboard)]
struct BoardJson<'a> {
    #[schema(example = "global")]
    board: String,
    /// When the board was read (it reflects openings up to about a second before).
    #[schema(value_type = String, format = DateTime)]
    updated_at: Timestamp,
    #[schema(max_items = 100)]
    entries: Vec<EntryJson<'a>>,
}

fn example_board() -> serde_json::Value {
    serde_json::json!({
        "board": "league:nba", "updatedAt": "2026-11-25T21:04:00Z",
        "entries": [
            {"rank": 1, "displayName": "Zoe.Hoops", "avatarUrl": "https://cdn.example.com/avatars/zoe.png", "score": 1260},
            {"rank": 3, "displayName": "dunk_master", "avatarUrl": null, "score": 511}
        ]
    })
}

fn board_not_found_example() -> serde_json::Value {
    doc::error_example(
        ErrorCode::LeagueNotFound,
        crate::http::refusals::LEAGUE_NOT_FOUND,
    )
}

/// `?limit=`: 1-100, 100 by default.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct BoardLimit {
    /// Lines of the board.
    #[param(minimum = 1, maximum = 100, default = 100)]
    pub limit: Option<u32>,
}

/// `GET /api/leaderboards/{board}`: a board's top, public.
#[utoipa::path(
    get,
    path = "/api/leaderboards/{board}",
    operation_id = "getLeaderboard",
    tag = "Leaderboards",
    summary = "A leaderboard's top",
    description = "The fans with the highest collector score on the board (each item they own \
counts its rarity's weight: by default common 1, rare 10, epic 50, legendary 250): `global`, a \
league's (`league:<leagueId>`) or a team's (`team:<teamId>`, items from packs of that league or \
team). Ties are broken by who reached the score first. Fans without a display name are not \
listed (their place still counts in `rank`). At most `limit` (100) lines. An opening shows here \
within seconds. Public and cacheable for a few seconds. A league or team the catalogue does not \
have is 404 `league_not_found` / `team_not_found`.",
    params(BoardPath, BoardLimit),
    responses(
        (status = 200, description = "The board's top.", body = BoardJson,
            example = json!(example_board())),
        (status = 400, response = doc::BadRequest),
        (status = 404, description = "No such league or team (`league_not_found`, \
`team_not_found`), or the segment is no board (`not_found`).", body = ErrorBody,
            example = json!(board_not_found_example())),
        (status = 405, response = doc::MethodNotAllowed),
        (status = 500, response = doc::InternalError),
        (status = 503, response = doc::Unavailable),
    ),
    security(),
)]
pub async fn get_leaderboard<S: ReadBoard + GetLeague + GetTeam>(
    State(state): State<Arc<LeaderboardsState<S>>>,
    Path(BoardPath { board }): Path<BoardPath>,
    query: BoardQuery,
) -> Result<Response, ApiError> {
    let entries = state.store.read_board(&board, query.limit).await?;
    if entries.is_empty() {
        known(&state.store, &board).await?;
    }
    Ok(json_response(
        StatusCode::OK,
        &BoardJson {
            board: board.to_string(),
            updated_at: Timestamp::now(),
            entries: entries.iter().map(entry_json).collect(),
        },
    ))
}

fn entry_json(entry: &BoardEntry) -> EntryJson<'_> {
    EntryJson {
        rank: entry.rank,
        display_name: entry.display_name.as_str(),
        avatar_url: entry.avatar_url.as_ref().map(|url| url.as_str()),
        score: entry.score,
    }
}

/// `?limit=` of a board, checked.
pub struct BoardQuery {
    limit: usize,
}

impl<St: Send + Sync> axum::extract::FromRequestParts<St> for BoardQuery {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _: &St,
    ) -> Result<Self, ApiError> {
        let limit = QueryParams::of(parts).single("limit")?;
        Ok(Self {
            limit: parse_limit_or(limit.as_deref(), MAX_BOARD_ENTRIES)?,
        })
    }
}

/// `GET /api/leaderboards/{board}/me`: the caller's score and rank.
#[utoipa::path(
    get,
    path = "/api/leaderboards/{board}/me",
    operation_id = "getMyStanding",
    tag = "Leaderboards",
    summary = "The signed-in fan's place on a leaderboard",
    description = "The caller's collector score on the board and their rank: exact within the \
top 10,000 (fans with a higher score, or the same reached earlier, plus one; fans without a \
display name count), beyond that `percentile`, estimated. A fan with nothing on the board has \
score 0 and neither. An unknown league or team is 404 as for the board.",
    security(("sessionToken" = [])),
    params(BoardPath),
    responses(
        (status = 200, description = "The caller's standing.", body = StandingJson,
            example = json!({"board": "global", "score": 1260, "rank": 42, "percentile": null})),
        (status = 404, description = "No such league or team (`league_not_found`, \
`team_not_found`), or the segment is no board (`not_found`).", body = ErrorBody,
            example = json!(board_not_found_example())),
        doc::SignedIn,
    ),
)]
pub async fn get_my_standing<S: GetStanding + GetLeague + GetTeam>(
    State(state): State<Arc<LeaderboardsState<S>>>,
    Fan(identity): Fan,
    Path(BoardPath { board }): Path<BoardPath>,
) -> Result<Response, ApiError> {
    let standing = state.store.get_standing(&board, &identity.user_id).await?;
    if standing.is_none() {
        known(&state.store, &board).await?;
    }
    Ok(json_response(
        StatusCode::OK,
        &StandingJson::of(&board, standing.as_ref()),
    ))
}
