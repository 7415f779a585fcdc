//! `DELETE /api/me` (issue 47, docs/account-deletion.md): the fan's account deleted. A fan who
//! would lose something (Cash, a reserved purchase, a pending top-up, an unopened pack) is told
//! what first (409 `confirmation_required`, with the amounts) and confirms with the same call
//! and `"confirm": true`. The deletion is begun in one write with the refusal of every token of
//! the fan, then erased step by step: here for up to the request's budget, then by the scheduled
//! `account-erasure` ([`resume_deletions`]), from the step stored. A repeat (with the deleted
//! account's token) answers the deletion as it stands.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use utoipa::ToSchema;

use crate::auth::TokenVerifier;
use crate::http::error::{ApiError, ErrorCode};
use crate::http::extract::{AnySession, FromJsonBody, IdempotencyKey, Json, handler_state};
use crate::http::request::json_object;
use crate::http::response::json_response;
use crate::http::routes::{LocalProcess, LocalState};
use crate::openapi::responses as doc;
use domain::account::{Deletion, Losses, PseudonymKey, Step, UNOPENED_PAGES};
use domain::ids::UserId;
use domain::purchases::PurchaseStatus;
use domain::purchases::mine::{MyPurchasesQuery, StatusFilter};
use domain::sessions::Ended;
use domain::timestamp::Timestamp;
use domain::truthy::is_truthy;
use store::account::AccountDeletion;
use store::cash::GetBalances;
use store::purchases::ListMyPurchases;

/// How long a request erases before it answers 202 and leaves the rest to `account-erasure`.
const REQUEST_BUDGET: Duration = Duration::from_secs(5);

/// The deletion function's state.
pub struct DeletionState<S> {
    pub store: S,
    pub verifier: TokenVerifier,
    pub max_body_bytes: usize,
    /// The operator's key that makes a deleted fan's pseudonym (`ACCOUNT_PSEUDONYM_KEY`).
    pub pseudonyms: PseudonymKey,
}

handler_state!(DeletionState: verifier, max_body_bytes);

impl<S: Send + Sync + Clone + 'static> LocalState<S> for DeletionState<S> {
    fn local(store: &S, process: &LocalProcess) -> Self {
        Self {
            store: store.clone(),
            verifier: process.verifier(),
            max_body_bytes: process.max_body_bytes,
            pseudonyms: process.pseudonyms.clone(),
        }
    }
}

/// `{"confirm": true}`: the fan knows what they lose.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = DeleteAccountRequest)]
pub struct DeleteBody {
    /// Truthy (JavaScript's rule): delete even though something is lost. Any other value, or
    /// none, confirms nothing (a fan who loses nothing needs no confirmation).
    #[schema(value_type = Option<serde_json::Value>)]
    confirm: Option<Box<RawValue>>,
}

impl FromJsonBody for DeleteBody {
    fn from_json(body: &[u8]) -> Result<Self, ApiError> {
        json_object(body, "The body must be {\"confirm\": true} or absent.")
    }
}

/// A deletion as the fan sees it.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = AccountDeletion)]
struct DeletionJson<'a> {
    /// `erasing` while steps remain (202), `deleted` once done (200).
    status: &'static str,
    requested_at: Timestamp,
    completed_at: Option<Timestamp>,
    /// What the fan was told they lose.
    losses: &'a Losses,
}

fn answer(deletion: &Deletion) -> Response {
    let (status, text) = if deletion.is_done() {
        (StatusCode::OK, "deleted")
    } else {
        (StatusCode::ACCEPTED, "erasing")
    };
    json_response(
        status,
        &DeletionJson {
            status: text,
            requested_at: deletion.requested_at,
            completed_at: deletion.completed_at,
            losses: &deletion.losses,
        },
    )
}

/// The 409 body: the error, and what the fan would lose.
#[derive(Serialize, ToSchema)]
#[schema(as = ConfirmationRequired)]
struct NeedsConfirmation<'a> {
    success: bool,
    error: ConfirmationError<'a>,
}

#[derive(Serialize, ToSchema)]
#[schema(as = ConfirmationRequiredError)]
struct ConfirmationError<'a> {
    /// `confirmation_required`.
    code: &'static str,
    message: String,
    losses: &'a Losses,
}

fn confirmation_required(losses: &Losses) -> Response {
    let cash: Vec<String> = losses
        .cash
        .iter()
        .filter(|(_, amount)| **amount > 0)
        .map(|(currency, amount)| format!("{amount} {currency} minor units of Cash"))
        .collect();
    let counts = [
        (losses.reserved_purchases, "reserved purchase(s)"),
        (losses.pending_top_ups, "pending top-up(s)"),
        (losses.unopened_packs, "unopened pack(s)"),
    ];
    let lost: Vec<String> = cash
        .into_iter()
        .chain(
            counts
                .iter()
                .filter(|(n, _)| *n > 0)
                .map(|(n, what)| format!("{n} {what}")),
        )
        .collect();
    json_response(
        StatusCode::CONFLICT,
        &NeedsConfirmation {
            success: false,
            error: ConfirmationError {
                code: ErrorCode::ConfirmationRequired.as_str(),
                message: format!(
                    "Deleting this account gives up {}; send the same request with \
                     {{\"confirm\": true}} to delete it.",
                    lost.join(", ")
                ),
                losses,
            },
        },
    )
}

/// What the fan would lose, read in a bounded number of requests: the balances, the live holds
/// (one page: a fan holds at most a few), the pending top-ups, and the unopened packs over the
/// newest [`UNOPENED_PAGES`] pages of purchases.
async fn losses<S>(store: &S, user_id: &UserId, now: Timestamp) -> Result<Losses, ApiError>
where
    S: AccountDeletion + GetBalances + ListMyPurchases,
{
    let cash = store
        .get_balances(user_id)
        .await?
        .into_iter()
        .filter(|money| money.amount > 0)
        .map(|money| (money.currency, money.amount))
        .collect();
    let count = |status: PurchaseStatus, pages: usize| async move {
        let mut query = MyPurchasesQuery {
            user_id: user_id.clone(),
            status: StatusFilter::parse(status.as_str()),
            pack_id: None,
            limit: 100,
            after: None,
            now,
        };
        let mut found = 0u32;
        for _ in 0..pages {
            let page = store.list_my_purchases(&query).await?;
            found += u32::try_from(page.entries.len()).unwrap_or(u32::MAX);
            match page.next {
                Some(next) => query.after = Some(next),
                None => return Ok::<_, ApiError>((found, true)),
            }
        }
        Ok((found, false))
    };
    let (reserved_purchases, _) = count(PurchaseStatus::Reserved, 1).await?;
    let (unopened_packs, unopened_packs_counted) =
        count(PurchaseStatus::Completed, UNOPENED_PAGES).await?;
    Ok(Losses {
        cash,
        reserved_purchases,
        pending_top_ups: store.pending_top_ups(user_id, now).await?,
        unopened_packs,
        unopened_packs_counted,
    })
}

/// Carries `deletion` on until done or `budget` is spent: the deletion as it stands.
pub async fn carry_on<S: AccountDeletion>(
    store: &S,
    pseudonyms: &PseudonymKey,
    mut deletion: Deletion,
    budget: Duration,
) -> Result<Deletion, ApiError> {
    let started = Instant::now();
    let pseudonym = pseudonyms.pseudonym(&deletion.user_id);
    while !deletion.is_done() && started.elapsed() < budget {
        let before = (deletion.step, deletion.after.clone());
        deletion = store
            .erase_step(&deletion, &pseudonym, Timestamp::now())
            .await?;
        // A step that waits (pending top-ups) is for the next scheduled run.
        if deletion.step == Step::SettleTopUps && before == (deletion.step, deletion.after.clone())
        {
            break;
        }
    }
    Ok(deletion)
}

/// `DELETE /api/me`.
#[utoipa::path(
    delete,
    path = "/api/me",
    operation_id = "deleteAccount",
    tag = "Auth",
    summary = "Delete the caller's account",
    description = "Deletes the fan's account: every session ended at once (every token of the \
fan refused, 401 `session_revoked`), reserved purchases released, the display name freed, the \
locker room and leaderboard entries gone, wallets, links, purchases, items, claims, queue entries \
and the profile erased. Cash balances, the ledger and top-ups are kept for the books under a \
pseudonym only the operator can link back (docs/account-deletion.md). A fan with Cash, a reserved \
purchase, a pending top-up or an unopened pack is answered 409 `confirmation_required` with what \
they would lose (`error.losses`), and confirms with the same call and `{\"confirm\": true}`. 202 \
while the erasure goes on (it finishes within minutes, after pending top-ups settle), 200 once \
done; the same call again, with the same token, answers the deletion as it stands.",
    security(("sessionToken" = [])),
    params(("Idempotency-Key" = String, Header, description = "1-255 visible ASCII characters.")),
    request_body(content = Option<DeleteBody>, content_type = "application/json"),
    responses(
        (status = 200, description = "Deleted.", body = DeletionJson),
        (status = 202, description = "Deleted from now on; the erasure goes on.", body = DeletionJson),
        (status = 400, response = doc::BadRequest),
        (status = 401, response = doc::Unauthorized),
        (status = 409, description = "Something would be lost: `confirmation_required`, with \
`error.losses`.", body = NeedsConfirmation),
    ),
)]
pub async fn delete_account<S>(
    State(state): State<Arc<DeletionState<S>>>,
    AnySession(identity, ended): AnySession,
    IdempotencyKey(key): IdempotencyKey,
    body: Option<Json<DeleteBody>>,
) -> Result<Response, ApiError>
where
    S: AccountDeletion + GetBalances + ListMyPurchases + Send + Sync + 'static,
{
    let user_id = &identity.user_id;
    let store = &state.store;
    let deletion = match (store.deletion(user_id).await?, ended) {
        (Some(begun), _) => begun,
        (None, Some(Ended::Revoked)) => return Err(ApiError::SessionEnded { deleted: false }),
        (None, Some(Ended::AccountDeleted)) => {
            return Err(ApiError::SessionEnded { deleted: true });
        }
        (None, None) => {
            let now = Timestamp::now();
            let losses = losses(store, user_id, now).await?;
            let confirmed = body
                .and_then(|Json(body)| body.confirm)
                .is_some_and(|confirm| is_truthy(&confirm));
            if losses.allow(confirmed).is_err() {
                return Ok(confirmation_required(&losses));
            }
            let begun = store
                .begin_deletion(&Deletion::new(user_id.clone(), key, losses, now))
                .await?;
            tracing::info!("account deletion begun");
            begun
        }
    };
    let deletion = carry_on(store, &state.pseudonyms, deletion, REQUEST_BUDGET).await?;
    Ok(answer(&deletion))
}

/// The scheduled erasure's state.
pub struct ErasureState<S> {
    pub store: S,
    pub pseudonyms: PseudonymKey,
    /// When a run stops starting deletions.
    pub budget: Duration,
}

/// The deletions most a run reads (oldest first).
const RUN_MAX: usize = 25;

/// One scheduled run: carries every unfinished deletion on (oldest first) within the budget.
/// A deletion a crash left halfway is resumed here from its stored step.
pub async fn resume_deletions<S: AccountDeletion>(
    state: &ErasureState<S>,
) -> Result<serde_json::Value, lambda_runtime::Error> {
    let started = Instant::now();
    let mut finished = 0u32;
    let unfinished = state
        .store
        .unfinished_deletions(RUN_MAX)
        .await
        .map_err(ApiError::from)?;
    let found = unfinished.len();
    for deletion in unfinished {
        let left = state.budget.saturating_sub(started.elapsed());
        if left.is_zero() {
            break;
        }
        if carry_on(&state.store, &state.pseudonyms, deletion, left)
            .await?
            .is_done()
        {
            finished += 1;
        }
    }
    tracing::info!(found, finished, "account erasure run");
    Ok(serde_json::json!({ "found": found, "finished": finished }))
}
