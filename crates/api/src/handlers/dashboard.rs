//! `GET /api/dashboard` (the `dashboard` function): the app's home screen in one call. Its
//! parts are read at once (`tokio::join!`); a part whose read fails is `null`, logged, and the
//! others are answered.
//!
//! Two parts are built apart and reach the dashboard as functions set in its state: the fan's
//! active quests ([`QuestsPart`], [`quests_part`] over the quests' store) and the fan's entry in
//! a pack's queue ([`QueuePart`], [`queue_part`] over the queue's store). Unset, `quests` is
//! `null` and every drop's `queue` is `null`.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde::Serialize;
use utoipa::ToSchema;

use crate::auth::TokenVerifier;
use crate::http::error::ApiError;
use crate::http::extract::{Fan, handler_state};
use crate::http::response::json_response;
use crate::http::routes::{LocalProcess, LocalState};
use crate::openapi::responses as doc;
use crate::views::leaderboards::StandingJson;
use crate::views::purchase::PurchaseJson;
use crate::views::quests::{QuestJson, active_quests};
use crate::views::queue::EntryJson;
use domain::cash::Money;
use domain::ids::{PackId, UserId};
use domain::leaderboards::Board;
use domain::packs::document::PackDocument;
use domain::packs::listing::{PackFilter, PageRequest};
use domain::purchases::PurchaseStatus;
use domain::purchases::mine::{MyPurchasesQuery, StatusFilter};
use domain::timestamp::Timestamp;
use store::StoreError;
use store::cash::GetBalances;
use store::leaderboards::GetStanding;
use store::packs::{ListActivePacks, ListUpcomingPacks};
use store::purchases::{ListMyItems, ListMyPurchases};
use store::quests::{GetClaims, ListQuests};
use store::queue::{GetQueue, GetQueueEntry};

/// At most this many unopened purchases (`completed`: paid, not opened), live drops and
/// upcoming drops.
pub const UNOPENED_SHOWN: usize = 5;
pub const LIVE_SHOWN: usize = 10;
pub const UPCOMING_SHOWN: usize = 5;

/// A part's answer, as the JSON the dashboard shows.
pub type PartFuture = Pin<Box<dyn Future<Output = Result<serde_json::Value, StoreError>> + Send>>;
/// The fan's active quests with their progress (a JSON array, as `GET /api/quests` lists them).
pub type QuestsPart = Arc<dyn Fn(UserId, Timestamp) -> PartFuture + Send + Sync>;
/// The fan's status in a pack's queue (`null` for a pack without one).
pub type QueuePart = Arc<dyn Fn(UserId, PackId, Timestamp) -> PartFuture + Send + Sync>;

/// The quests part over `store`: the active quests with the fan's progress, as `GET
/// /api/quests` lists them ([`active_quests`]).
pub fn quests_part<Q>(store: Q) -> QuestsPart
where
    Q: ListQuests + GetClaims + ListMyItems + Clone + 'static,
{
    Arc::new(move |user_id, now| {
        let store = store.clone();
        Box::pin(async move {
            let quests = active_quests(&store, &user_id, now).await?;
            let listed: Vec<QuestJson<'_>> = quests
                .iter()
                .map(|(quest, progress)| QuestJson::of(quest, *progress, now))
                .collect();
            serde_json::to_value(listed).map_err(|e| StoreError::internal_from("quests", e))
        })
    })
}

/// The queue part over `store`: the fan's entry in the pack's line as `GET
/// /api/packs/{packId}/queue/me` answers it ([`EntryJson::of`]), or `null` when the fan has none
/// (no queue, or not joined: the drop's `queue` terms tell which). One `GetItem` of the fan's own
/// entry key per drop, and for a fan who joined the line's read that `queue/me` makes.
pub fn queue_part<Q>(store: Q) -> QueuePart
where
    Q: GetQueueEntry + GetQueue + Clone + 'static,
{
    Arc::new(move |user_id, pack_id, now| {
        let store = store.clone();
        Box::pin(async move {
            let Some(entry) = store.queue_entry(&pack_id, &user_id).await? else {
                return Ok(serde_json::Value::Null);
            };
            let view = store.get_queue(&pack_id).await?;
            serde_json::to_value(EntryJson::of(&entry, view.as_ref(), now))
                .map_err(|e| StoreError::internal_from("queue entry", e))
        })
    })
}

pub struct DashboardState<S> {
    pub store: S,
    pub verifier: TokenVerifier,
    pub quests: Option<QuestsPart>,
    pub queue: Option<QueuePart>,
}

handler_state!(DashboardState: verifier);

impl<
    S: ListQuests + GetClaims + ListMyItems + GetQueueEntry + GetQueue + Send + Sync + Clone + 'static,
> LocalState<S> for DashboardState<S>
{
    fn local(store: &S, process: &LocalProcess) -> Self {
        Self {
            store: store.clone(),
            verifier: process.verifier(),
            quests: Some(quests_part(store.clone())),
            queue: Some(queue_part(store.clone())),
        }
    }
}

#[derive(Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = DashboardCash)]
struct CashJson {
    balances: Vec<Money>,
}

/// A live or upcoming pack, and the fan's place in its queue.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = Drop)]
struct DropJson {
    /// The pack as `GET /api/packs` lists it.
    #[schema(value_type = crate::views::pack::PackJson)]
    pack: serde_json::Value,
    /// `live`: on sale now; `upcoming`: its sale starts later.
    #[schema(pattern = "^(live|upcoming)$")]
    phase: &'static str,
    /// The fan's entry in the pack's queue, as `GET /api/packs/{packId}/queue/me` answers it;
    /// null when the pack has none or the fan did not join.
    #[schema(value_type = Option<EntryJson>, required)]
    queue: serde_json::Value,
}

/// The home screen: each part null when it could not be read.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = Dashboard)]
struct DashboardJson<'a> {
    #[schema(required)]
    cash: Option<CashJson>,
    /// Up to 5 paid, unopened purchases, newest first.
    #[schema(max_items = 5, required)]
    unopened: Option<Vec<PurchaseJson<'a>>>,
    /// The active quests with the fan's progress, as `GET /api/quests` lists them.
    #[schema(value_type = Option<Vec<QuestJson>>, required)]
    quests: Option<serde_json::Value>,
    /// The live packs (up to 10, latest sale first), then the upcoming (up to 5, soonest first).
    #[schema(required)]
    drops: Option<Vec<DropJson>>,
    /// The fan's place on the global board.
    #[schema(required)]
    rank: Option<StandingJson>,
}

/// The value of a part, `None` (logged) when its read failed.
fn part<T>(name: &str, result: Result<T, StoreError>) -> Option<T> {
    result
        .inspect_err(|error| {
            tracing::error!(part = name, error = %error.detail(), "a dashboard part failed");
        })
        .ok()
}

fn pack_value(document: &PackDocument, now: Timestamp) -> Result<serde_json::Value, StoreError> {
    let mut text = String::new();
    document.write_json(now, &mut text);
    serde_json::from_str(&text).map_err(|e| StoreError::internal_from("a pack's document", e))
}

/// The drops with each one's queue status (asked at once, a failed one `null`).
async fn drops<S>(
    state: &DashboardState<S>,
    user_id: &UserId,
    live: Vec<PackDocument>,
    upcoming: Vec<PackDocument>,
    now: Timestamp,
) -> Result<Vec<DropJson>, StoreError> {
    let mut drops = Vec::new();
    let mut asked = tokio::task::JoinSet::new();
    let phases = live
        .iter()
        .map(|pack| (pack, "live"))
        .chain(upcoming.iter().map(|pack| (pack, "upcoming")));
    for (index, (document, phase)) in phases.enumerate() {
        let pack = pack_value(document, now)?;
        let pack_id = pack
            .get("id")
            .and_then(|id| id.as_str())
            .and_then(|id| PackId::parse(id).ok());
        if let (Some(queue), Some(pack_id)) = (&state.queue, pack_id) {
            let status = queue(user_id.clone(), pack_id, now);
            asked.spawn(async move { (index, status.await) });
        }
        drops.push(DropJson {
            pack,
            phase,
            queue: serde_json::Value::Null,
        });
    }
    for (index, status) in asked.join_all().await {
        if let Some(status) = part("queue", status) {
            drops[index].queue = status;
        }
    }
    Ok(drops)
}

/// `GET /api/dashboard`: the fan's home screen.
#[utoipa::path(
    get,
    path = "/api/dashboard",
    operation_id = "getDashboard",
    tag = "Me",
    summary = "The signed-in fan's home screen",
    description = "In one call: the caller's Cash balances (`cash`), up to 5 of their paid, \
unopened purchases (`unopened`), the active quests with their progress (`quests`), the live and \
upcoming packs with the caller's queue status where a pack has a queue (`drops`) and their place \
on the global leaderboard (`rank`). The parts are read at once; a part that could not be read is \
`null` and the others are answered.",
    security(("sessionToken" = [])),
    responses(
        (status = 200, description = "The home screen.", body = DashboardJson,
            example = json!({
                "cash": {"balances": [{"amount": 9002, "currency": "USD"}]},
                "unopened": [],
                "quests": null,
                "drops": [],
                "rank": {"board": "global", "score": 1260, "rank": 42, "percentile": null}
            })),
        doc::SignedIn,
    ),
)]
pub async fn get_dashboard<S>(
    State(state): State<Arc<DashboardState<S>>>,
    Fan(identity): Fan,
) -> Result<Response, ApiError>
where
    S: GetBalances + ListMyPurchases + ListActivePacks + ListUpcomingPacks + GetStanding,
{
    let now = Timestamp::now();
    let user_id = &identity.user_id;
    let store = &state.store;
    let unopened = MyPurchasesQuery {
        user_id: user_id.clone(),
        status: StatusFilter::parse(PurchaseStatus::Completed.as_str()),
        pack_id: None,
        limit: UNOPENED_SHOWN,
        after: None,
        now,
    };
    let live = PageRequest {
        now,
        limit: LIVE_SHOWN,
        after: None,
        filter: PackFilter::default(),
    };
    let quests = async {
        match &state.quests {
            Some(quests) => part("quests", quests(user_id.clone(), now).await),
            None => None,
        }
    };
    let (balances, unopened, live, upcoming, standing, quests) = tokio::join!(
        store.get_balances(user_id),
        store.list_my_purchases(&unopened),
        store.list_active_packs(&live),
        store.list_upcoming_packs(now, UPCOMING_SHOWN),
        store.get_standing(&Board::Global, user_id),
        quests,
    );
    let drops = match (part("live drops", live), part("upcoming drops", upcoming)) {
        (Some(live), Some(upcoming)) => part(
            "drops",
            drops(&state, user_id, live.packs, upcoming, now).await,
        ),
        _ => None,
    };
    let unopened = part("unopened", unopened);
    Ok(json_response(
        StatusCode::OK,
        &DashboardJson {
            cash: part("cash", balances).map(|balances| CashJson { balances }),
            unopened: unopened.as_ref().map(|page| {
                page.entries
                    .iter()
                    .map(|purchase| PurchaseJson::at(purchase, now))
                    .collect()
            }),
            quests,
            drops,
            rank: part("rank", standing)
                .map(|standing| StandingJson::of(&Board::Global, standing.as_ref())),
        },
    ))
}
