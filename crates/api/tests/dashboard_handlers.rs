//! `GET /api/dashboard` over API Gateway events on the in-memory store: every part in one answer,
//! a part whose read fails `null` with the others answered (never a 500), the quests and queue
//! parts supplied by functions set in the state.

use std::sync::Arc;

use api::handlers::dashboard::{DashboardState, PartFuture};
use api::http::routes::dashboard_routes;
use domain::cash::Money;
use domain::ids::UserId;
use domain::leaderboards::{Board, Standing};
use domain::packs::document::PackDocument;
use domain::packs::listing::{Page as PackPage, PageRequest};
use domain::purchases::Purchase;
use domain::purchases::mine::{MyPurchasesQuery, Page};
use domain::timestamp::Timestamp;
use serde_json::{Value, json};
use store::cash::GetBalances;
use store::leaderboards::GetStanding;
use store::packs::{ListActivePacks, ListUpcomingPacks};
use store::purchases::ListMyPurchases;
use store::{MemoryStore, StoreError};
use testkit::events::{self, ApiEvent, parts};
use testkit::openings::open_one;
use testkit::packs::at;
use testkit::tokens::token;

/// The in-memory store, with one part's read failing (`fails`: `cash`, `unopened`, `live`,
/// `upcoming`, `rank`, or none; `quests` fails the quests part instead).
struct Failing {
    store: MemoryStore,
    fails: &'static str,
}

impl Failing {
    fn check(&self, part: &str) -> Result<(), StoreError> {
        if self.fails == part {
            return Err(StoreError::unavailable(format!("{part} is down")));
        }
        Ok(())
    }
}

impl GetBalances for Failing {
    async fn get_balances(&self, user_id: &UserId) -> Result<Vec<Money>, StoreError> {
        self.check("cash")?;
        self.store.get_balances(user_id).await
    }
}

impl ListMyPurchases for Failing {
    async fn list_my_purchases(
        &self,
        query: &MyPurchasesQuery,
    ) -> Result<Page<Purchase>, StoreError> {
        self.check("unopened")?;
        self.store.list_my_purchases(query).await
    }
}

impl ListActivePacks for Failing {
    async fn list_active_packs(&self, request: &PageRequest) -> Result<PackPage, StoreError> {
        self.check("live")?;
        self.store.list_active_packs(request).await
    }
}

impl ListUpcomingPacks for Failing {
    async fn list_upcoming_packs(
        &self,
        now: Timestamp,
        limit: usize,
    ) -> Result<Vec<PackDocument>, StoreError> {
        self.check("upcoming")?;
        self.store.list_upcoming_packs(now, limit).await
    }
}

impl GetStanding for Failing {
    async fn get_standing(
        &self,
        board: &Board,
        user_id: &UserId,
    ) -> Result<Option<Standing>, StoreError> {
        self.check("rank")?;
        self.store.get_standing(board, user_id).await
    }
}

/// A store where `fan` opened one pack and holds one paid, unopened purchase; a live and an
/// upcoming pack.
async fn store() -> MemoryStore {
    let store = MemoryStore::default();
    testkit::packs::save(&store, &testkit::packs::active("live-pack", 60)).await;
    testkit::packs::save(&store, &testkit::packs::active("soon-pack", -3600)).await;
    open_one(&store, "fan", "live-pack", "k1", at(-30)).await;
    testkit::openings::pay_one(&store, "fan", "live-pack", "k2", at(-20)).await;
    store
}

/// The quests part, failing when `fails` is `quests`.
fn quests(fails: &'static str) -> impl Fn(UserId, Timestamp) -> PartFuture {
    move |_, _| -> PartFuture {
        Box::pin(async move {
            if fails == "quests" {
                return Err(StoreError::unavailable("the quests are down"));
            }
            Ok(json!([{"id": "first-pack", "progress": {"current": 1, "target": 1}}]))
        })
    }
}

async fn dashboard(store: MemoryStore, fails: &'static str, queue_fails: bool) -> (u16, Value) {
    let state = Arc::new(DashboardState {
        store: Failing { store, fails },
        verifier: testkit::tokens::verifier(),
        quests: Some(Arc::new(quests(fails))),
        queue: Some(Arc::new(move |_, pack, _| -> PartFuture {
            Box::pin(async move {
                match (pack.as_str(), queue_fails) {
                    (_, true) => Err(StoreError::unavailable("the queue is down")),
                    ("soon-pack", false) => Ok(json!({"position": 7})),
                    _ => Ok(Value::Null),
                }
            })
        })),
    });
    let event = ApiEvent::get("/api/dashboard").bearer(&token("fan", None));
    parts(&events::call(dashboard_routes(), &state, event.request()).await)
}

#[tokio::test]
async fn the_home_screen_in_one_answer() {
    let (status, home) = dashboard(store().await, "", false).await;
    assert_eq!(status, 200, "{home}");
    assert_eq!(
        home["cash"],
        json!({"balances": [{"amount": 0, "currency": "USD"}]})
    );
    let unopened = home["unopened"].as_array().unwrap();
    assert_eq!(unopened.len(), 1, "{home}");
    assert_eq!(unopened[0]["status"], "completed");
    assert_eq!(home["quests"][0]["id"], "first-pack");
    let drops: Vec<(&str, &str, &Value)> = home["drops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|drop| {
            (
                drop["pack"]["id"].as_str().unwrap(),
                drop["phase"].as_str().unwrap(),
                &drop["queue"],
            )
        })
        .collect();
    assert_eq!(
        drops,
        [
            ("live-pack", "live", &Value::Null),
            ("soon-pack", "upcoming", &json!({"position": 7}))
        ]
    );
    assert_eq!(
        home["rank"],
        json!({"board": "global", "score": 5, "rank": 1, "percentile": null})
    );
}

#[tokio::test]
async fn a_failed_part_is_null_and_the_rest_is_answered() {
    for (fails, null) in [
        ("cash", "cash"),
        ("unopened", "unopened"),
        ("live", "drops"),
        ("upcoming", "drops"),
        ("rank", "rank"),
        ("quests", "quests"),
    ] {
        let (status, home) = dashboard(store().await, fails, false).await;
        assert_eq!(status, 200, "{fails}: {home}");
        for part in ["cash", "unopened", "quests", "drops", "rank"] {
            assert_eq!(
                home[part].is_null(),
                part == null,
                "{fails} failing: {part} in {home}"
            );
        }
    }
    let (status, home) = dashboard(store().await, "", true).await;
    assert_eq!(status, 200);
    assert!(
        home["drops"]
            .as_array()
            .unwrap()
            .iter()
            .all(|drop| drop["queue"].is_null()),
        "{home}"
    );
    let (status, _) = parts(
        &events::call(
            dashboard_routes(),
            &Arc::new(DashboardState {
                store: Failing {
                    store: MemoryStore::default(),
                    fails: "",
                },
                verifier: testkit::tokens::verifier(),
                quests: None,
                queue: None,
            }),
            ApiEvent::get("/api/dashboard").request(),
        )
        .await,
    );
    assert_eq!(status, 401);
}

/// The queue part reads the fan's own entry: their status and place once joined, `null` for a
/// pack they did not join (or that has no queue).
#[tokio::test]
async fn the_queue_part_shows_the_fans_entry_and_null_without_one() {
    use api::handlers::dashboard::queue_part;
    use domain::queue::entry::{QueueEntry, ReceiptSigner};
    use store::queue::JoinQueue;
    let store = MemoryStore::default();
    let fan = testkit::ids::user("fan");
    let entry = QueueEntry::new(
        testkit::ids::pack("queued"),
        fan.clone(),
        Timestamp::now(),
        &ReceiptSigner::random(),
    );
    store.join_queue(&entry).await.unwrap();
    let part = queue_part(store);
    let joined = part(fan.clone(), testkit::ids::pack("queued"), Timestamp::now())
        .await
        .unwrap();
    assert_eq!(joined["entryId"], entry.entry_id.as_str());
    assert_eq!(joined["status"], "waiting");
    assert_eq!(joined["position"], Value::Null);
    let other = part(fan, testkit::ids::pack("other"), Timestamp::now())
        .await
        .unwrap();
    assert_eq!(other, Value::Null);
}
