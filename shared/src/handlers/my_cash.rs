//! `GET /api/me/cash` and `GET /api/me/cash/transactions`: the caller's balances and their
//! ledger. One function (`me-cash`) serves both: it reads `CASH#` keys (the balances item, the
//! ledger's partition of the fan's index) and may write nothing.

use std::sync::Arc;

use axum::extract::{FromRequestParts, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::Response;
use serde::Serialize;

use crate::cash::Money;
use crate::cash::is_currency;
use crate::cash::ledger::{DEFAULT_LEDGER_LIMIT, LedgerQuery};
use crate::handlers::me::{MeState, PageJson, cursor, invalid_query, limit, next_cursor};
use crate::http::error::ApiError;
use crate::http::extract::{Fan, QueryParams};
use crate::http::response::json_response;
use crate::purchases::mine::is_list_key;
use crate::store::cash::{GetBalances, ListLedger};
use crate::timestamp::Timestamp;

#[derive(Serialize)]
struct Balances {
    balances: Vec<Money>,
}

/// `GET /api/me/cash`: one balance per currency the caller ever held, by currency.
#[utoipa::path(get, path = "/api/me/cash", operation_id = "my_cash", tag = "me")]
pub async fn my_cash<S: GetBalances>(
    State(state): State<Arc<MeState<S>>>,
    Fan(identity): Fan,
) -> Result<Response, ApiError> {
    let balances = state.store.get_balances(&identity.user_id).await?;
    Ok(json_response(StatusCode::OK, &Balances { balances }))
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct EntryJson<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    amount: u64,
    currency: &'a str,
    at: Timestamp,
    purchase_id: Option<&'a str>,
}

#[derive(Serialize)]
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

/// `GET /api/me/cash/transactions?currency=&limit=&cursor=`: newest first.
#[utoipa::path(
    get,
    path = "/api/me/cash/transactions",
    operation_id = "my_ledger",
    tag = "me"
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
    let after = cursor(&state.cursors, sent.as_deref(), &scope, |position| {
        is_list_key(position).then(|| position.to_owned())
    })?;
    let page = state
        .store
        .list_ledger(&LedgerQuery {
            user_id: identity.user_id.clone(),
            currency: currency.clone(),
            limit,
            after,
        })
        .await?;
    let transactions = page
        .entries
        .iter()
        .map(|entry| EntryJson {
            id: &entry.id,
            kind: entry.kind.as_str(),
            amount: entry.amount.amount,
            currency: &entry.amount.currency,
            at: entry.at,
            purchase_id: entry.purchase_id.as_deref(),
        })
        .collect();
    Ok(json_response(
        StatusCode::OK,
        &PageJson {
            entries: Transactions { transactions },
            next_cursor: next_cursor(&state.cursors, &scope, page.next.as_deref()),
        },
    ))
}
