//! `GET /api/me/cash` and `GET /api/me/cash/transactions`: the caller's balances and their
//! ledger. One function (`me-cash`) serves both: it reads `CASH#` keys (the balances item, the
//! ledger's partition of the fan's index) and may write nothing.

use std::sync::Arc;

use axum::extract::{FromRequestParts, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::Response;
use serde::Serialize;
use utoipa::{IntoParams, ToSchema};

use crate::http::error::ApiError;
use crate::http::extract::{Fan, QueryParams};
use crate::http::paging::{MeCursor, PageJson, invalid_query, limit, list_key_after, next_cursor};
use crate::http::response::json_response;
use crate::openapi::responses as doc;
use crate::state::MeState;
use crate::views::cash::EntryJson;
use domain::cash::Money;
use domain::cash::is_currency;
use domain::cash::ledger::{DEFAULT_LEDGER_LIMIT, LedgerQuery};
use store::cash::{GetBalances, ListLedger};

/// The caller's balances.
#[derive(Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = MyBalances)]
struct Balances {
    balances: Vec<Money>,
}

/// `GET /api/me/cash`: one balance per currency the caller ever held, by currency.
#[utoipa::path(
    get,
    path = "/api/me/cash",
    operation_id = "getMyCash",
    tag = "Me",
    summary = "The signed-in user's Cash balances",
    description = "One balance per currency the caller ever held (0 included), sorted by \
currency; none for a fan who never had Cash.",
    security(("sessionToken" = [])),
    responses(
        (status = 200, description = "The caller's balances.", body = Balances,
            example = json!({"balances": [{"amount": 9002, "currency": "USD"}]})),
        doc::SignedIn,
    ),
)]
pub async fn my_cash<S: GetBalances>(
    State(state): State<Arc<MeState<S>>>,
    Fan(identity): Fan,
) -> Result<Response, ApiError> {
    let balances = state.store.get_balances(&identity.user_id).await?;
    Ok(json_response(StatusCode::OK, &Balances { balances }))
}

/// A page of the caller's ledger.
#[derive(Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = MyLedgerPage)]
struct Transactions<'a> {
    transactions: Vec<EntryJson<'a>>,
}

/// `?currency=&limit=&cursor=`, checked in that order; the cursor as sent.
#[derive(Debug)]
pub struct LedgerFilters {
    pub currency: Option<String>,
    pub limit: usize,
    pub cursor: Option<String>,
}

impl<St: Send + Sync> FromRequestParts<St> for LedgerFilters {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &St) -> Result<Self, ApiError> {
        let query = QueryParams::of(parts);
        let currency = query.single("currency")?;
        if currency.as_deref().is_some_and(|c| !is_currency(c)) {
            return Err(invalid_query(
                "The 'currency' parameter must be a currency code of three capital letters.",
            ));
        }
        Ok(Self {
            currency,
            limit: limit(&query, DEFAULT_LEDGER_LIMIT)?,
            cursor: query.single("cursor")?,
        })
    }
}

/// The query of `GET /api/me/cash/transactions` (read by [`my_ledger`]).
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
pub struct LedgerParams {
    #[param(pattern = "^[A-Z]{3}$")]
    pub currency: Option<String>,
    /// Entries per page.
    #[param(minimum = 1, maximum = 100, default = json!(DEFAULT_LEDGER_LIMIT))]
    pub limit: Option<u32>,
}

/// `{"transactions": [...], "nextCursor": ...}`.
type MyLedgerPage<'a> = PageJson<Transactions<'a>>;

/// `GET /api/me/cash/transactions?currency=&limit=&cursor=`: newest first.
#[utoipa::path(
    get,
    path = "/api/me/cash/transactions",
    operation_id = "listMyCashTransactions",
    tag = "Me",
    summary = "The signed-in user's Cash ledger",
    description = "Every credit (operator credits, card top-ups) and debit (payments) of the \
caller's balances, newest first (then id, descending). For each currency, the credits less the \
debits are the balance. Pages work as for `/api/me/purchases`.",
    security(("sessionToken" = [])),
    params(LedgerParams, MeCursor),
    responses(
        (status = 200, description = "A page of the caller's ledger.", body = MyLedgerPage),
        (status = 400, response = doc::BadRequest),
        doc::SignedIn,
    ),
)]
pub async fn my_ledger<S: ListLedger>(
    State(state): State<Arc<MeState<S>>>,
    Fan(identity): Fan,
    filters: LedgerFilters,
) -> Result<Response, ApiError> {
    let LedgerFilters {
        currency,
        limit,
        cursor: sent,
    } = filters;
    let scope = [
        "ledger",
        identity.user_id.as_str(),
        currency.as_deref().unwrap_or_default(),
    ];
    let after = list_key_after(&state.cursors, sent.as_deref(), &scope)?;
    let page = state
        .store
        .list_ledger(&LedgerQuery {
            user_id: identity.user_id.clone(),
            currency: currency.clone(),
            limit,
            after,
        })
        .await?;
    let transactions = page.entries.iter().map(EntryJson::of).collect();
    Ok(json_response(
        StatusCode::OK,
        &PageJson {
            entries: Transactions { transactions },
            next_cursor: next_cursor(&state.cursors, &scope, page.next.as_deref()),
        },
    ))
}
