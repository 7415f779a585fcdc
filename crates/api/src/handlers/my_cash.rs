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
use crate::http::paging::{MeCursor, PageJson, cursor, invalid_query, limit, next_cursor};
use crate::http::response::json_response;
use crate::openapi::responses as doc;
use crate::openapi::schemas::{Currency, Id};
use crate::state::MeState;
use domain::cash::Money;
use domain::cash::is_currency;
use domain::cash::ledger::{DEFAULT_LEDGER_LIMIT, EntryKind, LedgerQuery};
use domain::ids::PurchaseId;
use domain::purchases::mine::is_list_key;
use domain::timestamp::Timestamp;
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

/// One credit or debit of a balance.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = LedgerEntry)]
struct EntryJson<'a> {
    #[schema(value_type = Id)]
    id: &'a str,
    #[serde(rename = "type")]
    #[schema(value_type = EntryKind)]
    kind: &'static str,
    /// Minor units (cents); always positive, `type` says which way.
    amount: u64,
    #[schema(value_type = Currency)]
    currency: &'a str,
    at: Timestamp,
    /// The purchase a debit paid for; null for credits.
    #[schema(value_type = Option<Id>, required)]
    purchase_id: Option<&'a str>,
    /// The quest whose reward a credit is; null for other entries.
    #[schema(value_type = Option<Id>, required)]
    quest_id: Option<&'a str>,
    /// The order a debit paid for, or a Cash bundle's credit came from; null for other entries.
    #[schema(value_type = Option<Id>, required)]
    order_id: Option<&'a str>,
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
            purchase_id: entry.purchase_id.as_ref().map(PurchaseId::as_str),
            quest_id: entry.quest_id.as_ref().map(domain::ids::QuestId::as_str),
            order_id: entry.order_id.as_ref().map(domain::ids::OrderId::as_str),
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
