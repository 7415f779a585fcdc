//! `GET /api/packs/{packId}/queue/me/proof` (the `queue` function): a fan's Merkle proof, from
//! their own entrant page and the line's entrants index alone (issue 42, G9). Entrant pages are
//! whole subtrees (`ENTRANTS_PAGE_SIZE` is a power of two), so a proof never needs another page:
//! whatever the pattern of requests, one costs at most two item reads (the index, about 9.6 KB at
//! 200,000 entrants, and one page of about 72 KB) and about 4,100 hashes. A warm instance keeps
//! the last indexes and pages it read ([`ProofCache`]): both never change once a line is closed,
//! and a drop's fans ask for proofs of the same few pages.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;

use super::{QueueFnState, committed_line, own_entry};
use crate::http::error::{ApiError, ErrorBody, ErrorCode};
use crate::http::extract::{Fan, PackPath, Path};
use crate::http::response::json_response;
use crate::openapi::responses as doc;
use crate::views::queue::{ENTRY_NOT_FOUND, NOT_CLOSED, ProofAnswer, ProofJson};
use domain::ids::PackId;
use domain::queue::merkle;
use domain::queue::state::{ENTRANTS_PAGE_SIZE, EntrantsIndex};
use store::StoreError;
use store::queue::{GetEntrantPage, GetEntrantsIndex, GetQueue, GetQueueEntry};

/// Indexes an instance keeps: a few hundred bytes to some KB each (lines closed at once are few).
const INDEXES_KEPT: usize = 16;
/// Pages an instance keeps: about 120 KB each in memory (2,048 ids), 64 of them about 8 MB.
const PAGES_KEPT: usize = 64;

/// Values by key, least recently used first (a few dozen at most: a scan is cheap).
type Kept<K, V> = Mutex<VecDeque<(K, V)>>;

/// The last entrants indexes and pages a warm instance read, least recently used first out.
#[derive(Debug, Default)]
pub struct ProofCache {
    indexes: Kept<PackId, Arc<EntrantsIndex>>,
    pages: Kept<(PackId, u32), Arc<Vec<String>>>,
}

/// The value under `key` in `kept`, moved to the back (the most recently used).
fn take<K: PartialEq, V: Clone>(kept: &Kept<K, V>, key: &K) -> Option<V> {
    let mut kept = kept.lock().unwrap_or_else(PoisonError::into_inner);
    let at = kept.iter().position(|(k, _)| k == key)?;
    let found = kept.remove(at)?;
    let value = found.1.clone();
    kept.push_back(found);
    Some(value)
}

/// Keeps `value` under `key`, dropping the least recently used past `most`.
fn keep<K, V>(kept: &Kept<K, V>, key: K, value: V, most: usize) {
    let mut kept = kept.lock().unwrap_or_else(PoisonError::into_inner);
    kept.push_back((key, value));
    while kept.len() > most {
        kept.pop_front();
    }
}

fn missing(what: &str) -> ApiError {
    ApiError::Internal {
        detail: format!("a committed line without its {what}"),
    }
}

impl ProofCache {
    async fn index<S: GetEntrantsIndex>(
        &self,
        store: &S,
        pack_id: &PackId,
    ) -> Result<Arc<EntrantsIndex>, ApiError> {
        if let Some(index) = take(&self.indexes, pack_id) {
            return Ok(index);
        }
        let index = Arc::new(
            store
                .entrants_index(pack_id)
                .await?
                .ok_or_else(|| missing("entrants index"))?,
        );
        keep(&self.indexes, pack_id.clone(), index.clone(), INDEXES_KEPT);
        Ok(index)
    }

    async fn page<S: GetEntrantPage>(
        &self,
        store: &S,
        pack_id: &PackId,
        page: u32,
    ) -> Result<Arc<Vec<String>>, ApiError> {
        let key = (pack_id.clone(), page);
        if let Some(ids) = take(&self.pages, &key) {
            return Ok(ids);
        }
        let found: Result<_, StoreError> = store.entrant_page(pack_id, page).await;
        let ids = Arc::new(found?.ok_or_else(|| missing("entrant page"))?.strings());
        keep(&self.pages, key, ids.clone(), PAGES_KEPT);
        Ok(ids)
    }
}

/// `GET /api/packs/{packId}/queue/me/proof`: the Merkle path of the fan's entry.
#[utoipa::path(
    get,
    path = "/api/packs/{packId}/queue/me/proof",
    operation_id = "getMyQueueProof",
    tag = "Waiting room",
    summary = "The proof that the fan's entry is in the committed entrants",
    description = "The Merkle path from the fan's entry id to the queue's `entrantsRoot` \
(docs/fairness.md gives the tree's rules): hashing up the steps gives the root, so the fan knows \
their entry was committed before the draw's randomness existed.",
    params(PackPath),
    security(("sessionToken" = [])),
    responses(
        (status = 200, description = "The proof.", body = ProofAnswer),
        (status = 404, description = "The fan did not join (`queue_entry_not_found`); no such \
pack or no waiting room (`queue_not_found`); or the id is not an id (`not_found`).",
            body = ErrorBody,
            example = json!(doc::error_example(ErrorCode::QueueEntryNotFound, ENTRY_NOT_FOUND))),
        (status = 409, description = "The line has not closed and committed its entrants \
(`queue_not_closed`).", body = ErrorBody,
            example = json!(doc::error_example(ErrorCode::QueueNotClosed, NOT_CLOSED))),
        doc::SignedIn,
    ),
)]
pub async fn my_queue_proof<S: GetQueue + GetQueueEntry + GetEntrantsIndex + GetEntrantPage>(
    State(state): State<Arc<QueueFnState<S>>>,
    Path(PackPath { pack_id }): Path<PackPath>,
    Fan(identity): Fan,
) -> Result<Response, ApiError> {
    let (view, entry) = tokio::join!(
        committed_line(&state.store, &pack_id),
        own_entry(&state.store, &pack_id, &identity.user_id)
    );
    let (view, entry) = (view?, entry?);
    let root = view.state.entrants_root.ok_or_else(|| missing("root"))?;
    let not_among = || ApiError::Internal {
        detail: "a fan's entry is not among the committed entrants".into(),
    };
    let index = state.proofs.index(&state.store, &pack_id).await?;
    let page = index.page_of(&entry.entry_id).ok_or_else(not_among)?;
    let ids = state.proofs.page(&state.store, &pack_id, page).await?;
    let at = ids
        .binary_search_by(|id| id.as_str().cmp(entry.entry_id.as_str()))
        .map_err(|_| not_among())?;
    let steps = merkle::paged_proof(&ids, at, &index.page_roots, page as usize);
    Ok(json_response(
        StatusCode::OK,
        &ProofAnswer {
            proof: ProofJson {
                entry_id: entry.entry_id,
                index: u64::from(page) * ENTRANTS_PAGE_SIZE as u64 + at as u64,
                entrants_root: root,
                steps,
            },
        },
    ))
}
