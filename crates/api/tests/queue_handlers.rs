//! The waiting room's routes over API Gateway events on the in-memory store: a fan joins once
//! (201, then 200 replayed with the same entry), with a receipt that verifies with the published
//! key; the line refuses joins before it opens and from its close; the public record shows the
//! commitment before the close and nothing of the draw; a pack without a queue has none; the
//! entrants, the proof and the report wait for the keeper; a proof reads at most its own page.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use api::handlers::queue::QueueFnState;
use api::handlers::queue::proof::my_queue_proof;
use api::http::routes::queue_routes;
use domain::humancheck::Door;
use domain::ids::{EntryId, PackId, UserId};
use domain::packs::Pack;
use domain::queue::entry::{QueueEntry, ReceiptSigner, verify_receipt};
use domain::queue::merkle::{self, ProofStep};
use domain::queue::state::{ENTRANTS_PAGE_SIZE, EntrantPage, EntrantsIndex};
use domain::timestamp::Timestamp;
use serde_json::Value;
use store::queue::{GetEntrantPage, GetEntrantsIndex, GetQueue, GetQueueEntry, QueueView};
use store::{MemoryStore, StoreError};
use testkit::events::{self, ApiEvent, parts};
use testkit::packs::{active, queued};
use testkit::tokens::token;
use testkit::turnstile::{FUNCTION_HOSTNAME, TurnstileStub};

type Response = lambda_http::Response<lambda_http::Body>;

fn api(packs: &[Pack]) -> Arc<QueueFnState<MemoryStore>> {
    Arc::new(QueueFnState::new(
        MemoryStore::with_packs(packs),
        testkit::tokens::verifier(),
        ReceiptSigner::from_seed(&[3; 32]).unwrap(),
        testkit::turnstile::human_check(),
    ))
}

async fn call(state: &Arc<QueueFnState<MemoryStore>>, event: ApiEvent) -> Response {
    events::call(queue_routes(), state, event.request()).await
}

async fn fan(
    state: &Arc<QueueFnState<MemoryStore>>,
    method: &str,
    path: &str,
    who: &str,
) -> Response {
    let event = ApiEvent::new(method, path).bearer(&token(who, None));
    // A join carries a human check solved for its pack's door (tests/queue_human_check.rs in
    // functions tests the check itself).
    let event = match path
        .strip_prefix("/api/packs/")
        .and_then(|p| p.strip_suffix("/queue"))
    {
        Some(pack) if method == "POST" => {
            let action = Door::Join(testkit::ids::pack(pack)).action();
            let solved = Timestamp::now().to_string();
            let human = TurnstileStub::shared().solve(&action, FUNCTION_HOSTNAME, &solved);
            event.header("human-check", &human)
        }
        _ => event,
    };
    call(state, event).await
}

fn code(response: &Response) -> (u16, String) {
    let (status, body) = parts(response);
    (
        status,
        body["error"]["code"].as_str().unwrap_or("-").to_owned(),
    )
}

fn header<'a>(response: &'a Response, name: &str) -> Option<&'a str> {
    response.headers().get(name).and_then(|v| v.to_str().ok())
}

#[tokio::test]
async fn a_fan_joins_once_with_a_receipt_anyone_can_check() {
    let state = api(&[queued("drop", -60, 3600)]);
    let joined = fan(&state, "POST", "/api/packs/drop/queue", "auth0|fan").await;
    let (status, body) = parts(&joined);
    assert_eq!(status, 201, "{body}");
    assert_eq!(header(&joined, "idempotent-replayed"), None);
    let entry = &body["entry"];
    assert_eq!(entry["packId"], "drop");
    assert_eq!(entry["status"], "waiting");
    assert_eq!(entry["position"], Value::Null);
    assert_eq!(entry["estimatedAdmissionAt"], Value::Null);
    assert_eq!(entry["passExpiresAt"], Value::Null);
    let entry_id = entry["entryId"].as_str().unwrap();
    assert!(entry_id.len() == 32 && entry_id.bytes().all(|b| b.is_ascii_hexdigit()));

    // The receipt verifies with the key the public record publishes, and with nothing else.
    let (_, public) = parts(&call(&state, ApiEvent::get("/api/packs/drop/queue")).await);
    let key = public["queue"]["receiptKey"].as_str().unwrap();
    let joined_at = Timestamp::parse(entry["joinedAt"].as_str().unwrap()).unwrap();
    let receipt = entry["receipt"].as_str().unwrap();
    let (pack, id) = (
        testkit::ids::pack("drop"),
        EntryId::parse(entry_id).unwrap(),
    );
    assert!(verify_receipt(key, &pack, &id, joined_at, receipt));
    let other = testkit::ids::pack("other");
    assert!(!verify_receipt(key, &other, &id, joined_at, receipt));

    // Again: the same entry, 200, replayed.
    let again = fan(&state, "POST", "/api/packs/drop/queue", "auth0|fan").await;
    let (status, body) = parts(&again);
    assert_eq!(status, 200);
    assert_eq!(header(&again, "idempotent-replayed"), Some("true"));
    assert_eq!(&body["entry"], entry);
    let (status, mine) = parts(&fan(&state, "GET", "/api/packs/drop/queue/me", "auth0|fan").await);
    assert_eq!((status, &mine["entry"]), (200, entry));

    // Another fan: another entry; a fan who did not join: 404.
    let (_, theirs) = parts(&fan(&state, "POST", "/api/packs/drop/queue", "auth0|other").await);
    assert_ne!(theirs["entry"]["entryId"], entry["entryId"]);
    assert_eq!(
        code(&fan(&state, "GET", "/api/packs/drop/queue/me", "auth0|nobody").await),
        (404, "queue_entry_not_found".into())
    );
    // Signed out: 401.
    assert_eq!(
        code(&call(&state, ApiEvent::post("/api/packs/drop/queue")).await).0,
        401
    );
}

#[tokio::test]
async fn the_public_record_shows_the_commitment_and_nothing_of_the_draw_before_it() {
    let pack = queued("drop", -60, 3600);
    let terms = pack.queue.unwrap();
    let state = api(&[pack]);
    let response = call(&state, ApiEvent::get("/api/packs/drop/queue")).await;
    assert_eq!(
        header(&response, "cache-control"),
        Some("public, max-age=2, stale-while-revalidate=2")
    );
    let (status, body) = parts(&response);
    assert_eq!(status, 200);
    let queue = &body["queue"];
    assert_eq!(queue["status"], "open");
    assert_eq!(queue["passSeconds"], 600);
    assert_eq!(queue["closesAt"], terms.closes_at.to_string());
    let seed_hash = queue["seedHash"].as_str().unwrap();
    assert!(seed_hash.len() == 64 && seed_hash.bytes().all(|b| b.is_ascii_hexdigit()));
    assert_eq!(
        queue["beacon"],
        serde_json::json!({
            "chain": domain::beacon::quicknet::CHAIN_HASH,
            "round": terms.beacon_round(),
            "randomness": null,
            "signature": null,
        })
    );
    for absent in ["entrants", "entrantsRoot", "seed"] {
        assert_eq!(queue[absent], Value::Null, "{absent}");
    }
    assert_eq!(queue["admittedThrough"], 0);
}

#[tokio::test]
async fn joins_are_taken_from_the_opening_until_the_close() {
    let state = api(&[
        queued("soon", 600, 3600),
        queued("over", -7200, -60),
        active("plain", 60),
    ]);
    let join = |pack: &'static str| {
        let state = state.clone();
        async move { code(&fan(&state, "POST", &format!("/api/packs/{pack}/queue"), "fan").await) }
    };
    assert_eq!(join("soon").await, (409, "queue_not_open".into()));
    assert_eq!(join("over").await, (409, "queue_closed".into()));
    assert_eq!(join("plain").await, (404, "queue_not_found".into()));
    assert_eq!(join("nope").await, (404, "queue_not_found".into()));
    let (_, soon) = parts(&call(&state, ApiEvent::get("/api/packs/soon/queue")).await);
    assert_eq!(soon["queue"]["status"], "upcoming");
    let (_, over) = parts(&call(&state, ApiEvent::get("/api/packs/over/queue")).await);
    assert_eq!(over["queue"]["status"], "closed");
    assert_eq!(over["queue"]["entrants"], Value::Null, "not committed yet");
    assert_eq!(
        code(&call(&state, ApiEvent::get("/api/packs/plain/queue")).await),
        (404, "queue_not_found".into())
    );
}

#[tokio::test]
async fn the_entrants_the_proof_and_the_report_wait_for_the_keeper() {
    let state = api(&[queued("over", -7200, -60)]);
    let entrants = call(&state, ApiEvent::get("/api/packs/over/queue/entrants")).await;
    assert_eq!(code(&entrants), (409, "queue_not_closed".into()));
    assert_eq!(
        code(&fan(&state, "GET", "/api/packs/over/queue/me/proof", "fan").await),
        (409, "queue_not_closed".into())
    );
    assert_eq!(
        code(&call(&state, ApiEvent::get("/api/packs/over/queue/report")).await),
        (409, "queue_not_finished".into())
    );
    for cursor in ["x", "-1", "1234567", "1.0"] {
        let page =
            ApiEvent::get("/api/packs/over/queue/entrants").query(&format!("cursor={cursor}"));
        assert_eq!(
            code(&call(&state, page).await),
            (400, "invalid_cursor".into()),
            "{cursor}"
        );
    }
}

#[test]
fn a_pack_shows_its_queue_terms_and_a_pack_without_one_shows_none() {
    let pack = queued("drop", -60, 3600);
    let json = serde_json::to_value(&pack).unwrap();
    let terms = pack.queue.unwrap();
    assert_eq!(
        json["queue"],
        serde_json::json!({
            "opensAt": terms.opens_at.to_string(),
            "closesAt": terms.closes_at.to_string(),
            "passSeconds": 600,
        })
    );
    let plain = serde_json::to_value(active("plain", 60)).unwrap();
    assert!(plain.get("queue").is_none(), "spec-exact: no queue key");
}

/// The reads a proof makes, counted: the queue function's proof route over the in-memory store.
#[derive(Clone)]
struct Counting {
    store: MemoryStore,
    indexes: Arc<AtomicU32>,
    pages: Arc<AtomicU32>,
}

impl GetQueue for Counting {
    async fn get_queue(&self, pack_id: &PackId) -> Result<Option<QueueView>, StoreError> {
        self.store.get_queue(pack_id).await
    }
}

impl GetQueueEntry for Counting {
    async fn queue_entry(
        &self,
        pack_id: &PackId,
        user_id: &UserId,
    ) -> Result<Option<QueueEntry>, StoreError> {
        self.store.queue_entry(pack_id, user_id).await
    }
}

impl GetEntrantsIndex for Counting {
    async fn entrants_index(&self, pack_id: &PackId) -> Result<Option<EntrantsIndex>, StoreError> {
        self.indexes.fetch_add(1, Ordering::SeqCst);
        self.store.entrants_index(pack_id).await
    }
}

impl GetEntrantPage for Counting {
    async fn entrant_page(
        &self,
        pack_id: &PackId,
        page: u32,
    ) -> Result<Option<EntrantPage>, StoreError> {
        self.pages.fetch_add(1, Ordering::SeqCst);
        self.store.entrant_page(pack_id, page).await
    }
}

/// Issue 42, G9: a fan with entries in two closed lines of three pages each asks for their proofs
/// in turn (the pattern that made every request read a whole line): each request reads at most
/// the line's index and the fan's own page, and never one it read before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proof_reads_at_most_its_own_page_whatever_the_order_of_requests() {
    use tower::ServiceExt;
    let store = MemoryStore::default();
    let (_stub, beacon) = testkit::waiting_room::beacon().await;
    let fans = 2 * ENTRANTS_PAGE_SIZE + 10;
    let mut roots = Vec::new();
    for pack in ["line-a", "line-b"] {
        testkit::packs::save(&store, &testkit::waiting_room::queued_pack(pack, 10, 1)).await;
        testkit::waiting_room::join(&store, &testkit::ids::pack(pack), fans).await;
    }
    testkit::waiting_room::close_and_draw(&store, &beacon).await;
    for pack in ["line-a", "line-b"] {
        let view = store.get_queue(&testkit::ids::pack(pack)).await.unwrap();
        roots.push(view.unwrap().state.entrants_root.unwrap());
    }
    let counting = Counting {
        store,
        indexes: Arc::default(),
        pages: Arc::default(),
    };
    let state = testkit::waiting_room::api(counting.clone());
    let app = axum::Router::new()
        .route(
            "/api/packs/{packId}/queue/me/proof",
            axum::routing::get(my_queue_proof::<Counting>),
        )
        .with_state(state);
    let app = api::http::layers::api_layers(app, None);
    let reads = || {
        (
            counting.indexes.load(Ordering::SeqCst),
            counting.pages.load(Ordering::SeqCst),
        )
    };
    let mut asked = BTreeSet::new();
    for round in 0..3 {
        for fan in [round * 7, fans - 1 - round, ENTRANTS_PAGE_SIZE + round] {
            for (line, pack) in ["line-a", "line-b"].into_iter().enumerate() {
                let before = reads();
                let request = axum::http::Request::get(format!("/api/packs/{pack}/queue/me/proof"))
                    .header(
                        "authorization",
                        format!(
                            "Bearer {}",
                            testkit::tokens::token(&format!("fan-{fan}"), None)
                        ),
                    )
                    .body(axum::body::Body::empty())
                    .unwrap();
                let response = app.clone().oneshot(request).await.unwrap();
                assert_eq!(response.status(), 200);
                let body = axum::body::to_bytes(response.into_body(), usize::MAX)
                    .await
                    .unwrap();
                let proof: Value = serde_json::from_slice(&body).unwrap();
                let proof = &proof["proof"];
                let steps: Vec<ProofStep> = serde_json::from_value(proof["steps"].clone()).unwrap();
                let entry_id = proof["entryId"].as_str().unwrap();
                assert!(
                    merkle::verify(&roots[line], entry_id, &steps),
                    "{pack}, fan {fan}"
                );
                let page = proof["index"].as_u64().unwrap() / ENTRANTS_PAGE_SIZE as u64;
                let after = reads();
                assert!(
                    after.0 - before.0 <= 1,
                    "{pack}, fan {fan}: index read {after:?}"
                );
                let new_page = asked.insert((pack, page));
                assert_eq!(
                    after.1 - before.1,
                    u32::from(new_page),
                    "{pack}, fan {fan}: pages read"
                );
            }
        }
    }
    assert_eq!(
        reads(),
        (2, asked.len() as u32),
        "each index and page read once"
    );
}
