//! `PUT /api/packs/{packId}/purchases/{purchaseId}`: pays for a reserved purchase from the
//! caller's Cash balance.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::http::error::{ApiError, ErrorBody, ErrorCode};
use crate::http::extract::{Fan, FromJsonBody, Json, PackMetered, PurchasePath};
use crate::http::refusals::purchase_not_found;
use crate::http::request::json_object;
use crate::http::response::{json_response, mark_replayed};
use crate::openapi::headers::Replayed;
use crate::openapi::{examples, responses as doc};
use crate::state::PurchaseState;
use crate::views::purchase::PurchaseJson;
use domain::cash::Money;
use domain::purchases::CompleteRefusal;
use domain::timestamp::Timestamp;
use store::metrics::{self, Metric};
use store::purchases::{CompleteError, CompletePurchase, Completed};

/// The payment methods the API takes.
pub const PAYMENT_METHODS: [&str; 1] = ["cash"];

/// How to pay; `cash` (the in-app Cash balance) is the only method.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = CompletePurchaseRequest)]
struct CompleteBody {
    #[schema(inline)]
    payment: Payment,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct Payment {
    #[schema(schema_with = payment_methods)]
    method: String,
}

fn payment_methods() -> utoipa::openapi::Object {
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(utoipa::openapi::Type::String)
        .enum_values(Some(PAYMENT_METHODS))
        .build()
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

#[derive(Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = CompletePurchaseAnswer)]
struct CompleteAnswer<'a> {
    purchase: PurchaseJson<'a>,
    #[schema(inline)]
    cash: CashJson,
}

#[derive(Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct CashJson {
    /// The Cash balance left in the purchase's currency.
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
    operation_id = "completePurchase",
    tag = "Purchases",
    summary = "Pay for a reserved purchase from the Cash balance",
    description = "Pays for the signed-in user's reserved purchase, while its hold runs, from \
their Cash balance in the pack's currency, in one transaction: the purchase `completed` \
(`completedAt` set), the balance down by the price (never below zero), a debit in the ledger. \
Repeating it on a paid (`completed` or `opened`) purchase answers it again with the balance now \
and `Idempotent-Replayed: true`, and debits nothing.

Checked in this order: the path (404 `not_found`), the token (401), the body (415, 413, 400); \
then the purchase: not the user's, or not of this pack (404 `purchase_not_found`), its hold ran \
out (410 `reservation_expired`; the unit goes back on sale), the balance is below the price (402 \
`insufficient_funds`; the hold stays until it runs out).",
    security(("sessionToken" = [])),
    params(PurchasePath),
    request_body(
        content = CompleteBody,
        examples(("cash" = (value = json!({"payment": {"method": "cash"}})))),
    ),
    responses(
        (status = 200, description = "The purchase, paid, and the Cash balance left in its \
currency. A replay (the purchase was paid before) has `Idempotent-Replayed: true`.",
            body = CompleteAnswer,
            headers(("Idempotent-Replayed" = inline(Replayed))),
            examples(("paid" = (value = json!(examples::paid_purchase()))))),
        (status = 400, description = "Malformed JSON (`invalid_json`); a body that is not \
`{\"payment\": {\"method\": ...}}` (`invalid_body`); a method other than `cash` \
(`unsupported_payment_method`).",
            body = ErrorBody,
            examples(
                ("invalidJson" = (value = json!(doc::invalid_json()))),
                ("invalidBody" = (value = json!(doc::error_example(
                    ErrorCode::InvalidBody,
                    "The body must be {\"payment\": {\"method\": \"cash\"}}.",
                )))),
                ("unsupportedMethod" = (value = json!(doc::error_example(
                    ErrorCode::UnsupportedPaymentMethod,
                    "The payment method must be \"cash\".",
                )))),
            )),
        (status = 402, description = "The Cash balance in the pack's currency is below the price \
(`insufficient_funds`); the reservation holds until it expires.",
            body = ErrorBody,
            example = json!(doc::error_example(
                ErrorCode::InsufficientFunds,
                "Your Cash balance is too low for this purchase; the reservation holds until it expires.",
            ))),
        (status = 404, response = doc::PurchaseNotFound),
        (status = 410, description = "The hold ran out before the purchase was paid \
(`reservation_expired`); its unit is back on sale. Start a new purchase. Also answered from 5 s \
before the pack's seed is revealed (`saleEndsAt` + 1 hour) to a hold that would outlive it: a \
sale ended early while the purchase was starting.",
            body = ErrorBody,
            example = json!(doc::error_example(
                ErrorCode::ReservationExpired,
                "The reservation expired before it was paid; its unit is back on sale.",
            ))),
        (status = 413, response = doc::PayloadTooLarge),
        (status = 415, response = doc::UnsupportedMediaType),
        doc::SignedIn,
    ),
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
