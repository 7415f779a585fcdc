//! The waiting room's public reads once the keeper has moved a line on, through the queue
//! function's routes on both stores (DynamoDB on moto behind the one-request-at-a-time proxy,
//! and the in-memory store): the entrants list pages every entry id once, sorted, and rebuilds
//! `entrantsRoot`; a fan's proof verifies against it (first, middle and last leaf, odd counts);
//! the report gives the exact figures of a scripted sale; and what issue 42 fixed: the units
//! left after the line sell to its entrants (G5), a hold released unpaid inside a fan's window
//! gives the unit back (G7), the estimate counts waves of the units over several windows (G8),
//! and the dashboard's queue part is `queue/me`'s answer (G10); and on DynamoDB each public read
//! makes the requests docs/design.md counts.

use std::collections::BTreeSet;
use std::sync::Arc;

use api::handlers::dashboard::queue_part;
use api::handlers::queue::QueueFnState;
use api::handlers::queue_keeper::{KeeperRun, pass};
use clients::beacon::BeaconClient;
use domain::ids::PackId;
use domain::packs::Pack;
use domain::packs::listing::{PackFilter, PageRequest};
use domain::purchases::StartRefusal;
use domain::queue::admission::AdmissionRefusal;
use domain::queue::entry::EntryStatus;
use domain::queue::entry::QueueEntry;
use domain::queue::merkle::{self, ProofStep};
use domain::queue::state::ENTRANTS_PAGE_SIZE;
use domain::timestamp::Timestamp;
use serde_json::{Value, json};
use store::purchases::{StartError, Started};
use store::{MemoryStore, Store};
use testkit::countdowns::without_countdowns;
use testkit::drand::DrandStub;
use testkit::waiting_room::{
    api, beacon, by_position, close_and_draw, entrant_pages, get, join, line, on_time, queued_pack,
    start,
};

testkit::store_contract!(
    by_value:
    the_entrants_page_every_id_once_and_each_fans_proof_reaches_the_root,
    the_report_gives_the_figures_of_the_sale,
    a_sale_over_in_a_fans_window_reports_what_they_bought,
    units_left_after_the_line_sell_to_its_entrants,
    a_hold_released_inside_the_window_gives_the_unit_back,
    the_estimate_counts_waves_over_several_windows,
);

fn root_of(queue: &Value) -> [u8; 32] {
    let root = hex::decode(queue["queue"]["entrantsRoot"].as_str().expect("committed"));
    root.unwrap().try_into().expect("32 bytes")
}

/// Checks `fan`'s proof in `pack`'s line: it names their entry, at `index` of the sorted ids,
/// under `root`, and hashes up to it (and not for another entry).
async fn check_proof<S: Store + 'static>(
    state: &Arc<QueueFnState<S>>,
    pack: &str,
    fan: &str,
    (entry_id, index): (&str, usize),
    root: &[u8; 32],
) {
    let path = format!("/api/packs/{pack}/queue/me/proof");
    let (status, body) = get(state, &path, Some(fan)).await;
    assert_eq!(status, 200, "{fan}: {body}");
    let proof = &body["proof"];
    assert_eq!(proof["entryId"], entry_id);
    assert_eq!(proof["index"], index);
    assert_eq!(proof["entrantsRoot"], hex::encode(root));
    let steps: Vec<ProofStep> = serde_json::from_value(proof["steps"].clone()).unwrap();
    assert!(merkle::verify(root, entry_id, &steps), "{fan}'s proof");
    assert!(!merkle::verify(root, &"0".repeat(32), &steps));
}

async fn the_entrants_page_every_id_once_and_each_fans_proof_reaches_the_root<S>(store: S)
where
    S: Store + 'static,
{
    // An odd count: the last leaf is promoted alone. One page: moto takes a second a few dozen
    // joins, so two pages are shown on the in-memory store below.
    entrants_and_proofs(store, 41).await;
}

/// One more fan than a page holds: two pages, the second a lone leaf.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_pages_of_entrants_in_memory() {
    entrants_and_proofs(MemoryStore::default(), ENTRANTS_PAGE_SIZE + 1).await;
}

/// A line of `fans` (odd) and one of 7, closed: the pages, the root and the proofs.
async fn entrants_and_proofs<S: Store + 'static>(store: S, fans: usize) {
    let (_stub, beacon) = beacon().await;
    let (big, small) = (queued_pack("crowded", 10, 1), queued_pack("small", 10, 1));
    testkit::packs::save(&store, &big).await;
    testkit::packs::save(&store, &small).await;
    let joined = join(&store, &testkit::ids::pack("crowded"), fans).await;
    let few = join(&store, &testkit::ids::pack("small"), 7).await;
    let state = api(store);

    // Before the close: nothing to list or prove, to a fan who joined or not; no proof of a
    // pack without a line.
    let proof = "/api/packs/crowded/queue/me/proof";
    for (path, who, refusal) in [
        (
            "/api/packs/crowded/queue/entrants",
            None,
            (409, "queue_not_closed"),
        ),
        (proof, Some("fan-0"), (409, "queue_not_closed")),
        (proof, Some("stranger"), (409, "queue_not_closed")),
        (
            "/api/packs/nope/queue/me/proof",
            Some("fan-0"),
            (404, "queue_not_found"),
        ),
    ] {
        let (status, body) = get(&state, path, who).await;
        assert_eq!(
            (status, &body["error"]["code"]),
            (refusal.0, &json!(refusal.1)),
            "{path} as {who:?}"
        );
    }

    // The close only (the first pass): entrants committed, not drawn.
    let mut run = KeeperRun::default();
    pass(&state.store, &beacon, on_time(), &mut run)
        .await
        .unwrap();
    assert_eq!(run.closed, 2);
    let (_, queue) = get(&state, "/api/packs/crowded/queue", None).await;
    assert_eq!(queue["queue"]["status"], "closed");
    assert_eq!(queue["queue"]["entrants"], fans);

    let pages = entrant_pages(&state, "crowded").await;
    let sizes: Vec<usize> = pages
        .iter()
        .map(|page| page["entrants"].as_array().unwrap().len())
        .collect();
    let last = fans.div_ceil(ENTRANTS_PAGE_SIZE) - 1;
    assert_eq!(sizes.len(), last + 1);
    assert!(sizes[..last].iter().all(|&size| size == ENTRANTS_PAGE_SIZE));
    assert_eq!(sizes[last], fans - last * ENTRANTS_PAGE_SIZE);
    for (n, page) in pages[..last].iter().enumerate() {
        assert_eq!(page["nextCursor"], (n + 1).to_string());
    }
    assert_eq!(pages[last]["nextCursor"], Value::Null, "the last page");
    let listed: Vec<String> = pages
        .iter()
        .flat_map(|page| page["entrants"].as_array().unwrap().clone())
        .map(|id| id.as_str().unwrap().to_owned())
        .collect();
    assert!(listed.windows(2).all(|w| w[0] < w[1]), "sorted, each once");
    let ids: BTreeSet<String> = joined.iter().map(|e| e.entry_id.to_string()).collect();
    assert_eq!(listed, ids.into_iter().collect::<Vec<_>>(), "every entry");
    let root = root_of(&queue);
    assert_eq!(
        merkle::root(&listed),
        root,
        "the root rebuilt from the pages"
    );
    // The cursor a page gives is the page: the first named, and none past the last.
    let (_, first) = get(&state, "/api/packs/crowded/queue/entrants?cursor=0", None).await;
    assert_eq!(first, pages[0]);
    let past = format!("/api/packs/crowded/queue/entrants?cursor={}", last + 1);
    let (status, past) = get(&state, &past, None).await;
    assert_eq!(
        (status, &past["error"]["code"]),
        (400, &json!("invalid_cursor"))
    );

    // Proofs: the first, second, a middle, the last but one and the lone last leaf.
    for index in [0, 1, fans / 2, fans - 2, fans - 1] {
        let entry = joined
            .iter()
            .find(|e| e.entry_id.as_str() == listed[index])
            .unwrap();
        let fan = entry.user_id.as_str();
        check_proof(&state, "crowded", fan, (&listed[index], index), &root).await;
    }
    // Seven entrants: every leaf of an odd tree.
    let (_, small_queue) = get(&state, "/api/packs/small/queue", None).await;
    let small_root = root_of(&small_queue);
    let mut sorted: Vec<_> = few.iter().map(|e| e.entry_id.to_string()).collect();
    sorted.sort();
    assert_eq!(merkle::root(&sorted), small_root);
    for entry in &few {
        let index = sorted.binary_search(&entry.entry_id.to_string()).unwrap();
        let id = entry.entry_id.as_str();
        check_proof(
            &state,
            "small",
            entry.user_id.as_str(),
            (id, index),
            &small_root,
        )
        .await;
    }
    // A fan who did not join has no proof.
    let (status, body) = get(&state, "/api/packs/small/queue/me/proof", Some("stranger")).await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (404, &json!("queue_entry_not_found"))
    );
}

/// `fan`'s start of `pack_id` at `now` (idempotency key `key`), paid.
async fn buy<S: Store>(
    store: &S,
    fan: &domain::ids::UserId,
    pack_id: &PackId,
    key: &str,
    now: Timestamp,
) {
    let Ok(Started::Created(purchase)) = store.start_purchase(&start(fan, pack_id, key, now)).await
    else {
        panic!("{fan} is admitted and starts");
    };
    let reference = format!("grant-{fan}-{key}");
    testkit::purchases::credit(store, fan.as_str(), 10_000, "USD", &reference).await;
    store
        .complete_purchase(fan, pack_id, &purchase.id, now)
        .await
        .unwrap();
}

/// A line drawn by the keeper (testkit's drand stub), served by the queue function.
struct Sale<S> {
    _stub: DrandStub,
    beacon: BeaconClient,
    state: Arc<QueueFnState<S>>,
    pack_id: PackId,
}

impl<S: Store + 'static> Sale<S> {
    /// `pack` seeded, `fans` joined, closed and drawn.
    async fn drawn(store: S, pack: &Pack, fans: usize) -> Self {
        let (_stub, beacon) = beacon().await;
        let pack_id = line(&store, pack, fans).await;
        close_and_draw(&store, &beacon).await;
        let state = api(store);
        Self {
            _stub,
            beacon,
            state,
            pack_id,
        }
    }

    /// One keeper pass at `at`.
    async fn pass(&self, at: Timestamp) -> KeeperRun {
        let mut run = KeeperRun::default();
        pass(&self.state.store, &self.beacon, at, &mut run)
            .await
            .unwrap();
        run
    }

    /// The fans of the line by position.
    async fn line(&self, fans: usize) -> Vec<QueueEntry> {
        by_position(&self.state.store, &self.pack_id, fans).await
    }

    /// The `n`th fan by position (from 0) buys and pays at `at`.
    async fn buy(&self, line: &[QueueEntry], n: usize, key: &str, at: Timestamp) {
        buy(&self.state.store, &line[n].user_id, &self.pack_id, key, at).await;
    }

    /// The `n`th fan's start at `at`, its hold ending `hold` seconds later.
    async fn start(
        &self,
        line: &[QueueEntry],
        n: usize,
        key: &str,
        (at, hold): (Timestamp, i64),
    ) -> Result<Started, StartError> {
        let mut request = start(&line[n].user_id, &self.pack_id, key, at);
        request.expires_at = at.plus_seconds(hold).unwrap();
        self.state.store.start_purchase(&request).await
    }

    /// The `n`th fan's entry as `queue/me` answers it.
    async fn me(&self, line: &[QueueEntry], n: usize) -> Value {
        let path = format!("/api/packs/{}/queue/me", self.pack_id);
        let (status, body) = get(&self.state, &path, Some(line[n].user_id.as_str())).await;
        assert_eq!(status, 200, "{body}");
        body["entry"].clone()
    }

    async fn report(&self) -> (u16, Value) {
        let path = format!("/api/packs/{}/queue/report", self.pack_id);
        get(&self.state, &path, None).await
    }
}

async fn the_report_gives_the_figures_of_the_sale<S>(store: S)
where
    S: Store + 'static,
{
    // Three units, one a fan, eight fans.
    let sale = Sale::drawn(store, &queued_pack("reported", 3, 1), 8).await;
    let (status, body) = sale.report().await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (409, &json!("queue_not_finished"))
    );

    let now = Timestamp::now();
    assert_eq!(sale.pass(now).await.admitted, 3);
    // Positions 1 and 2 buy; 3 lets their window pass.
    let line = sale.line(8).await;
    sale.buy(&line, 0, "k", now).await;
    sale.buy(&line, 1, "k", now).await;
    assert_eq!(sale.report().await.0, 409, "units are still on sale");
    // Their windows over: 3 lapsed, its unit goes to position 4, who buys.
    let later = now.plus_seconds(600).unwrap();
    let run = sale.pass(later).await;
    assert_eq!((run.lapsed, run.admitted), (1, 1), "{run:?}");
    sale.buy(&line, 3, "k", later).await;
    // Every unit paid: the next pass ends the sale, the four still queued are sold out.
    let run = sale.pass(later.plus_seconds(100).unwrap()).await;
    assert_eq!((run.sold_out, run.finished), (4, 1), "{run:?}");

    assert_eq!(
        sale.report().await,
        (
            200,
            json!({"report": {
                "entrants": 8,
                "admitted": 4,
                "bought": 3,
                "lapsed": 1,
                "unitsSold": 3,
                "unitsLeft": 0,
                "lastAdmittedPosition": 4,
                "excluded": {"human_check_failed": 0},
            }})
        )
    );
    let mut statuses = Vec::new();
    for entry in &line {
        let path = "/api/packs/reported/queue/me";
        let (_, mine) = get(&sale.state, path, Some(entry.user_id.as_str())).await;
        statuses.push(mine["entry"]["status"].as_str().unwrap().to_owned());
    }
    let expected = ["done", "done", "lapsed", "done"]
        .into_iter()
        .chain(["sold_out"; 4]);
    assert!(
        statuses.iter().map(String::as_str).eq(expected),
        "{statuses:?}"
    );
}

/// The line of `cut-short` (three units, two a fan, six fans), its sale over while the second
/// admitted fan's window is open.
async fn cut_short<S: Store + 'static>(store: S) -> Sale<S> {
    // The first pass lets in two fans for the three units.
    let sale = Sale::drawn(store, &queued_pack("cut-short", 3, 2), 6).await;
    let now = Timestamp::now();
    assert_eq!(sale.pass(now).await.admitted, 2);
    let line = sale.line(6).await;
    sale.buy(&line, 0, "a", now).await;
    sale.buy(&line, 0, "b", now).await;
    // The second fan's one unit is the last: the sale is over while their window is open.
    sale.buy(&line, 1, "a", now).await;
    let run = sale.pass(now.plus_seconds(1).unwrap()).await;
    assert_eq!((run.sold_out, run.finished), (4, 1), "{run:?}");
    sale
}

async fn a_sale_over_in_a_fans_window_reports_what_they_bought<S>(store: S)
where
    S: Store + 'static,
{
    let sale = cut_short(store).await;
    let (status, body) = sale.report().await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["report"],
        json!({
            "entrants": 6,
            "admitted": 2,
            "bought": 3,
            "lapsed": 0,
            "unitsSold": 3,
            "unitsLeft": 0,
            "lastAdmittedPosition": 2,
            "excluded": {"human_check_failed": 0},
        })
    );
}

fn refusal(started: Result<Started, StartError>) -> StartRefusal {
    match started {
        Err(StartError::Refused(refusal)) => refusal,
        other => panic!("refused, not {other:?}"),
    }
}

/// G5: a line that finished with units left (windows lapsed) sells them to its entrants, whatever
/// their entry says, within the pack's limit; a fan who did not join still cannot buy.
async fn units_left_after_the_line_sell_to_its_entrants<S>(store: S)
where
    S: Store + 'static,
{
    // Three units, one a fan, four fans: three let in, one buys, two lapse; the fourth is let in
    // for the two units back and lapses too.
    let sale = Sale::drawn(store, &queued_pack("leftover", 3, 1), 4).await;
    let now = Timestamp::now();
    assert_eq!(sale.pass(now).await.admitted, 3);
    let line = sale.line(4).await;
    sale.buy(&line, 0, "k", now).await;
    let later = now.plus_seconds(601).unwrap();
    assert_eq!(sale.pass(later).await.admitted, 1);
    let last = later.plus_seconds(601).unwrap();
    let run = sale.pass(last).await;
    assert_eq!((run.lapsed, run.finished), (1, 1), "{run:?}");
    let (_, queue) = get(&sale.state, "/api/packs/leftover/queue", None).await;
    assert_eq!(queue["queue"]["status"], "finished");
    let (status, report) = sale.report().await;
    assert_eq!((status, &report["report"]["unitsLeft"]), (200, &json!(2)));
    assert_eq!(sale.me(&line, 1).await["mayBuy"], true, "an entrant");
    // The pack's listing says so too.
    let listed = sale
        .state
        .store
        .get_pack(&sale.pack_id)
        .await
        .unwrap()
        .unwrap();
    assert!(listed.pack.line_finished, "the pack item is marked");
    let page = sale
        .state
        .store
        .list_active_packs(&PageRequest {
            now: last,
            limit: 100,
            after: None,
            filter: PackFilter::default(),
        })
        .await
        .unwrap();
    let mut json = String::new();
    page.packs
        .iter()
        .find(|document| document.fields().contains("\"leftover\""))
        .expect("listed")
        .write_json(last, &mut json);
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json["lineFinished"], true, "{json}");
    assert_eq!(sale.me(&line, 0).await["status"], "done");

    // Not joined: refused as before. Lapsed and never-served entrants buy the two units.
    let stranger = testkit::ids::user("stranger");
    let mut request = start(&stranger, &sale.pack_id, "k", last);
    request.expires_at = last.plus_seconds(600).unwrap();
    assert_eq!(
        refusal(sale.state.store.start_purchase(&request).await),
        StartRefusal::NotAdmitted(AdmissionRefusal::NotJoined)
    );
    for n in [1, 3] {
        let started = sale.start(&line, n, "after", (last, 600)).await;
        assert!(
            matches!(started, Ok(Started::Created(_))),
            "{n}: {started:?}"
        );
    }
    // The fan who bought through the line is at the pack's limit; nothing is left anyway.
    assert_eq!(
        refusal(sale.start(&line, 0, "again", (last, 600)).await),
        StartRefusal::LimitReached
    );
    assert_eq!(
        refusal(sale.start(&line, 2, "late", (last, 600)).await),
        StartRefusal::SoldOut
    );
    let entries = sale.line(4).await;
    assert_eq!(
        entries[1].status,
        EntryStatus::Lapsed,
        "the entry is not touched"
    );
}

/// G7: a fan admitted with a limit of one whose hold runs out unpaid inside their window is
/// admitted again and may buy; once their window has closed, a release gives nothing back.
async fn a_hold_released_inside_the_window_gives_the_unit_back<S>(store: S)
where
    S: Store + 'static,
{
    let sale = Sale::drawn(store, &queued_pack("second-chance", 2, 1), 3).await;
    let now = Timestamp::now();
    assert_eq!(sale.pass(now).await.admitted, 2);
    let line = sale.line(3).await;
    // A hold of one minute; the window is ten.
    sale.start(&line, 0, "short", (now, 60)).await.unwrap();
    assert_eq!(sale.me(&line, 0).await["status"], "done");
    let after = now.plus_seconds(61).unwrap();
    let released = sale
        .state
        .store
        .release_holds(None, after, 10)
        .await
        .unwrap();
    assert_eq!(released.released, 1);
    let entry = sale.me(&line, 0).await;
    assert_eq!(
        (&entry["status"], &entry["mayBuy"]),
        (&json!("admitted"), &json!(true))
    );
    // The keeper does not end a window still open, nor let in a third fan for that unit.
    let run = sale.pass(after).await;
    assert_eq!(
        (run.admitted, run.lapsed, run.finished),
        (0, 0, 0),
        "{run:?}"
    );
    let again = sale.start(&line, 0, "again", (after, 600)).await;
    assert!(matches!(again, Ok(Started::Created(_))), "{again:?}");

    // The second fan's hold outlives their window: its release gives nothing back.
    sale.start(&line, 1, "long", (now, 700)).await.unwrap();
    let closed = now.plus_seconds(701).unwrap();
    sale.state
        .store
        .release_holds(None, closed, 10)
        .await
        .unwrap();
    let entries = sale.line(3).await;
    assert_eq!(
        (entries[1].status, entries[1].bought),
        (EntryStatus::Done, 1)
    );
}

/// G8: six units, two a fan, ten fans: waves of three, the next when the first one's windows
/// end; the fans of the third and fourth waves are told one and two windows more.
async fn the_estimate_counts_waves_over_several_windows<S>(store: S)
where
    S: Store + Clone + 'static,
{
    let sale = Sale::drawn(store, &queued_pack("waves", 6, 2), 10).await;
    let now = Timestamp::now();
    assert_eq!(sale.pass(now).await.admitted, 3);
    let line = sale.line(10).await;
    let window = |n: i64| now.plus_seconds(600 * n).unwrap().to_string();
    let estimate = |entry: Value| entry["estimatedAdmissionAt"].as_str().unwrap().to_owned();
    assert_eq!(
        estimate(sale.me(&line, 3).await),
        window(1),
        "position 4: the next wave"
    );
    assert_eq!(estimate(sale.me(&line, 5).await), window(1));
    assert_eq!(estimate(sale.me(&line, 6).await), window(2), "position 7");
    assert_eq!(estimate(sale.me(&line, 9).await), window(3), "position 10");
    // G10: the dashboard's part is the same answer, typed as `QueueEntry`.
    let part = queue_part(sale.state.store.clone());
    for n in [0, 6] {
        let user = line[n].user_id.clone();
        let shown = part(user, sale.pack_id.clone(), Timestamp::now())
            .await
            .unwrap();
        // Asked at two instants: the same answer but for the countdowns.
        let me = sale.me(&line, n).await;
        assert_eq!(without_countdowns(shown), without_countdowns(me), "fan {n}");
    }
}

/// The DynamoDB requests of each public read of a finished line (the most: the units sold are
/// read from the supply's shares), counted at the proxy in front of moto: the numbers
/// docs/design.md states (What one request costs), besides the rate limit's count (these calls
/// reach the routes without the limiter).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn each_public_read_of_a_line_makes_the_requests_the_docs_count() {
    use testkit::fault_proxy::counts;
    let (proxy, store) = testkit::moto::atomic_table().await;
    let sale = cut_short(store).await;
    for (read, made) in [
        // The pack's and the line's items; the shares.
        ("", counts(&[("BatchGetItem", 2)])),
        // Those, then the page.
        ("/entrants", counts(&[("BatchGetItem", 2), ("GetItem", 1)])),
        // Those, then the exclusion counters.
        ("/report", counts(&[("BatchGetItem", 3)])),
    ] {
        let path = format!("/api/packs/cut-short/queue{read}");
        let ((status, body), counted) = proxy.counting(get(&sale.state, &path, None)).await;
        assert_eq!(status, 200, "{path}: {body}");
        assert_eq!(counted, made, "{path}");
    }
}
