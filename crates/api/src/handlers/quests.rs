//! `GET /api/quests`, `GET /api/quests/{questId}` and `GET /api/me/rewards` (function `quests`:
//! reads only), and `POST /api/quests/{questId}/claim` (function `quest-claims`: the only one of
//! them that writes, and the only new function that may write `CASH#` and `CREDIT#quest:`).

use std::sync::Arc;

use axum::extract::{FromRequestParts, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::Response;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::http::error::{ApiError, ErrorBody, ErrorCode};
use crate::http::extract::{Fan, IdempotencyKey, Path, QueryParams};
use crate::http::paging::{MeCursor, PageJson, limit, list_key_after, next_cursor};
use crate::http::response::{json_response, mark_replayed};
use crate::openapi::responses as doc;
use crate::state::MeState;
use crate::views::quests::{QuestJson, RewardJson, active_quests, fan_items};
use domain::ids::{QuestId, UserId};
use domain::purchases::StartRefusal;
use domain::quests::{Claim, ClaimRefusal, Progress, Quest, check_claim, grant, progress};
use domain::timestamp::Timestamp;
use store::purchases::ListMyItems;
use store::quests::{ClaimError, ClaimQuest, Claimed, GetClaims, GetQuest, ListClaims, ListQuests};

#[derive(Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = QuestList)]
struct Quests<'a> {
    quests: Vec<QuestJson<'a>>,
}

#[derive(Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = QuestAnswer)]
struct OneQuest<'a> {
    quest: QuestJson<'a>,
}

#[derive(Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = ClaimAnswer)]
struct ClaimAnswer<'a> {
    reward: RewardJson<'a>,
}

#[derive(Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = MyRewardsPage)]
struct Rewards<'a> {
    rewards: Vec<RewardJson<'a>>,
}

/// `/api/quests/{questId}...`
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(rename_all = "camelCase", parameter_in = Path)]
pub struct QuestPath {
    /// The quest's `id`. A path segment that is not an id once percent-decoded (1-64 characters
    /// of `A-Z`, `a-z`, `0-9`, `_` and `-`) names no resource: 404 `not_found`.
    #[param(value_type = String, pattern = "^[A-Za-z0-9_-]{1,64}$", example = "first-pack")]
    pub quest_id: QuestId,
}

fn quest_not_found() -> ApiError {
    ApiError::refused(ErrorCode::QuestNotFound, "No quest has this id.")
}

/// `GET /api/quests`.
#[utoipa::path(
    get,
    path = "/api/quests",
    operation_id = "listQuests",
    tag = "Quests",
    summary = "List the active quests with the signed-in user's progress",
    description = "The quests on now (`startsAt` <= now < `endsAt`), by id, each with the \
caller's `progress`: computed at the request from the packs they opened and the items they own \
(an `open_packs` goal counts openings within the quest's window, also those made before the \
quest was published), `current` never above `target`.",
    security(("sessionToken" = [])),
    responses(
        (status = 200, description = "The active quests.", body = Quests),
        doc::SignedIn,
    ),
)]
pub async fn list_quests<S: ListQuests + GetClaims + ListMyItems>(
    State(state): State<Arc<MeState<S>>>,
    Fan(identity): Fan,
) -> Result<Response, ApiError> {
    let now = Timestamp::now();
    let quests = active_quests(&state.store, &identity.user_id, now).await?;
    Ok(json_response(
        StatusCode::OK,
        &Quests {
            quests: quests
                .iter()
                .map(|(quest, progress)| QuestJson::of(quest, *progress, now))
                .collect(),
        },
    ))
}

/// The quest `quest_id` with the fan's progress, or 404.
async fn quest_with_progress<S: GetQuest + GetClaims + ListMyItems>(
    store: &S,
    user_id: &UserId,
    quest_id: &QuestId,
) -> Result<(Quest, Progress), ApiError> {
    let (quest, claim, items) = tokio::try_join!(
        store.get_quest(quest_id),
        store.get_claim(user_id, quest_id),
        fan_items(store, user_id)
    )?;
    let quest = quest.ok_or_else(quest_not_found)?;
    let progress = progress(&quest, &items, claim.is_some());
    Ok((quest, progress))
}

/// `GET /api/quests/{questId}`.
#[utoipa::path(
    get,
    path = "/api/quests/{questId}",
    operation_id = "getQuest",
    tag = "Quests",
    summary = "One quest with the signed-in user's progress",
    description = "Any quest seeded, active or not, with the caller's `progress`.",
    security(("sessionToken" = [])),
    params(QuestPath),
    responses(
        (status = 200, description = "The quest.", body = OneQuest),
        (status = 404, response = doc::QuestNotFound),
        doc::SignedIn,
    ),
)]
pub async fn get_quest<S: GetQuest + GetClaims + ListMyItems>(
    State(state): State<Arc<MeState<S>>>,
    Fan(identity): Fan,
    Path(QuestPath { quest_id }): Path<QuestPath>,
) -> Result<Response, ApiError> {
    let (quest, progress) = quest_with_progress(&state.store, &identity.user_id, &quest_id).await?;
    Ok(json_response(
        StatusCode::OK,
        &OneQuest {
            quest: QuestJson::of(&quest, progress, Timestamp::now()),
        },
    ))
}

fn claim_refused(refusal: ClaimRefusal) -> ApiError {
    match refusal {
        ClaimRefusal::NotCompleted => ApiError::refused(
            ErrorCode::QuestNotCompleted,
            "This quest is not completed yet: see its progress.",
        ),
        ClaimRefusal::Ended => ApiError::refused(
            ErrorCode::QuestEnded,
            "This quest ended more than 7 days ago: its reward can no longer be claimed.",
        ),
    }
}

/// A pack reward's pack that cannot be had now: the quest stays claimable.
fn pack_refused(refusal: StartRefusal) -> ApiError {
    match refusal {
        StartRefusal::SoldOut => ApiError::refused(
            ErrorCode::SoldOut,
            "This reward's pack is sold out: claim again when units come back, until the quest ends.",
        ),
        _ => ApiError::refused(
            ErrorCode::NotOnSale,
            "This reward's pack is not on sale now: claim it again while it is.",
        ),
    }
}

/// `POST /api/quests/{questId}/claim`.
#[utoipa::path(
    post,
    path = "/api/quests/{questId}/claim",
    operation_id = "claimQuest",
    tag = "Quests",
    summary = "Claim a completed quest's reward",
    description = "Gives a completed quest's reward to the caller, exactly once. A Cash reward: \
the claim, the ledger credit (`type: \"credit\"`, its `questId` the quest's) and the balance are \
written in one transaction, so any number of concurrent claims credit once. A pack reward: the \
claim, a unit of the pack's supply and a purchase of it at price 0, already paid (`completed`: \
open it with `POST /api/packs/{packId}/purchases/{purchaseId}/open`, its id the answer's \
`purchaseId`), in one transaction; it does not count towards the pack's `maxPerUser`. When no \
unit is left (409 `sold_out`) or the pack is not on sale (409 `not_on_sale`) nothing is written \
and the quest stays claimable until it ends.

Checked in this order: the path (404 `not_found`), the token (401), `Idempotency-Key` (400); the \
quest (404 `quest_not_found`); a quest claimed before answers that claim again, with \
`Idempotent-Replayed: true` (whatever the key); more than 7 days after `endsAt` (410 \
`quest_ended`); not completed (409 `quest_not_completed`); then the key, when it claimed another \
quest (422 `idempotency_key_reused`); then a pack reward's supply (409 `sold_out`, \
`not_on_sale`): nothing is written on any refusal.",
    security(("sessionToken" = [])),
    params(
        QuestPath,
        ("Idempotency-Key" = String, Header,
            description = "A unique string per claim the client means to make: 1-255 visible \
ASCII characters (`!` to `~`), sent once. Retrying with the same key is safe.",
            min_length = 1, max_length = 255, pattern = "^[!-~]{1,255}$",
            example = "3f2b9c1e-6d4a-4b8e-9f21-7c5a0d8e1b43"),
    ),
    responses(
        (status = 201, description = "The reward, claimed (also on a replay, with \
`Idempotent-Replayed: true`).",
            body = ClaimAnswer,
            headers(("Idempotent-Replayed" = inline(crate::openapi::headers::Replayed)))),
        (status = 400, response = doc::BadRequest),
        (status = 404, response = doc::QuestNotFound),
        (status = 409, description = "The quest is not completed (`quest_not_completed`), or its \
pack reward's pack has no unit left (`sold_out`) or is not on sale (`not_on_sale`).",
            body = ErrorBody,
            examples(
                ("quest_not_completed" = (value = json!(doc::error_example(ErrorCode::QuestNotCompleted, "This quest is not completed yet: see its progress.")))),
                ("sold_out" = (value = json!(doc::error_example(ErrorCode::SoldOut, "This reward's pack is sold out: claim again when units come back, until the quest ends.")))),
                ("not_on_sale" = (value = json!(doc::error_example(ErrorCode::NotOnSale, "This reward's pack is not on sale now: claim it again while it is.")))),
            )),
        (status = 410, description = "The quest ended more than 7 days ago (`quest_ended`).",
            body = ErrorBody,
            example = json!(doc::error_example(ErrorCode::QuestEnded, "This quest ended more than 7 days ago: its reward can no longer be claimed."))),
        (status = 422, description = "This `Idempotency-Key` claimed another quest \
(`idempotency_key_reused`).",
            body = ErrorBody,
            example = json!(doc::error_example(ErrorCode::IdempotencyKeyReused, "This Idempotency-Key was used to claim another quest."))),
        doc::SignedIn,
    ),
)]
pub async fn claim_quest<S: GetQuest + GetClaims + ListMyItems + ClaimQuest>(
    State(state): State<Arc<MeState<S>>>,
    Path(QuestPath { quest_id }): Path<QuestPath>,
    Fan(identity): Fan,
    IdempotencyKey(key): IdempotencyKey,
) -> Result<Response, ApiError> {
    let now = Timestamp::now();
    let user_id = &identity.user_id;
    let (quest, progress) = quest_with_progress(&state.store, user_id, &quest_id).await?;
    let grant = grant(&quest, user_id);
    let claim = Claim::new(&quest, user_id, &key, &grant, now);
    // A claim made answers again before any rule: the reward is the fan's whatever came since.
    if !progress.claimed {
        check_claim(&quest, &progress, now).map_err(claim_refused)?;
    }
    let (claim, replayed) = match state.store.claim_quest(&claim, &grant).await {
        Ok(Claimed::Created(claim)) => {
            tracing::info!(quest_id = %claim.quest_id, "quest claimed");
            (claim, false)
        }
        Ok(Claimed::Repeated(claim)) => (claim, true),
        Err(ClaimError::KeyReused) => {
            return Err(ApiError::refused(
                ErrorCode::IdempotencyKeyReused,
                "This Idempotency-Key was used to claim another quest.",
            ));
        }
        Err(ClaimError::BalanceFull) => {
            return Err(ApiError::Internal {
                detail: "a quest credit would pass the largest balance".into(),
            });
        }
        Err(ClaimError::Pack(refusal)) => return Err(pack_refused(refusal)),
        Err(ClaimError::Store(error)) => return Err(error.into()),
    };
    let mut response = json_response(
        StatusCode::CREATED,
        &ClaimAnswer {
            reward: RewardJson::of(&claim),
        },
    );
    if replayed {
        mark_replayed(&mut response);
    }
    Ok(response)
}

/// `{"rewards": [...], "nextCursor": ...}`.
type MyRewardsPage<'a> = PageJson<Rewards<'a>>;

/// `?limit=&cursor=`.
pub struct RewardsQuery {
    limit: usize,
    cursor: Option<String>,
}

impl<St: Send + Sync> FromRequestParts<St> for RewardsQuery {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &St) -> Result<Self, ApiError> {
        let query = QueryParams::of(parts);
        Ok(Self {
            limit: limit(&query, DEFAULT_REWARDS_LIMIT)?,
            cursor: query.single("cursor")?,
        })
    }
}

const DEFAULT_REWARDS_LIMIT: usize = 20;

/// The query of `GET /api/me/rewards`.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
pub struct MyRewardsLimit {
    /// Rewards per page.
    #[param(minimum = 1, maximum = 100, default = json!(DEFAULT_REWARDS_LIMIT))]
    pub limit: Option<u32>,
}

/// `GET /api/me/rewards?limit=&cursor=`.
#[utoipa::path(
    get,
    path = "/api/me/rewards",
    operation_id = "listMyRewards",
    tag = "Quests",
    summary = "List the rewards the signed-in user claimed",
    description = "The caller's claimed rewards, newest first (then quest id, descending). \
Pages: pass `nextCursor` back as `cursor` with the same token (another user's cursor is a 400 \
`invalid_cursor`); `nextCursor` is null on the last page.",
    security(("sessionToken" = [])),
    params(MyRewardsLimit, MeCursor),
    responses(
        (status = 200, description = "A page of the caller's rewards.", body = MyRewardsPage),
        (status = 400, response = doc::BadRequest),
        doc::SignedIn,
    ),
)]
pub async fn my_rewards<S: ListClaims>(
    State(state): State<Arc<MeState<S>>>,
    Fan(identity): Fan,
    query: RewardsQuery,
) -> Result<Response, ApiError> {
    let scope = ["rewards", identity.user_id.as_str()];
    let after = list_key_after(&state.cursors, query.cursor.as_deref(), &scope)?;
    let page = state
        .store
        .list_claims(&identity.user_id, query.limit, after.as_deref())
        .await?;
    Ok(json_response(
        StatusCode::OK,
        &PageJson {
            entries: Rewards {
                rewards: page.entries.iter().map(RewardJson::of).collect(),
            },
            next_cursor: next_cursor(&state.cursors, &scope, page.next.as_deref()),
        },
    ))
}
