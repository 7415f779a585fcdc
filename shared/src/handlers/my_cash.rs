//! `GET /api/me/cash` and `GET /api/me/cash/transactions`: the caller's balances and their
//! ledger. One function (`me-cash`) serves both: it reads `CASH#` keys (the balances item, the
//! ledger's partition of the fan's index) and may write nothing.

use lambda_http::http::StatusCode;
use lambda_http::{Body, Request, Response};
use serde::Serialize;

use crate::cash::Money;
use crate::cash::is_currency;
use crate::cash::ledger::{DEFAULT_LEDGER_LIMIT, LedgerQuery};
use crate::handlers::me::{MeState, PageJson, cursor, invalid_query, limit, next_cursor};
use crate::http::request::{bearer_token, single_query_param};
use crate::http::respond;
use crate::http::response::json_response;
use crate::http::routes::{MY_CASH, MY_LEDGER};
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

#[derive(Serialize)]
struct Balances {
    balances: Vec<Money>,
}

/// `GET /api/me/cash`: one balance per currency the caller ever held, by currency.
pub async fn my_cash<S: GetBalances>(state: &MeState<S>, request: Request) -> Response<Body> {
    respond(&request, async {
        MY_CASH.params(&request)?;
        let identity = state.verifier.verify(bearer_token(&request)?).await?;
        let balances = state.store.get_balances(&identity.user_id).await?;
        Ok(json_response(StatusCode::OK, &Balances { balances }))
    })
    .await
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

/// `GET /api/me/cash/transactions?currency=&limit=&cursor=`: newest first.
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
