//! `GET /api/me/cash` and `GET /api/me/cash/transactions`: the caller's balances and their
//! ledger. One function (`me-cash`) serves both: it reads `CASH#` keys (the balances item, the
//! ledger's partition of the fan's index) and may write nothing.

use lambda_http::http::StatusCode;
use lambda_http::{Body, Request, Response};
use serde::Serialize;
use utoipa::{IntoParams, ToSchema};

use crate::cash::Money;
use crate::cash::is_currency;
use crate::cash::ledger::{DEFAULT_LEDGER_LIMIT, EntryKind, LedgerQuery};
use crate::handlers::me::{MeState, PageJson, cursor, invalid_query, limit, next_cursor};
use crate::http::request::{bearer_token, single_query_param};
use crate::http::respond;
use crate::http::response::json_response;
use crate::http::routes::{MY_CASH, MY_LEDGER};
use crate::openapi::responses as doc;
use crate::openapi::schemas::{Currency, Id};
use crate::purchases::mine::is_list_key;
use crate::store::cash::{GetBalances, ListLedger};
use crate::timestamp::Timestamp;

/// The `me-cash` function: each of its routes to its handler.
pub async fn me_cash<S: GetBalances + ListLedger>(
    state: &MeState<S>,
    request: Request,
) -> Response<Body> {
    if MY_LEDGER.is_for(&request) {
        my_ledger(state, request).await
    } else {
        my_cash(state, request).await
    }
}

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
        (status = 401, response = doc::Unauthorized),
        (status = 405, response = doc::MethodNotAllowed),
        (status = 500, response = doc::InternalError),
        (status = 503, response = doc::Unavailable),
    ),
)]
pub async fn my_cash<S: GetBalances>(state: &MeState<S>, request: Request) -> Response<Body> {
    respond(&request, async {
        MY_CASH.params(&request)?;
        let identity = state.verifier.verify(bearer_token(&request)?).await?;
        let balances = state.store.get_balances(&identity.user_id).await?;
        Ok(json_response(StatusCode::OK, &Balances { balances }))
    })
    .await
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
}

/// A page of the caller's ledger.
#[derive(Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = MyLedgerPage)]
struct Transactions<'a> {
    transactions: Vec<EntryJson<'a>>,
}

/// The query of `GET /api/me/cash/transactions` (read by [`my_ledger`]).
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
pub struct LedgerFilters {
    #[param(pattern = "^[A-Z]{3}$")]
    pub currency: Option<String>,
    /// Entries per page.
    #[param(minimum = 1, maximum = 100, default = json!(DEFAULT_LEDGER_LIMIT))]
    pub limit: Option<u32>,
    /// The `nextCursor` of the previous page, as given, with the same filters and token (any
    /// other value is a 400 `invalid_cursor`).
    #[param(min_length = 1, max_length = 256)]
    pub cursor: Option<String>,
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
    params(LedgerFilters),
    responses(
        (status = 200, description = "A page of the caller's ledger.", body = MyLedgerPage),
        (status = 400, response = doc::BadRequest),
        (status = 401, response = doc::Unauthorized),
        (status = 405, response = doc::MethodNotAllowed),
        (status = 500, response = doc::InternalError),
        (status = 503, response = doc::Unavailable),
    ),
)]
pub async fn my_ledger<S: ListLedger>(state: &MeState<S>, request: Request) -> Response<Body> {
    respond(&request, async {
        MY_LEDGER.params(&request)?;
        let identity = state.verifier.verify(bearer_token(&request)?).await?;
        let currency = single_query_param(&request, "currency")?;
        if currency.as_deref().is_some_and(|c| !is_currency(c)) {
            return Err(invalid_query(
                "The 'currency' parameter must be a currency code of three capital letters.",
            ));
        }
        let limit = limit(&request, DEFAULT_LEDGER_LIMIT)?;
        let scope = [
            "ledger",
            identity.user_id.as_str(),
            currency.as_deref().unwrap_or_default(),
        ];
        let after = cursor(&state.cursors, &request, &scope, |position| {
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
    })
    .await
}
