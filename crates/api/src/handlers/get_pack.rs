//! `GET /api/packs/{packId}`: one pack with its items and its fairness commitment. Public.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;

use crate::http::error::{ApiError, ErrorBody, ErrorCode};
use crate::http::extract::{PackPath, Path};
use crate::http::refusals::pack_not_found;
use crate::http::response::json_text_response;
use crate::http::routes::{LocalProcess, LocalState};
use crate::openapi::schemas::with_properties;
use crate::openapi::{examples, responses as doc};
use crate::views::pack::PackJson;
use domain::ids::PackId;
use domain::packs::document::PackDocument;
use domain::packs::draw::ServerSeed;
use domain::packs::{MAX_ITEMS, PackFairness, PackItem, PackStatus};
use domain::timestamp::Timestamp;
use store::StoreError;
use store::packs::{GetPack, StoredPack};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ArrayBuilder, Ref, Schema};
use utoipa::{PartialSchema, ToSchema};

/// What the get-pack handler needs.
pub struct GetPackState<S> {
    pub store: S,
    /// Packs this instance read lately.
    pub recent: RecentPacks,
}

impl<S: Send + Sync + Clone + 'static> LocalState<S> for GetPackState<S> {
    fn local(store: &S, _process: &LocalProcess) -> Self {
        Self {
            store: store.clone(),
            recent: RecentPacks::default(),
        }
    }
}

/// Packs an instance answers from memory for a few seconds: a crowd refreshing a pack during a
/// drop then reads its pack and draw items at most once per instance per period, where each
/// request would otherwise read both (BENCHMARKS.md, capacity). Public data only; a draft or
/// unknown id is kept as such too, so that a flood of them reads no more.
#[derive(Default)]
pub struct RecentPacks {
    keep_for: Duration,
    packs: Mutex<HashMap<String, Kept>>,
}

/// When a pack was read, and what was read (`None`: a draft or unknown id).
type Kept = (Instant, Option<Arc<ReadPack>>);

/// A pack that is not a draft, rendered once per read: the pack as listed (whose countdowns are
/// written at each answer) and its items' JSON, with what its fairness follows from.
struct ReadPack {
    document: PackDocument,
    items: String,
    seed: ServerSeed,
    sale_ends_at: Option<Timestamp>,
}

impl ReadPack {
    fn of(stored: StoredPack) -> Self {
        Self {
            document: PackDocument::of(&stored.pack),
            items: serde_json::to_string(&stored.pack.items).expect("items always serialise"),
            seed: stored.seed,
            sale_ends_at: stored.pack.sale_ends_at,
        }
    }

    /// `{"pack": ...}` answered at `now`: the pack as listed, then `items` and `fairness`.
    fn answer(&self, now: Timestamp) -> String {
        let fairness = PackFairness::at(&self.seed, self.sale_ends_at, now);
        let fairness = serde_json::to_string(&fairness).expect("fairness always serialises");
        let mut out = String::with_capacity(
            "{\"pack\":,\"items\":,\"fairness\":}".len()
                + self.document.json_len(now)
                + self.items.len()
                + fairness.len(),
        );
        out.push_str("{\"pack\":");
        self.document.write_json(now, &mut out);
        // Reopen the pack's object for its detail.
        out.pop();
        out.push_str(",\"items\":");
        out.push_str(&self.items);
        out.push_str(",\"fairness\":");
        out.push_str(&fairness);
        out.push_str("}}");
        out
    }
}

/// How long a get-pack instance answers a pack from memory: as long as a cache in front may keep
/// the answer (`Cache-Control: max-age=5`), so a fan's figure lags by at most twice that more.
pub const KEEP_PACKS_FOR: Duration = Duration::from_secs(5);

/// The most packs kept at once: ids are the client's to choose, so memory stays bounded.
const MAX_RECENT_PACKS: usize = 1000;

impl RecentPacks {
    /// Keeps each pack read for `keep_for` (zero: reads every time).
    pub fn keeping(keep_for: Duration) -> Self {
        Self {
            keep_for,
            packs: Mutex::default(),
        }
    }

    async fn get<S: GetPack>(
        &self,
        store: &S,
        pack_id: &PackId,
    ) -> Result<Option<Arc<ReadPack>>, StoreError> {
        let lock = || self.packs.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((read_at, stored)) = lock().get(pack_id.as_str())
            && read_at.elapsed() < self.keep_for
        {
            return Ok(stored.clone());
        }
        let read = store
            .get_pack(pack_id)
            .await?
            .filter(|stored| stored.pack.status != PackStatus::Draft)
            .map(|stored| Arc::new(ReadPack::of(stored)));
        if !self.keep_for.is_zero() {
            let mut packs = lock();
            if packs.len() >= MAX_RECENT_PACKS {
                packs.clear();
            }
            packs.insert(pack_id.to_string(), (Instant::now(), read.clone()));
        }
        Ok(read)
    }
}

// The schema of `ReadPack::answer`'s text.
#[derive(ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PackAnswer {
    pub pack: PackDetail,
}

/// The pack as listed, plus `items` and `fairness`.
pub struct PackDetail;

/// Every field of the pack as listed as one object, plus `items` and `fairness`.
impl PartialSchema for PackDetail {
    fn schema() -> RefOr<Schema> {
        let items = ArrayBuilder::new()
            .items(Ref::from_schema_name(PackItem::name()))
            .max_items(Some(MAX_ITEMS))
            .description(Some(
                "The content pool, in the order the draw uses; every rarity of `odds` has at \
                 least one item.",
            ));
        with_properties(
            PackJson::schema(),
            [
                ("items", items.into()),
                (
                    "fairness",
                    Ref::from_schema_name(PackFairness::name()).into(),
                ),
            ],
        )
    }
}

impl ToSchema for PackDetail {
    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        schemas.push((PackItem::name().into(), PackItem::schema()));
        schemas.push((PackFairness::name().into(), PackFairness::schema()));
        PackJson::schemas(schemas);
        PackItem::schemas(schemas);
        PackFairness::schemas(schemas);
    }
}

/// A pack whose status is `active` or `archived`, whatever its sale window; a draft or an unknown
/// id is 404 `pack_not_found`. The server seed is shown once it is revealed.
#[utoipa::path(
    get,
    path = "/api/packs/{packId}",
    operation_id = "getPack",
    tag = "Packs",
    summary = "Get one pack, with its items and its fairness commitment",
    description = "The pack as listed, plus `items` (its content pool: what a slot of an opened \
pack can hold, in the order the draw uses) and `fairness`: the SHA-256 commitment to the pack's \
server seed, and the seed itself once it is revealed (`saleEndsAt` + 1 hour; `null` until then, \
and always for a pack without `saleEndsAt`). See docs/fairness.md.

Any pack whose status is `active` or `archived` is answered, whatever its sale window; a `draft` \
pack is answered as an unknown one (404 `pack_not_found`).",
    security(),
    params(PackPath),
    responses(
        (status = 200, description = "The pack.", body = PackAnswer,
            examples(("pack" = (value = json!(examples::pack_detail()))))),
        (status = 404, description = "No pack has this id, or the pack is a draft \
(`pack_not_found`); or the id is not an id (`not_found`).", body = ErrorBody,
            examples(
                ("unknown" = (value = json!(doc::error_example(ErrorCode::PackNotFound, "No pack has this id.")))),
                ("notAnId" = (value = json!(doc::not_an_id()))),
            )),
        (status = 405, response = doc::MethodNotAllowed),
        (status = 500, response = doc::InternalError),
        (status = 503, response = doc::Unavailable),
    ),
)]
pub async fn get_pack<S: GetPack>(
    State(state): State<Arc<GetPackState<S>>>,
    Path(PackPath { pack_id }): Path<PackPath>,
) -> Result<Response, ApiError> {
    let read = state
        .recent
        .get(&state.store, &pack_id)
        .await?
        .ok_or_else(pack_not_found)?;
    Ok(json_text_response(
        StatusCode::OK,
        read.answer(Timestamp::now()),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::packs::fixtures::sample_pack;
    use store::MemoryStore;
    use store::packs::seed;

    #[tokio::test]
    async fn an_instance_answers_a_pack_it_read_lately_and_reads_again_after() {
        let store = MemoryStore::default();
        let mut pack = sample_pack("p");
        seed(&store, &pack, Timestamp::now()).await.unwrap();
        let kept = RecentPacks::keeping(Duration::from_millis(300));
        let fresh = RecentPacks::default();
        let name = |read: Option<Arc<ReadPack>>| read.unwrap().document.to_pack().unwrap().name;
        let p = &PackId::parse("p").unwrap();
        assert_eq!(name(kept.get(&store, p).await.unwrap()), "Rookie Pack");
        pack.name = "Renamed".into();
        seed(&store, &pack, Timestamp::now()).await.unwrap();
        assert_eq!(name(kept.get(&store, p).await.unwrap()), "Rookie Pack");
        assert_eq!(name(fresh.get(&store, p).await.unwrap()), "Renamed");
        tokio::time::sleep(Duration::from_millis(350)).await;
        assert_eq!(name(kept.get(&store, p).await.unwrap()), "Renamed");
    }

    /// Issue 44: a pack kept in memory still counts down from each answer.
    #[test]
    fn a_kept_pack_counts_down_from_each_answer() {
        let mut pack = sample_pack("p");
        let starts = pack.sale_starts_at.unwrap();
        pack.sale_ends_at = starts.plus_seconds(60);
        let read = ReadPack::of(StoredPack {
            pack,
            seed: ServerSeed::generate(),
            revision: 1,
        });
        let answer = |now: Timestamp| -> serde_json::Value {
            let text = read.answer(now);
            serde_json::from_str(&text).unwrap()
        };
        let first = answer(starts.plus_seconds(-10).unwrap());
        let second = answer(starts.plus_seconds(30).unwrap());
        assert_eq!(
            (
                &first["pack"]["saleStartsInMs"],
                &first["pack"]["saleEndsInMs"]
            ),
            (&10_000.into(), &70_000.into())
        );
        assert_eq!(
            (
                &second["pack"]["saleStartsInMs"],
                &second["pack"]["saleEndsInMs"]
            ),
            (&0.into(), &30_000.into())
        );
        assert_eq!(first["pack"]["items"].as_array().map(Vec::len), Some(2));
        assert!(first["pack"]["fairness"]["serverSeedHash"].is_string());
    }
}
