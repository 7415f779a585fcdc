//! `GET /api/packs/{packId}`: one pack with its items and its fairness commitment. Public.

use lambda_http::http::StatusCode;
use lambda_http::{Body, Request, Response};
use serde::Serialize;

use crate::http::error::{ApiError, ErrorCode};
use crate::http::respond;
use crate::http::response::{json_response, publicly_cached};
use crate::http::routes::GET_PACK;
use crate::packs::{Pack, PackFairness, PackStatus};
use crate::store::packs::GetPack;
use crate::timestamp::Timestamp;

/// What the get-pack handler needs.
pub struct GetPackState<S> {
    pub store: S,
}

#[derive(Serialize)]
struct PackAnswer<'a> {
    pack: PackDetail<'a>,
}

/// The pack as listed, plus `items` and `fairness`.
#[derive(Serialize)]
struct PackDetail<'a> {
    #[serde(flatten)]
    pack: &'a Pack,
    fairness: PackFairness,
}

pub fn pack_not_found() -> ApiError {
    ApiError::refused(ErrorCode::PackNotFound, "No pack has this id.")
}

/// A pack whose status is `active` or `archived`, whatever its sale window; a draft or an unknown
/// id is 404 `pack_not_found`. The server seed is shown once it is revealed.
pub async fn get_pack<S: GetPack>(state: &GetPackState<S>, request: Request) -> Response<Body> {
    respond(&request, async {
        let params = GET_PACK.params(&request)?;
        let stored = state
            .store
            .get_pack(params.get("packId"))
            .await?
            .filter(|stored| stored.pack.status != PackStatus::Draft)
            .ok_or_else(pack_not_found)?;
        let fairness = PackFairness::at(&stored.seed, stored.pack.sale_ends_at, Timestamp::now());
        Ok(publicly_cached(json_response(
            StatusCode::OK,
            &PackAnswer {
                pack: PackDetail {
                    pack: &stored.pack,
                    fairness,
                },
            },
        )))
    })
    .await
}
