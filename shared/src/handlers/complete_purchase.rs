//! `PUT /api/packs/{packId}/purchases/{purchaseId}`: pays for a reserved purchase from the
//! caller's Cash balance.

use lambda_http::http::StatusCode;
use lambda_http::{Body, Request, Response};
use serde::{Deserialize, Serialize};

use crate::cash::Money;
use crate::handlers::purchase_json::{
    PurchaseJson, PurchaseState, mark_replayed, purchase_not_found,
};
use crate::http::error::{ApiError, ErrorCode};
use crate::http::request::{bearer_token, body_bytes, json_object, require_json_content_type};
use crate::http::respond;
use crate::http::response::json_response;
use crate::http::routes::{COMPLETE_PURCHASE, PurchasePath};
use crate::metrics::{self, Metric};
use crate::purchases::CompleteRefusal;
use crate::store::purchases::{CompleteError, CompletePurchase, Completed};
use crate::timestamp::Timestamp;

/// The payment methods the API takes.
pub const PAYMENT_METHODS: [&str; 1] = ["cash"];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CompleteBody {
    payment: Payment,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Payment {
    method: String,
}

/// Reads `{"payment": {"method": "cash"}}`.
pub fn parse_payment(body: &[u8]) -> Result<(), ApiError> {
    let CompleteBody { payment } = json_object(
        body,
        "The body must be {\"payment\": {\"method\": \"cash\"}}.",
    )?;
    if PAYMENT_METHODS.contains(&payment.method.as_str()) {
        Ok(())
    } else {
        Err(ApiError::refused(
            ErrorCode::UnsupportedPaymentMethod,
            "The payment method must be \"cash\".",
        ))
    }
}

#[derive(Serialize)]
struct CompleteAnswer<'a> {
    purchase: PurchaseJson<'a>,
    cash: CashJson,
}

#[derive(Serialize)]
struct CashJson {
    balance: Money,
}

fn refused(error: CompleteError) -> ApiError {
    match error {
        CompleteError::Store(error) => error.into(),
        CompleteError::Refused(CompleteRefusal::NotFound) => purchase_not_found(),
        CompleteError::Refused(CompleteRefusal::Expired) => ApiError::refused(
            ErrorCode::ReservationExpired,
            "The reservation expired before it was paid; its unit is back on sale.",
        ),
        CompleteError::Refused(CompleteRefusal::SaleClosed) => ApiError::refused(
            ErrorCode::ReservationExpired,
            "This pack's sale has ended and its server seed is being revealed: the reservation can no longer be paid.",
        ),
        CompleteError::Refused(CompleteRefusal::InsufficientFunds) => ApiError::refused(
            ErrorCode::InsufficientFunds,
            "Your Cash balance is too low for this purchase; the reservation holds until it expires.",
        ),
    }
}

/// Checks, in order: route (404/405), token (401), body (415, 413, 400); then pays in one
/// transaction. A repeat on a paid purchase answers it again (no second debit).
pub async fn complete_purchase<S: CompletePurchase>(
    state: &PurchaseState<S>,
    request: Request,
) -> Response<Body> {
    respond(&request, async {
        let PurchasePath {
            pack_id,
            purchase_id,
        } = COMPLETE_PURCHASE.params(&request)?;
        metrics::property("packId", &pack_id);
        let identity = state.verifier.verify(bearer_token(&request)?).await?;
        require_json_content_type(&request)?;
        parse_payment(body_bytes(&request, state.max_body_bytes)?)?;
        let now = Timestamp::now();
        let completed = state
            .store
            .complete_purchase(&identity.user_id, &pack_id, &purchase_id, now)
            .await
            .map_err(refused)?;
        let (purchase, balance, replayed) = match completed {
            Completed::Paid { purchase, balance } => (purchase, balance, false),
            Completed::Repeated { purchase, balance } => (purchase, balance, true),
        };
        if !replayed {
            metrics::count(Metric::PurchasesCompleted);
            tracing::info!(purchase_id = %purchase.id, "purchase paid");
        }
        let mut response = json_response(
            StatusCode::OK,
            &CompleteAnswer {
                purchase: PurchaseJson::at(&purchase, now),
                cash: CashJson {
                    balance: Money {
                        amount: balance,
                        currency: purchase.price.currency.clone(),
                    },
                },
            },
        );
        if replayed {
            mark_replayed(&mut response);
        }
        Ok(response)
    })
    .await
}
