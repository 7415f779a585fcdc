//! The locker room: `PUT /api/me/locker-room` (the fan's own, in `me-profile`) and
//! `GET /api/locker-rooms/{displayName}` (public, the `locker-rooms` function).

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::http::error::{ApiError, ErrorBody, ErrorCode};
use crate::http::extract::{Fan, FromJsonBody, Json, Path};
use crate::http::request::json_object;
use crate::http::response::json_response;
use crate::http::routes::{LocalProcess, LocalState};
use crate::openapi::responses as doc;
use crate::state::ProfileState;
use crate::views::locker_room::LockerRoomJson;
use domain::locker_room::LockerRoomBody;
use domain::profile::name::DisplayName;
use domain::timestamp::Timestamp;
use store::locker_room::{GetLockerRoom, PublicLockerRoom, PutLockerRoom, PutLockerRoomError};

/// What the public locker rooms need: the store alone (no token).
pub struct LockerRoomsState<S> {
    pub store: S,
}

impl<S: Send + Sync + Clone + 'static> LocalState<S> for LockerRoomsState<S> {
    fn local(store: &S, _process: &LocalProcess) -> Self {
        Self {
            store: store.clone(),
        }
    }
}

/// `{"lockerRoom": ...}`.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct LockerRoomAnswer<'a> {
    locker_room: LockerRoomJson<'a>,
}

fn answer(room: &PublicLockerRoom) -> Response {
    json_response(
        StatusCode::OK,
        &LockerRoomAnswer {
            locker_room: LockerRoomJson::of(room),
        },
    )
}

fn example_room() -> serde_json::Value {
    serde_json::json!({"lockerRoom": {
        "displayName": "Zoe.Hoops",
        "avatarUrl": "https://cdn.example.com/avatars/zoe.png",
        "favoriteTeamId": "nba-lal",
        "title": "Rookie gold",
        "items": [{
            "itemId": "lebron-rookie-gold", "name": "LeBron James Rookie Gold", "rarity": "legendary",
            "imageUrl": "https://cdn.example.com/items/lebron-gold.png", "packId": "nba-rookie-2026",
            "purchaseId": "aziCO-GO8fL4JY8pIvr5KQ", "slot": 2, "openedAt": "2026-11-25T21:04:00Z"
        }],
        "stats": {"packsOpened": 3, "itemsOwned": 15, "byRarity": {"common": 11, "rare": 3, "legendary": 1}}
    }})
}

/// The body of `PUT /api/me/locker-room`, its shape and limits checked.
pub struct LockerRoomRequest(LockerRoomBody);

impl FromJsonBody for LockerRoomRequest {
    fn from_json(body: &[u8]) -> Result<Self, ApiError> {
        let body: LockerRoomBody = json_object(
            body,
            "The body must be a JSON object with 'items' (a list of {\"purchaseId\", \"slot\"}) \
             and an optional 'title', and nothing else.",
        )?;
        body.check().map(Self).map_err(|error| {
            ApiError::refused(
                ErrorCode::InvalidBody,
                format!("{}: {error}", error.field()),
            )
        })
    }
}

/// `PUT /api/me/locker-room`: replaces the caller's locker room.
#[utoipa::path(
    put,
    path = "/api/me/locker-room",
    operation_id = "putMyLockerRoom",
    tag = "Locker rooms",
    summary = "Set the signed-in user's locker room",
    description = "Replaces the caller's locker room: an optional `title` and up to 12 of their \
pulls, each named by the opened purchase it came from and its slot, shown in the order given. An \
item that is not one the caller pulled (another fan's purchase, one not opened, a slot it does \
not have) is 422 `item_not_owned` and changes nothing. Answers the locker room as the public sees \
it (`GET /api/locker-rooms/{displayName}`), with the caller's stats.",
    security(("sessionToken" = [])),
    request_body(
        content = LockerRoomBody,
        description = "At most 64 KiB (`MAX_BODY_BYTES`).",
        example = json!({"title": "Rookie gold", "items": [{"purchaseId": "aziCO-GO8fL4JY8pIvr5KQ", "slot": 2}]}),
    ),
    responses(
        (status = 200, description = "The locker room as the public sees it.",
            body = LockerRoomAnswer, example = json!(example_room())),
        (status = 400, description = "Malformed JSON (`invalid_json`); a body that is not that \
object (`invalid_body`); a title over 60 characters, blank or with a control, bidi, zero-width or \
other invisible character, more than 12 items or one repeated (`invalid_body`, naming the member).",
            body = ErrorBody,
            example = json!(doc::error_example(
                ErrorCode::InvalidBody,
                "items[2]: items[2] repeats an earlier item",
            ))),
        (status = 404, description = "No route (`not_found`).", body = ErrorBody),
        (status = 413, response = doc::PayloadTooLarge),
        (status = 415, response = doc::UnsupportedMediaType),
        (status = 422, description = "An item is not one you pulled (`item_not_owned`).",
            body = ErrorBody,
            example = json!(doc::error_example(
                ErrorCode::ItemNotOwned,
                "items[1] is not an item you pulled",
            ))),
        doc::SignedIn,
    ),
)]
pub async fn put_locker_room<S: PutLockerRoom>(
    State(state): State<Arc<ProfileState<S>>>,
    Fan(identity): Fan,
    Json(LockerRoomRequest(body)): Json<LockerRoomRequest>,
) -> Result<Response, ApiError> {
    let room = state
        .store
        .put_locker_room(&identity.user_id, &body, Timestamp::now())
        .await
        .map_err(|error| match error {
            PutLockerRoomError::NotOwned(not_owned) => {
                ApiError::refused(ErrorCode::ItemNotOwned, not_owned.to_string())
            }
            PutLockerRoomError::Store(error) => error.into(),
        })?;
    Ok(answer(&room))
}

/// `/api/locker-rooms/{displayName}`
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(rename_all = "camelCase", parameter_in = Path)]
pub struct LockerRoomPath {
    /// A fan's display name, in any case. A path segment outside the names' grammar (3-24
    /// characters of `A-Z`, `a-z`, `0-9`, `_`, `.` and `-`) names no resource: 404 `not_found`.
    #[param(value_type = String, pattern = "^[A-Za-z0-9_.-]{3,24}$", example = "Zoe.Hoops")]
    pub display_name: DisplayName,
}

/// `GET /api/locker-rooms/{displayName}`: a fan's public showcase.
#[utoipa::path(
    get,
    path = "/api/locker-rooms/{displayName}",
    operation_id = "getLockerRoom",
    tag = "Locker rooms",
    summary = "A fan's locker room, by display name",
    description = "The locker room of the fan who holds this display name or one that looks like \
it (`H0llow` finds `Hollow`: names are unique by how they look, see `PATCH /api/me`): their name \
as they spelt it, avatar and favourite team, the title and items they chose, and their stats \
(packs opened, items owned, items by rarity, exact as of their last opening). Public and \
cacheable for a few seconds. A name nobody holds, including one its fan renamed away from, is 404 \
`locker_room_not_found`. Never carries the fan's e-mail or id.",
    params(LockerRoomPath),
    responses(
        (status = 200, description = "The locker room.", body = LockerRoomAnswer,
            example = json!(example_room())),
        (status = 404, description = "Nobody holds this name (`locker_room_not_found`), or the \
segment is no display name (`not_found`).",
            body = ErrorBody,
            example = json!(doc::error_example(
                ErrorCode::LockerRoomNotFound,
                "No fan has this display name.",
            ))),
        (status = 405, response = doc::MethodNotAllowed),
        (status = 500, response = doc::InternalError),
        (status = 503, response = doc::Unavailable),
    ),
    security(),
)]
pub async fn get_locker_room<S: GetLockerRoom>(
    State(state): State<Arc<LockerRoomsState<S>>>,
    Path(LockerRoomPath { display_name }): Path<LockerRoomPath>,
) -> Result<Response, ApiError> {
    let room = state
        .store
        .get_locker_room(&display_name)
        .await?
        .ok_or_else(|| {
            ApiError::refused(
                ErrorCode::LockerRoomNotFound,
                "No fan has this display name.",
            )
        })?;
    Ok(answer(&room))
}
