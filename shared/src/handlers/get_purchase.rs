//! `GET /api/packs/{packId}/purchases/{purchaseId}`: one of the caller's purchases.

use lambda_http::http::StatusCode;
use lambda_http::{Body, Request, Response};

use crate::handlers::purchase_json::{
    PurchaseAnswer, PurchaseJson, PurchaseState, purchase_not_found,
};
use crate::http::request::bearer_token;
use crate::http::respond;
use crate::http::response::json_response;
use crate::http::routes::GET_PURCHASE;
use crate::store::purchases::GetPurchase;
use crate::timestamp::Timestamp;

/// The caller's purchase of that pack; anybody else's, another pack's or none is the same 404
/// (never 403: whether it exists is not told). One read.
pub async fn get_purchase<S: GetPurchase>(
    state: &PurchaseState<S>,
    request: Request,
) -> Response<Body> {
    respond(&request, async {
        let params = GET_PURCHASE.params(&request)?;
        let identity = state.verifier.verify(bearer_token(&request)?).await?;
        let purchase = state
            .store
            .get_purchase(&identity.user_id, params.get("purchaseId"))
            .await?
            .filter(|purchase| purchase.pack_id == params.get("packId"))
            .ok_or_else(purchase_not_found)?;
        Ok(json_response(
            StatusCode::OK,
            &PurchaseAnswer {
                purchase: PurchaseJson::at(&purchase, Timestamp::now()),
            },
        ))
    })
    .await
}
