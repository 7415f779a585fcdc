//! `PUT /api/me/cosmetics` (the `me-profile` function): the fan equips owned cosmetics, one per
//! slot, shown on their profile and in their locker room (issue 48). Owning each is checked in
//! the write that equips it.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::http::error::{ApiError, ErrorBody, ErrorCode};
use crate::http::extract::{Fan, FromJsonBody, Json};
use crate::http::request::json_object;
use crate::http::response::json_response;
use crate::openapi::responses as doc;
use crate::openapi::schemas::Id;
use crate::state::ProfileState;
use crate::views::products::CosmeticsJson;
use domain::ids::ProductId;
use domain::products::Slot;
use domain::products::cosmetics::Equipped;
use store::products::{EquipError, FanCosmetics};

/// What the fan shows in each slot: an owned cosmetic's `id` for that slot, or `null` (or
/// absent) for nothing.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = CosmeticsRequest)]
pub struct CosmeticsBody {
    #[schema(value_type = Option<Id>)]
    #[serde(default)]
    avatar_frame: Option<ProductId>,
    #[schema(value_type = Option<Id>)]
    #[serde(default)]
    locker_theme: Option<ProductId>,
    #[schema(value_type = Option<Id>)]
    #[serde(default)]
    badge: Option<ProductId>,
}

impl FromJsonBody for CosmeticsBody {
    fn from_json(body: &[u8]) -> Result<Self, ApiError> {
        json_object(
            body,
            "The body must be a JSON object of 'avatarFrame', 'lockerTheme' and 'badge', each a \
             cosmetic's id or null.",
        )
    }
}

impl CosmeticsBody {
    fn equipped(self) -> Equipped {
        let mut equipped = Equipped::default();
        for (slot, id) in [
            (Slot::AvatarFrame, self.avatar_frame),
            (Slot::LockerTheme, self.locker_theme),
            (Slot::Badge, self.badge),
        ] {
            if let Some(id) = id {
                equipped.slots.insert(slot, id);
            }
        }
        equipped
    }
}

/// `{"cosmetics": ...}`.
#[derive(Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CosmeticsAnswer<'a> {
    cosmetics: CosmeticsJson<'a>,
}

/// Replaces what the fan shows: each slot named holds that cosmetic, every other slot nothing.
/// One transaction, each cosmetic checked owned for its slot (422 `cosmetic_not_owned`, nothing
/// written).
#[utoipa::path(
    put,
    path = "/api/me/cosmetics",
    operation_id = "putMyCosmetics",
    tag = "Products",
    summary = "Equip the signed-in user's cosmetics",
    description = "Sets what the fan shows, one cosmetic per slot: `avatarFrame`, \
`lockerTheme`, `badge`, each the `id` of a cosmetic product of that slot the fan owns (ordered \
and granted), or `null` (or absent) to show nothing there. The profile (`GET /api/me`) and the \
public locker room show them. Owning each is checked in the same write: one the fan does not \
own, or of another slot, is 422 `cosmetic_not_owned` and nothing changes.",
    security(("sessionToken" = [])),
    request_body(
        content = CosmeticsBody,
        description = "At most 64 KiB (`MAX_BODY_BYTES`).",
        example = json!({"avatarFrame": "frame-gold", "lockerTheme": null, "badge": null}),
    ),
    responses(
        (status = 200, description = "What the fan shows now.", body = CosmeticsAnswer,
            example = json!({"cosmetics": {"avatarFrame": "frame-gold", "lockerTheme": null, "badge": null}})),
        (status = 400, description = "Malformed JSON (`invalid_json`) or a body that is not an \
object of the three slots, each an id or null (`invalid_body`).", body = ErrorBody),
        (status = 413, response = doc::PayloadTooLarge),
        (status = 415, response = doc::UnsupportedMediaType),
        (status = 422, description = "A cosmetic the fan does not own for that slot \
(`cosmetic_not_owned`); nothing changed.",
            body = ErrorBody,
            example = json!(doc::error_example(
                ErrorCode::CosmeticNotOwned,
                "You do not own a cosmetic of this id for the slot 'avatarFrame'.",
            ))),
        doc::SignedIn,
    ),
)]
pub async fn put_my_cosmetics<S: FanCosmetics>(
    State(state): State<Arc<ProfileState<S>>>,
    Fan(identity): Fan,
    Json(body): Json<CosmeticsBody>,
) -> Result<Response, ApiError> {
    let equipped = body.equipped();
    state
        .store
        .equip(&identity.user_id, &equipped)
        .await
        .map_err(|error| match error {
            EquipError::NotOwned(slot) => ApiError::refused(
                ErrorCode::CosmeticNotOwned,
                format!(
                    "You do not own a cosmetic of this id for the slot '{}'.",
                    slot_field(slot)
                ),
            ),
            EquipError::Store(error) => error.into(),
        })?;
    Ok(json_response(
        StatusCode::OK,
        &CosmeticsAnswer {
            cosmetics: CosmeticsJson::of(&equipped),
        },
    ))
}

/// A slot's field in the body and the answer.
fn slot_field(slot: Slot) -> &'static str {
    match slot {
        Slot::AvatarFrame => "avatarFrame",
        Slot::LockerTheme => "lockerTheme",
        Slot::Badge => "badge",
    }
}
