//! `PUT /api/packs/{packId}/purchases/{purchaseId}`: pays for a reserved purchase from the
//! caller's Cash balance.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde::{Deserialize, Serialize};

use crate::cash::Money;
use crate::handlers::purchase_json::{
    PurchaseJson, PurchasePath, PurchaseState, purchase_not_found,
};
use crate::http::error::{ApiError, ErrorCode};
use crate::http::extract::{Fan, FromJsonBody, Json, PackMetered};
use crate::http::request::json_object;
use crate::http::response::{json_response, mark_replayed};
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

/// `{"payment": {"method": "cash"}}`: the one payment the API takes.
pub struct CashPayment;

impl FromJsonBody for CashPayment {
    fn from_json(body: &[u8]) -> Result<Self, ApiError> {
        parse_payment(body).map(|()| Self)
    }
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
#[utoipa::path(
    put,
    path = "/api/packs/{packId}/purchases/{purchaseId}",
    operation_id = "complete_purchase",
    tag = "purchases"
)]
pub async fn complete_purchase<S: CompletePurchase>(
    State(state): State<Arc<PurchaseState<S>>>,
    PackMetered(PurchasePath {
        pack_id,
        purchase_id,
    }): PackMetered<PurchasePath>,
    Fan(identity): Fan,
    Json(CashPayment): Json<CashPayment>,
) -> Result<Response, ApiError> {
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
}
