//! A pack's waiting room (issue 29, the `queue` function): the line as the public sees it, a
//! fan's join and entry, the committed entrants, a fan's Merkle proof and the report. The close,
//! the draw and admission are the keeper's (a scheduled function).

pub mod proof;

use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::extract::State;
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::Response;
use utoipa::IntoParams;

use crate::auth::TokenVerifier;
use crate::http::error::{ApiError, ErrorBody, ErrorCode};
use crate::http::extract::{Fan, PackPath, Path, QueryParams, Verifies};
use crate::http::human_check::{HumanCheck, HumanCheckToken, verify_human};
use crate::http::response::{json_response, mark_replayed};
use crate::http::routes::{LocalProcess, LocalState};
use crate::openapi::headers::HumanCheckHeader;
use crate::openapi::responses as doc;
use crate::views::queue::{
    CLOSED, ENTRY_NOT_FOUND, EntrantsAnswer, EntryAnswer, EntryJson, NOT_CLOSED, NOT_FINISHED,
    NOT_OPEN, QUEUE_NOT_FOUND, QueueAnswer, QueueJson, ReportAnswer, ReportJson, refused,
};
use domain::humancheck::Door;
use domain::ids::PackId;
use domain::queue::entry::{QueueEntry, ReceiptSigner};
use domain::queue::excluded::Exclusion;
use domain::queue::state::StoredStatus;
use domain::queue::terms::Phase;
use domain::timestamp::Timestamp;
use proof::ProofCache;
use store::queue::{GetEntrantPage, GetQueue, GetQueueEntry, JoinQueue, Joined, QueueView};
use store::queue_excluded::{CountExclusion, ReadExclusions};
use store::ratelimit::SpendToken;

/// What the queue's handlers need.
pub struct QueueFnState<S> {
    pub store: S,
    pub verifier: TokenVerifier,
    pub signer: ReceiptSigner,
    /// The human check a join passes (Turnstile's siteverify, the widget's hostnames).
    pub human: HumanCheck,
    /// What proofs read, kept by the instance ([`ProofCache`]).
    pub proofs: ProofCache,
}

impl<S: Send + Sync + Clone + 'static> LocalState<S> for QueueFnState<S> {
    fn local(store: &S, process: &LocalProcess) -> Self {
        Self::new(
            store.clone(),
            process.verifier(),
            ReceiptSigner::random(),
            process.human_check(),
        )
    }
}

impl<S> QueueFnState<S> {
    pub fn new(
        store: S,
        verifier: TokenVerifier,
        signer: ReceiptSigner,
        human: HumanCheck,
    ) -> Self {
        Self {
            store,
            verifier,
            signer,
            human,
            proofs: ProofCache::default(),
        }
    }
}

impl<S: Send + Sync + 'static> Verifies for QueueFnState<S> {
    fn verifier(&self) -> &TokenVerifier {
        &self.verifier
    }
}

async fn line<S: GetQueue>(store: &S, pack_id: &PackId) -> Result<QueueView, ApiError> {
    store
        .get_queue(pack_id)
        .await?
        .ok_or_else(|| refused(ErrorCode::QueueNotFound))
}

/// The line, refused with `queue_not_closed` while its entrants are not committed.
pub(super) async fn committed_line<S: GetQueue>(
    store: &S,
    pack_id: &PackId,
) -> Result<QueueView, ApiError> {
    let view = line(store, pack_id).await?;
    if !view.state.committed() {
        return Err(refused(ErrorCode::QueueNotClosed));
    }
    Ok(view)
}

/// `GET /api/packs/{packId}/queue`: the line, public.
#[utoipa::path(
    get,
    path = "/api/packs/{packId}/queue",
    operation_id = "getQueue",
    tag = "Waiting room",
    summary = "A pack's waiting room, with its fairness record",
    description = "The pack's waiting room: when it opens and closes, its status (`upcoming`, \
`open`, `closed`, `drawn`), the SHA-256 of its secret seed and the drand quicknet round its draw \
will use (both fixed before it opens). At the close, `entrants` and `entrantsRoot` (a Merkle root \
of the sorted entry ids) appear with `committedAt`, at least 60 s before the round's randomness \
exists (a close too late for the terms' round moves the round to 5 minutes after it, never \
draws with a round that may have been out); once drawn, the beacon's \
`randomness` and `signature` and the `seed`; `admittedThrough` is the last position admitted. \
From these and the entrants list anyone recomputes every position (docs/fairness.md, \
`scripts/verify-queue`). `receiptKey` checks the entries' receipts. Public; cacheable for a few \
seconds.",
    params(PackPath),
    security(),
    responses(
        (status = 200, description = "The waiting room.", body = QueueAnswer),
        (status = 404, description = "No such pack, or a pack without a waiting room \
(`queue_not_found`); or the id is not an id (`not_found`).", body = ErrorBody,
            example = json!(doc::error_example(ErrorCode::QueueNotFound, QUEUE_NOT_FOUND))),
        (status = 405, response = doc::MethodNotAllowed),
        (status = 500, response = doc::InternalError),
        (status = 503, response = doc::Unavailable),
    ),
)]
pub async fn get_queue<S: GetQueue>(
    State(state): State<Arc<QueueFnState<S>>>,
    Path(PackPath { pack_id }): Path<PackPath>,
) -> Result<Response, ApiError> {
    let view = line(&state.store, &pack_id).await?;
    let queue = QueueJson::of(
        &pack_id,
        &view,
        &state.signer.public_key(),
        Timestamp::now(),
    );
    Ok(json_response(StatusCode::OK, &QueueAnswer { queue }))
}

/// `POST /api/packs/{packId}/queue`: the fan joins the line.
#[utoipa::path(
    post,
    path = "/api/packs/{packId}/queue",
    operation_id = "joinQueue",
    tag = "Waiting room",
    summary = "Join a pack's waiting room",
    description = "Puts the signed-in fan in the pack's line, between `opensAt` (included) and \
`closesAt` (excluded). One entry per fan: joining again answers the same entry, 200 with \
`Idempotent-Replayed: true`. When you joined changes nothing: positions are drawn after the close. \
`entryId` is the fan's public name in the line; `receipt` the service's Ed25519 signature of \
`packId\\nentryId\\njoinedAt`, checked with the queue's `receiptKey`. No body.

A first join needs a human check: a Cloudflare Turnstile token in `Human-Check`, from a widget \
rendered with `action` `join_<packId>` (docs/human-check.md), solved since the line opened and \
within the last 300 s, used once; refused, 403 `human_check_failed` and nothing written. A fan \
who joined before is answered their entry without one.",
    params(PackPath, HumanCheckHeader),
    security(("sessionToken" = [])),
    responses(
        (status = 403, response = doc::HumanCheckFailed),
        (status = 201, description = "Joined: the new entry (`status` `waiting`).", body = EntryAnswer),
        (status = 200, description = "Joined before: the entry as it is, with \
`Idempotent-Replayed: true`.", body = EntryAnswer,
            headers(("Idempotent-Replayed" = inline(crate::openapi::headers::Replayed)))),
        (status = 404, description = "No such pack, or a pack without a waiting room \
(`queue_not_found`); or the id is not an id (`not_found`).", body = ErrorBody,
            example = json!(doc::error_example(ErrorCode::QueueNotFound, QUEUE_NOT_FOUND))),
        (status = 409, description = "Before `opensAt` (`queue_not_open`) or from `closesAt` on \
(`queue_closed`).", body = ErrorBody,
            examples(
                ("notOpen" = (value = json!(doc::error_example(ErrorCode::QueueNotOpen, NOT_OPEN)))),
                ("closed" = (value = json!(doc::error_example(ErrorCode::QueueClosed, CLOSED)))),
            )),
        doc::SignedIn,
    ),
)]
pub async fn join_queue<S: GetQueue + GetQueueEntry + JoinQueue + SpendToken + CountExclusion>(
    State(state): State<Arc<QueueFnState<S>>>,
    Path(PackPath { pack_id }): Path<PackPath>,
    Fan(identity): Fan,
    human: HumanCheckToken,
) -> Result<Response, ApiError> {
    // The fan's own entry read beside the line (one more half read unit on the fan's own key):
    // a fan who joined is answered it without a new check, so that a retry whose answer was
    // lost is not refused for a token it spent.
    let (view, joined) = tokio::join!(
        line(&state.store, &pack_id),
        state.store.queue_entry(&pack_id, &identity.user_id)
    );
    let view = view?;
    let now = Timestamp::now();
    match view.terms.phase_at(now) {
        Phase::Upcoming => return Err(refused(ErrorCode::QueueNotOpen)),
        Phase::Closed => return Err(refused(ErrorCode::QueueClosed)),
        Phase::Open if view.state.status != StoredStatus::Open => {
            return Err(refused(ErrorCode::QueueClosed));
        }
        Phase::Open => {}
    }
    if let Some(entry) = joined? {
        return Ok(entry_answer(&entry, &view, now, true));
    }
    let door = Door::Join(pack_id.clone());
    let checked = verify_human(
        &state.human,
        &state.store,
        &human,
        &door,
        Some(view.terms.opens_at),
    );
    if let Err(refusal) = checked.await {
        if refusal.code() == ErrorCode::HumanCheckFailed {
            // Counted for the drop's report, never dropped silently; a count that cannot be
            // written is logged, and the refusal stands.
            let counted = state
                .store
                .count_exclusion(&pack_id, Exclusion::HumanCheckFailed)
                .await;
            if let Err(error) = counted {
                tracing::warn!(%error, "a refused join was not counted");
            }
        }
        return Err(refusal);
    }
    let entry = QueueEntry::new(pack_id, identity.user_id, now, &state.signer);
    Ok(match state.store.join_queue(&entry).await? {
        Joined::New(entry) => {
            tracing::info!(pack_id = %entry.pack_id, entry_id = %entry.entry_id, "joined");
            entry_answer(&entry, &view, now, false)
        }
        Joined::Replayed(entry) => entry_answer(&entry, &view, now, true),
    })
}

/// A join's answer: 201 with the new entry, or 200 with the fan's entry as it is, replayed.
fn entry_answer(entry: &QueueEntry, view: &QueueView, now: Timestamp, replayed: bool) -> Response {
    let status = if replayed {
        StatusCode::OK
    } else {
        StatusCode::CREATED
    };
    let mut response = json_response(
        status,
        &EntryAnswer {
            entry: EntryJson::of(entry, Some(view), now),
        },
    );
    if replayed {
        mark_replayed(&mut response);
    }
    response
}

pub(super) async fn own_entry<S: GetQueueEntry>(
    store: &S,
    pack_id: &PackId,
    fan: &domain::ids::UserId,
) -> Result<QueueEntry, ApiError> {
    store
        .queue_entry(pack_id, fan)
        .await?
        .ok_or_else(|| refused(ErrorCode::QueueEntryNotFound))
}

/// `GET /api/packs/{packId}/queue/me`: the fan's entry.
#[utoipa::path(
    get,
    path = "/api/packs/{packId}/queue/me",
    operation_id = "getMyQueueEntry",
    tag = "Waiting room",
    summary = "The signed-in fan's entry in a pack's waiting room",
    description = "The fan's entry: `waiting` (before the draw), `queued` (drawn, with `position` \
and `estimatedAdmissionAt`, the latest they may expect admission as things stand), `admitted` \
(with `passExpiresAt`: start purchases before it), `lapsed` (the window passed unused), `done` \
(bought as allowed) or `sold_out`.",
    params(PackPath),
    security(("sessionToken" = [])),
    responses(
        (status = 200, description = "The fan's entry.", body = EntryAnswer),
        (status = 404, description = "The fan did not join (`queue_entry_not_found`); no such \
pack or no waiting room (`queue_not_found`); or the id is not an id (`not_found`).",
            body = ErrorBody,
            examples(
                ("notJoined" = (value = json!(doc::error_example(ErrorCode::QueueEntryNotFound, ENTRY_NOT_FOUND)))),
                ("noQueue" = (value = json!(doc::error_example(ErrorCode::QueueNotFound, QUEUE_NOT_FOUND)))),
            )),
        doc::SignedIn,
    ),
)]
pub async fn my_queue_entry<S: GetQueue + GetQueueEntry>(
    State(state): State<Arc<QueueFnState<S>>>,
    Path(PackPath { pack_id }): Path<PackPath>,
    Fan(identity): Fan,
) -> Result<Response, ApiError> {
    let (view, entry) = tokio::join!(
        line(&state.store, &pack_id),
        own_entry(&state.store, &pack_id, &identity.user_id)
    );
    let (view, entry) = (view?, entry?);
    Ok(json_response(
        StatusCode::OK,
        &EntryAnswer {
            entry: EntryJson::of(&entry, Some(&view), Timestamp::now()),
        },
    ))
}

/// `?cursor=` of the entrants list: the page to read, as the previous page's `nextCursor` gave
/// it (absent: the first).
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
pub struct EntrantsCursor {
    /// The previous page's `nextCursor`.
    #[param(pattern = "^[0-9]{1,6}$")]
    pub cursor: Option<String>,
}

const NOT_A_CURSOR: &str = "The cursor is not one this list gave.";

fn not_a_cursor() -> ApiError {
    ApiError::refused(ErrorCode::InvalidCursor, NOT_A_CURSOR)
}

/// The page `?cursor=` names.
pub struct EntrantsPage(u32);

impl<St: Send + Sync> FromRequestParts<St> for EntrantsPage {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &St) -> Result<Self, ApiError> {
        match QueryParams::of(parts).single("cursor")? {
            None => Ok(Self(0)),
            Some(cursor) => (cursor.len() <= 6 && cursor.bytes().all(|b| b.is_ascii_digit()))
                .then(|| cursor.parse().ok())
                .flatten()
                .map(Self)
                .ok_or_else(not_a_cursor),
        }
    }
}

/// `GET /api/packs/{packId}/queue/entrants`: the committed entry ids, sorted, a page at a time.
#[utoipa::path(
    get,
    path = "/api/packs/{packId}/queue/entrants",
    operation_id = "listQueueEntrants",
    tag = "Waiting room",
    summary = "The entry ids of a closed waiting room, sorted",
    description = "Every entry id committed at the close, in ascending order, up to 2,048 a page: \
from them anyone rebuilds `entrantsRoot` and, after the draw, every position. Public; cacheable.",
    params(PackPath, EntrantsCursor),
    security(),
    responses(
        (status = 200, description = "A page of entry ids.", body = EntrantsAnswer),
        (status = 400, description = "A cursor this list did not give (`invalid_cursor`), or \
given twice (`invalid_query`).", body = ErrorBody,
            example = json!(doc::error_example(ErrorCode::InvalidCursor, NOT_A_CURSOR))),
        (status = 404, description = "No such pack or no waiting room (`queue_not_found`); or \
the id is not an id (`not_found`).", body = ErrorBody,
            example = json!(doc::error_example(ErrorCode::QueueNotFound, QUEUE_NOT_FOUND))),
        (status = 409, description = "The line has not closed and committed its entrants \
(`queue_not_closed`).", body = ErrorBody,
            example = json!(doc::error_example(ErrorCode::QueueNotClosed, NOT_CLOSED))),
        (status = 405, response = doc::MethodNotAllowed),
        (status = 500, response = doc::InternalError),
        (status = 503, response = doc::Unavailable),
    ),
)]
pub async fn list_queue_entrants<S: GetQueue + GetEntrantPage>(
    State(state): State<Arc<QueueFnState<S>>>,
    Path(PackPath { pack_id }): Path<PackPath>,
    EntrantsPage(page): EntrantsPage,
) -> Result<Response, ApiError> {
    let view = committed_line(&state.store, &pack_id).await?;
    let pages = view.state.entrant_pages.unwrap_or(0);
    if page > 0 && page >= pages {
        return Err(not_a_cursor());
    }
    let entrants = match state.store.entrant_page(&pack_id, page).await? {
        Some(found) => found.ids,
        None if pages == 0 => Vec::new(),
        None => {
            return Err(ApiError::Internal {
                detail: format!("entrant page {page} of {pages} missing"),
            });
        }
    };
    Ok(json_response(
        StatusCode::OK,
        &EntrantsAnswer {
            entrants,
            next_cursor: (page + 1 < pages).then(|| (page + 1).to_string()),
        },
    ))
}

/// `GET /api/packs/{packId}/queue/report`: the line's record, after the sale.
#[utoipa::path(
    get,
    path = "/api/packs/{packId}/queue/report",
    operation_id = "getQueueReport",
    tag = "Waiting room",
    summary = "A waiting room's report, after the sale",
    description = "Once the sale through the line is over (sold out, or every fan admitted): how \
many joined, were admitted, bought and lapsed, the units sold and the last position admitted; \
and `excluded`, the fans kept out of the line by reason (`human_check_failed`: a first join the \
human check refused, counted once per refusal, so a fan refused twice counts twice). Public; \
cacheable.",
    params(PackPath),
    security(),
    responses(
        (status = 200, description = "The report.", body = ReportAnswer),
        (status = 404, description = "No such pack or no waiting room (`queue_not_found`); or \
the id is not an id (`not_found`).", body = ErrorBody,
            example = json!(doc::error_example(ErrorCode::QueueNotFound, QUEUE_NOT_FOUND))),
        (status = 409, description = "The sale through the line is not over \
(`queue_not_finished`).", body = ErrorBody,
            example = json!(doc::error_example(ErrorCode::QueueNotFinished, NOT_FINISHED))),
        (status = 405, response = doc::MethodNotAllowed),
        (status = 500, response = doc::InternalError),
        (status = 503, response = doc::Unavailable),
    ),
)]
pub async fn queue_report<S: GetQueue + ReadExclusions>(
    State(state): State<Arc<QueueFnState<S>>>,
    Path(PackPath { pack_id }): Path<PackPath>,
) -> Result<Response, ApiError> {
    let view = line(&state.store, &pack_id).await?;
    let s = &view.state;
    if s.status != StoredStatus::Finished {
        return Err(refused(ErrorCode::QueueNotFinished));
    }
    let settled = view.settled.ok_or_else(|| ApiError::Internal {
        detail: "a finished line without its units settled".into(),
    })?;
    let report = ReportJson {
        entrants: s.entrants.unwrap_or(0),
        admitted: s.admitted_through,
        bought: s.bought,
        lapsed: s.lapsed,
        units_sold: settled.sold,
        last_admitted_position: s.admitted_through,
        units_left: settled.left,
        excluded: state
            .store
            .exclusions(&pack_id)
            .await?
            .into_iter()
            .map(|(reason, count)| (reason.as_str().to_owned(), count))
            .collect(),
    };
    Ok(json_response(StatusCode::OK, &ReportAnswer { report }))
}
