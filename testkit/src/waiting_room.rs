//! Waiting rooms for tests (issue 29): a queued pack whose line closed long ago with a recorded
//! quicknet round as its beacon, fans joined through the store, the keeper's close and draw with
//! the drand stub, and the starts of admitted fans.

use std::sync::Arc;

use api::handlers::queue::QueueFnState;
use api::handlers::queue_keeper::{KeeperRun, pass};
use api::http::routes::queue_routes;
use clients::beacon::{BeaconClient, BeaconSource};
use domain::beacon::quicknet;
use domain::ids::{PackId, UserId};
use domain::packs::Pack;
use domain::purchases::{HoldPolicy, StartRequest, purchase_id};
use domain::queue::entry::{QueueEntry, ReceiptSigner};
use domain::queue::terms::{BEACON_MARGIN_SECONDS, QueueTerms};
use domain::timestamp::Timestamp;
use serde_json::Value;
use store::Store;
use store::queue::{GetQueueEntry, JoinQueue, QueueStore};
use store::queue_keeper::QueueKeeper;

use crate::drand::DrandStub;
use crate::events::{ApiEvent, parts};
use crate::ids;

/// A recorded quicknet round (see [`crate::drand`]) the test lines draw with.
pub const ROUND: u64 = 9_367_912;
/// An admitted fan's window in the test lines.
pub const PASS_SECONDS: u32 = 600;

/// The key the test lines' receipts are signed with.
pub fn signer() -> ReceiptSigner {
    ReceiptSigner::from_seed(&[7; 32]).expect("a seed signs")
}

/// A queued pack of `supply` units, `max` a fan, whose line closed long ago with its beacon
/// round [`ROUND`] (a real round the stub serves).
pub fn queued_pack(id: &str, supply: u64, max: u32) -> Pack {
    let round_time = quicknet::time_of(ROUND);
    let closes_at =
        Timestamp::from_unix_nanos(i128::from(round_time - BEACON_MARGIN_SECONDS) * 1_000_000_000)
            .expect("in range");
    let mut pack = crate::packs::active(id, 0);
    pack.total_supply = supply;
    pack.remaining = supply;
    pack.max_per_user = Some(max);
    pack.sale_starts_at = Some(closes_at);
    pack.queue = Some(QueueTerms {
        opens_at: closes_at.plus_seconds(-3600).expect("in range"),
        closes_at,
        pass_seconds: PASS_SECONDS,
    });
    assert_eq!(pack.queue.expect("queued").beacon_round(), ROUND);
    pack
}

/// The `n`th fan of a test line.
pub fn fan(n: usize) -> UserId {
    ids::user(&format!("fan-{n}"))
}

/// `pack` seeded and fans `0..fans` joined.
pub async fn line<S: Store>(store: &S, pack: &Pack, fans: usize) -> PackId {
    crate::packs::save(store, pack).await;
    let pack_id = ids::pack(&pack.id);
    join(store, &pack_id, fans).await;
    pack_id
}

/// Fans `0..fans` join `pack_id`'s line: their entries, in that order.
pub async fn join<S: JoinQueue>(store: &S, pack_id: &PackId, fans: usize) -> Vec<QueueEntry> {
    let signer = signer();
    let mut entries = Vec::new();
    for n in 0..fans {
        let entry = QueueEntry::new(pack_id.clone(), fan(n), Timestamp::now(), &signer);
        store.join_queue(&entry).await.expect("joins");
        entries.push(entry);
    }
    entries
}

/// The drand stub serving the recorded rounds, and a client of it.
pub async fn beacon() -> (DrandStub, BeaconClient) {
    let stub = DrandStub::start().await;
    let client = BeaconClient::new(BeaconSource::Relays(vec![stub.url()]));
    (stub, client)
}

/// When a keeper on time closes the test lines: a minute after their close, four minutes before
/// their round [`ROUND`] (a close at the test's real time would be years late for that round,
/// which would move it to one the stub does not have).
pub fn on_time() -> Timestamp {
    let at = quicknet::time_of(ROUND) - BEACON_MARGIN_SECONDS + 60;
    Timestamp::from_unix_nanos(i128::from(at) * 1_000_000_000).expect("in range")
}

/// Closes (on time) and draws every pending line: two keeper passes.
pub async fn close_and_draw<S: QueueKeeper>(store: &S, beacon: &BeaconClient) -> KeeperRun {
    let mut run = KeeperRun::default();
    for at in [on_time(), Timestamp::now()] {
        pass(store, beacon, at, &mut run)
            .await
            .expect("a keeper pass");
    }
    run
}

/// A start of `pack_id` by `user` (idempotency key `key`) at `now`, funds not checked.
pub fn start(user: &UserId, pack_id: &PackId, key: &str, now: Timestamp) -> StartRequest {
    StartRequest {
        user_id: user.clone(),
        pack_id: pack_id.clone(),
        purchase_id: purchase_id(user, key),
        requested_seed: None,
        client_seed: "seed".into(),
        now,
        expires_at: now.plus_seconds(600).expect("in range"),
        policy: HoldPolicy {
            max_unpaid: 10,
            requires_funds: false,
        },
        human_checked: false,
    }
}

/// The entries of fans `0..fans` of `pack_id`'s line, by position.
pub async fn by_position<S: GetQueueEntry>(
    store: &S,
    pack_id: &PackId,
    fans: usize,
) -> Vec<QueueEntry> {
    let mut entries = Vec::new();
    for n in 0..fans {
        entries.push(
            store
                .queue_entry(pack_id, &fan(n))
                .await
                .expect("an entry read")
                .expect("joined"),
        );
    }
    entries.sort_by_key(|e| e.position);
    entries
}

/// The queue function's state over `store`, its receipts signed by [`signer`], its human check
/// asking the shared [`crate::turnstile::TurnstileStub`].
pub fn api<S>(store: S) -> Arc<QueueFnState<S>> {
    Arc::new(QueueFnState::new(
        store,
        crate::tokens::verifier(),
        signer(),
        crate::turnstile::human_check(),
    ))
}

/// `GET path` of the queue function (as `who`, signed in, when given): status and body.
pub async fn get<S: QueueStore + 'static>(
    state: &Arc<QueueFnState<S>>,
    path: &str,
    who: Option<&str>,
) -> (u16, Value) {
    let (path, query) = path.split_once('?').unwrap_or((path, ""));
    let mut event = ApiEvent::get(path);
    if !query.is_empty() {
        event = event.query(query);
    }
    if let Some(who) = who {
        event = event.bearer(&crate::tokens::token(who, None));
    }
    parts(&crate::events::call(queue_routes(), state, event.request()).await)
}

/// Every page of `pack`'s entrants list, following `nextCursor` from the first.
pub async fn entrant_pages<S: QueueStore + 'static>(
    state: &Arc<QueueFnState<S>>,
    pack: &str,
) -> Vec<Value> {
    let mut pages = Vec::new();
    let mut path = format!("/api/packs/{pack}/queue/entrants");
    loop {
        let (status, page) = get(state, &path, None).await;
        assert_eq!(status, 200, "{path}: {page}");
        let next = page["nextCursor"].as_str().map(str::to_owned);
        pages.push(page);
        match next {
            Some(cursor) => path = format!("/api/packs/{pack}/queue/entrants?cursor={cursor}"),
            None => return pages,
        }
    }
}
