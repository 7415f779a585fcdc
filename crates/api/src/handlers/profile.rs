//! `GET /api/me` and `PATCH /api/me`: the signed-in fan's profile (the `me-profile` function).

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde::Serialize;
use utoipa::ToSchema;

use crate::http::error::{ApiError, ErrorBody, ErrorCode};
use crate::http::extract::{Fan, FromJsonBody, Json};
use crate::http::request::json_object;
use crate::http::response::json_response;
use crate::openapi::responses as doc;
use crate::state::ProfileState;
use crate::views::products::CosmeticsJson;
use domain::products::cosmetics::Equipped;
use domain::profile::Profile;
use domain::profile::patch::{ProfilePatch, ProfilePatchBody};
use domain::timestamp::Timestamp;
use futures_util::future::try_join;
use store::products::FanCosmetics;
use store::profile::{GetProfile, PatchProfile, PatchProfileError};

/// `{"user": ..., "cosmetics": ...}`: the profile and what the fan shows on it.
#[derive(Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = UserAnswer)]
struct UserAnswer<'a> {
    #[schema(value_type = Profile)]
    user: &'a Profile,
    /// The cosmetics the fan equipped (`PUT /api/me/cosmetics`).
    cosmetics: CosmeticsJson<'a>,
}

fn answer(profile: &Profile, equipped: &Equipped) -> Response {
    json_response(
        StatusCode::OK,
        &UserAnswer {
            user: profile,
            cosmetics: CosmeticsJson::of(equipped),
        },
    )
}

/// An example profile, as a fan who named themselves and picked a team reads it.
fn example_user() -> serde_json::Value {
    serde_json::json!({"user": {
        "id": "user_2NNEqL2nrIRdJ194ndJqAHwEfxC",
        "email": "fan@example.com",
        "displayName": "Zoe.Hoops",
        "avatarUrl": "https://cdn.example.com/avatars/zoe.png",
        "favoriteTeamId": "nba-lal",
        "createdAt": "2026-11-25T21:00:00Z",
        "updatedAt": "2026-11-26T08:30:00Z"
    }, "cosmetics": {"avatarFrame": "frame-gold", "lockerTheme": null, "badge": null}})
}

/// `GET /api/me`: the caller's profile, created on their first call.
#[utoipa::path(
    get,
    path = "/api/me",
    operation_id = "getMe",
    tag = "Me",
    summary = "The signed-in user's profile",
    description = "The caller's profile, and the cosmetics they show on it (`cosmetics`). Their \
first call creates it from the session token: `id` is the token's `sub`, `email` its e-mail claim \
(or null), the rest null. The e-mail is \
shown to its owner only: the public locker room never carries it.",
    security(("sessionToken" = [])),
    responses(
        (status = 200, description = "The caller's profile.", body = UserAnswer,
            example = json!(example_user())),
        (status = 404, description = "No route (`not_found`).", body = ErrorBody),
        doc::SignedIn,
    ),
)]
pub async fn get_me<S: GetProfile + FanCosmetics>(
    State(state): State<Arc<ProfileState<S>>>,
    Fan(identity): Fan,
) -> Result<Response, ApiError> {
    let (profile, equipped) = try_join(
        state.store.get_profile(
            &identity.user_id,
            identity.email.as_deref(),
            Timestamp::now(),
        ),
        state.store.equipped(&identity.user_id),
    )
    .await?;
    Ok(answer(&profile, &equipped))
}

/// The body of `PATCH /api/me`, checked member by member.
pub struct PatchBody(ProfilePatch);

impl FromJsonBody for PatchBody {
    fn from_json(body: &[u8]) -> Result<Self, ApiError> {
        let body: ProfilePatchBody = json_object(
            body,
            "The body must be a JSON object of any of 'displayName', 'avatarUrl' and \
             'favoriteTeamId', each a string or null, and nothing else.",
        )?;
        body.check()
            .map(Self)
            .map_err(|error| ApiError::refused(ErrorCode::InvalidBody, error.to_string()))
    }
}

fn team_not_found() -> ApiError {
    ApiError::unprocessable(
        ErrorCode::TeamNotFound,
        "'favoriteTeamId' names no team of the catalogue.",
    )
}

fn refused(error: PatchProfileError) -> ApiError {
    match error {
        PatchProfileError::NameTaken => ApiError::refused(
            ErrorCode::DisplayNameTaken,
            "Another fan has this display name or one that looks like it (names are unique \
             without regard to case, 0/O, 1/l/I, m/rn, w/vv and the separators _ . -).",
        ),
        PatchProfileError::TeamNotFound => team_not_found(),
        PatchProfileError::Store(error) => error.into(),
    }
}

/// `PATCH /api/me`: changes the caller's profile, all at once or not at all.
#[utoipa::path(
    patch,
    path = "/api/me",
    operation_id = "updateMe",
    tag = "Me",
    summary = "Change the signed-in user's profile",
    description = "Each of `displayName`, `avatarUrl` and `favoriteTeamId` is kept when absent, \
cleared by `null`, set by a value; any other member is refused. The whole patch is written in one \
transaction or not at all.

- `displayName`: 3-24 characters of `A-Z`, `a-z`, `0-9`, `_`, `.` and `-`, unique by how it \
looks: without regard to case, `0`/`O`, `1`/`l`/`I`, `m`/`rn`, `w`/`vv` and the separators `_`, \
`.`, `-` (409 `display_name_taken`); the old name is freed in the same write, and the caller's \
locker room moves to the new name. Changing to a look-alike of your own name (its case, say) \
keeps it. A name with no letter or digit, or one that reads as a staff or system name \
(`admin`, `support`, `official`, `null`, ... at its start or end, look-alikes included), is 400 \
`invalid_body`.
- `avatarUrl`: https, at most 2,048 bytes, on a domain name (no user or password, no IP address, \
no internationalised host, no port); stored and served in its normal form (scheme and host \
lowercased, spaces and tabs dropped, quotes and angle brackets percent-encoded).
- `favoriteTeamId`: a team of the catalogue (422 `team_not_found`).

A patch before any `GET /api/me` creates the profile first, as `GET` does.",
    security(("sessionToken" = [])),
    request_body(
        content = ProfilePatchBody,
        description = "At most 64 KiB (`MAX_BODY_BYTES`).",
        example = json!({"displayName": "Zoe.Hoops", "favoriteTeamId": "nba-lal", "avatarUrl": null}),
    ),
    responses(
        (status = 200, description = "The profile as patched.", body = UserAnswer,
            example = json!(example_user())),
        (status = 400, description = "Malformed JSON (`invalid_json`); a body that is not an \
object of those members, each a string or null (`invalid_body`); a value outside its rule \
(`invalid_body`, naming the member).",
            body = ErrorBody,
            example = json!(doc::error_example(
                ErrorCode::InvalidBody,
                "displayName must be 3-24 characters of A-Z, a-z, 0-9, _, . and -, or null",
            ))),
        (status = 404, description = "No route (`not_found`).", body = ErrorBody),
        (status = 409, description = "Another fan has this display name \
(`display_name_taken`).",
            body = ErrorBody,
            example = json!(doc::error_example(
                ErrorCode::DisplayNameTaken,
                "Another fan has this display name or one that looks like it (names are unique \
             without regard to case, 0/O, 1/l/I, m/rn, w/vv and the separators _ . -).",
            ))),
        (status = 413, response = doc::PayloadTooLarge),
        (status = 415, response = doc::UnsupportedMediaType),
        (status = 422, description = "`favoriteTeamId` names no team (`team_not_found`).",
            body = ErrorBody,
            example = json!(doc::example(team_not_found()))),
        doc::SignedIn,
    ),
)]
pub async fn patch_me<S: PatchProfile + FanCosmetics>(
    State(state): State<Arc<ProfileState<S>>>,
    Fan(identity): Fan,
    Json(PatchBody(patch)): Json<PatchBody>,
) -> Result<Response, ApiError> {
    // The cosmetics shown are another item: read beside the patch, not after it.
    let (profile, equipped) = try_join(
        async {
            state
                .store
                .patch_profile(
                    &identity.user_id,
                    identity.email.as_deref(),
                    &patch,
                    Timestamp::now(),
                )
                .await
                .map_err(refused)
        },
        async { Ok(state.store.equipped(&identity.user_id).await?) },
    )
    .await?;
    Ok(answer(&profile, &equipped))
}
