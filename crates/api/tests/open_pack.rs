//! Opening a pack: exactly once, with the published draw, on both stores (DynamoStore on moto
//! through a one-request-at-a-time proxy, and MemoryStore); the reveal of the server seed; and
//! `scripts/verify-draw` run on purchases really opened through the API.

use api::http::routes::{
    get_pack_routes, get_purchase_routes, me_purchases_routes, open_pack_routes,
};
use std::sync::Arc;
use testkit::ids;

use api::handlers::get_pack::GetPackState;
use api::state::PurchaseState;
use domain::packs::draw::{DrawInput, ServerSeed, draw};
use domain::packs::{Odds, Pack, PackItem, reveal_at, seed_revealed};
use domain::purchases::{
    CompleteRefusal, MAX_HOLD_SECONDS, OpenRefusal, Purchase, PurchaseStatus, StartRequest,
    purchase_id,
};
use domain::timestamp::Timestamp;
use serde_json::Value;
use store::Store;
use store::purchases::{CompleteError, Completed, OpenError, Opened, Started};
use testkit::events::{ApiEvent, call, parts};
use testkit::packs::{active, at};

testkit::store_contract!(
    arc:
    an_open_draws_the_published_items_once,
    ten_concurrent_opens_write_one_draw_and_all_answer_it,
    only_the_buyers_paid_purchase_opens,
    no_hold_can_be_paid_once_the_seed_is_revealed,
    a_sale_ended_early_closes_payments_before_its_seed_is_revealed,
    the_verifier_agrees_with_packs_opened_through_the_api,
    a_purchase_opened_before_the_reveal_shows_the_seed_once_published,
    the_sweep_publishes_a_revealed_seed,
    each_opening_adds_to_the_fans_stats_once,
);

/// A pack with three rarities, items of each, and six slots.
fn drop_pack(id: &str, started_seconds_ago: i64) -> Pack {
    let mut pack = active(id, started_seconds_ago);
    pack.items_per_pack = 6;
    pack.odds = [("common", 7000), ("rare", 2500), ("legendary", 500)]
        .into_iter()
        .map(|(rarity, chance_bps)| Odds {
            rarity: rarity.into(),
            chance_bps,
        })
        .collect();
    pack.items = [
        ("c1", "common"),
        ("c2", "common"),
        ("c3", "common"),
        ("r1", "rare"),
        ("r2", "rare"),
        ("l1", "legendary"),
    ]
    .into_iter()
    .map(|(item, rarity)| PackItem {
        id: format!("{id}-{item}"),
        name: format!("Card {item}"),
        rarity: rarity.into(),
        image_url: Some(format!("https://cdn.example.com/{item}.png")),
    })
    .collect();
    pack
}

fn start_at(user: &str, pack_id: &str, key: &str, now: Timestamp) -> StartRequest {
    StartRequest {
        user_id: ids::user(user),
        pack_id: ids::pack(pack_id),
        purchase_id: purchase_id(&ids::user(user), key),
        requested_seed: Some(format!("seed of {user} \"{key}\"")),
        client_seed: format!("seed of {user} \"{key}\""),
        now,
        expires_at: now.plus_seconds(600).unwrap(),
        policy: testkit::purchases::ROOMY,
        human_checked: false,
    }
}

/// A purchase of `pack_id` by `user`, paid, all at `when`.
async fn paid(
    store: &impl Store,
    user: &str,
    pack_id: &str,
    key: &str,
    when: Timestamp,
) -> Purchase {
    let credit =
        domain::cash::parse_credit(user, "100000", "USD", &format!("{user}-{key}")).unwrap();
    store.credit_cash(&credit, when).await.unwrap();
    let Ok(Started::Created(purchase)) = store
        .start_purchase(&start_at(user, pack_id, key, when))
        .await
    else {
        panic!("started")
    };
    let Ok(Completed::Paid { purchase, .. }) = store
        .complete_purchase(&ids::user(user), &ids::pack(pack_id), &purchase.id, when)
        .await
    else {
        panic!("paid")
    };
    purchase
}

/// The items of `purchase` drawn with `seed`, computed apart from the store.
fn expected_items(pack: &Pack, seed: &ServerSeed, purchase: &Purchase) -> Vec<String> {
    let input = DrawInput {
        pack_id: &pack.id,
        user_id: purchase.user_id.as_str(),
        nonce: purchase.nonce,
        client_seed: &purchase.client_seed,
    };
    draw(seed, &pack.odds, &pack.items, pack.items_per_pack, &input)
        .unwrap()
        .into_iter()
        .map(|index| pack.items[index].id.clone())
        .collect()
}

fn item_ids(purchase: &Purchase) -> Vec<String> {
    purchase
        .items
        .as_ref()
        .expect("opened")
        .iter()
        .map(|item| item.item_id.clone())
        .collect()
}

async fn an_open_draws_the_published_items_once(store: Arc<impl Store>) {
    let pack = drop_pack("p", 60);
    testkit::packs::save(&*store, &pack).await;
    let seed = store
        .get_pack(&testkit::ids::pack("p"))
        .await
        .unwrap()
        .unwrap()
        .seed;
    let purchase = paid(&*store, "fan", "p", "k", Timestamp::now()).await;
    let now = Timestamp::now();
    let first = store
        .open_purchase(&ids::user("fan"), &ids::pack("p"), &purchase.id, now)
        .await
        .unwrap();
    assert!(!first.repeated);
    assert_eq!(first.purchase.status, PurchaseStatus::Opened);
    assert_eq!(first.purchase.opened_at, Some(now));
    assert_eq!(
        item_ids(&first.purchase),
        expected_items(&pack, &seed, &purchase)
    );
    let slots: Vec<u32> = first
        .purchase
        .items
        .as_ref()
        .unwrap()
        .iter()
        .map(|i| i.slot)
        .collect();
    assert_eq!(slots, [0, 1, 2, 3, 4, 5]);
    assert_eq!(first.fairness.server_seed_hash, seed.commitment());
    assert_eq!(first.fairness.server_seed, None, "the sale has not ended");
    let again = store
        .open_purchase(&ids::user("fan"), &ids::pack("p"), &purchase.id, at(5))
        .await
        .unwrap();
    assert_eq!(
        again,
        Opened {
            repeated: true,
            ..first.clone()
        }
    );
    assert_eq!(
        store
            .get_purchase(&ids::user("fan"), &purchase.id)
            .await
            .unwrap(),
        Some(first.purchase)
    );
}

async fn ten_concurrent_opens_write_one_draw_and_all_answer_it(store: Arc<impl Store + 'static>) {
    testkit::packs::save(&*store, &drop_pack("p", 60)).await;
    let purchase = paid(&*store, "fan", "p", "k", Timestamp::now()).await;
    let barrier = Arc::new(tokio::sync::Barrier::new(10));
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..10 {
        let (store, barrier, id) = (store.clone(), barrier.clone(), purchase.id.clone());
        tasks.spawn(async move {
            barrier.wait().await;
            store
                .open_purchase(&ids::user("fan"), &ids::pack("p"), &id, Timestamp::now())
                .await
                .unwrap()
        });
    }
    let answers = tasks.join_all().await;
    assert_eq!(
        answers.iter().filter(|a| !a.repeated).count(),
        1,
        "one write"
    );
    let written = store
        .get_purchase(&ids::user("fan"), &purchase.id)
        .await
        .unwrap()
        .unwrap();
    for answer in &answers {
        assert_eq!(answer.purchase, written, "every answer is the written draw");
    }
}

async fn only_the_buyers_paid_purchase_opens(store: Arc<impl Store>) {
    testkit::packs::save(&*store, &drop_pack("p", 7200)).await;
    testkit::packs::save(&*store, &drop_pack("q", 7200)).await;
    let purchase = paid(&*store, "fan", "p", "paid", Timestamp::now()).await;
    let Ok(Started::Created(reserved)) = store
        .start_purchase(&start_at("fan", "p", "reserved", Timestamp::now()))
        .await
    else {
        panic!("started")
    };
    let Ok(Started::Created(expired)) = store
        .start_purchase(&start_at("fan", "p", "expired", at(-1200)))
        .await
    else {
        panic!("started")
    };
    let now = Timestamp::now();
    for (user, pack_id, id, refusal) in [
        ("fan", "p", &reserved.id, OpenRefusal::NotCompleted),
        ("fan", "p", &expired.id, OpenRefusal::Expired),
        ("other", "p", &purchase.id, OpenRefusal::NotFound),
        ("fan", "q", &purchase.id, OpenRefusal::NotFound),
        ("fan", "p", &ids::purchase("nope"), OpenRefusal::NotFound),
    ] {
        assert_eq!(
            store
                .open_purchase(&ids::user(user), &ids::pack(pack_id), id, now)
                .await,
            Err(OpenError::Refused(refusal.clone())),
            "{user} {pack_id} {id}"
        );
    }
}

/// Revealing the seed while a hold could still be paid would let its buyer compute the draw
/// and pay only for a good one. The latest hold starts just before the sale ends and lasts the
/// longest hold allowed: it has run out when the seed is revealed, and not a second before.
async fn no_hold_can_be_paid_once_the_seed_is_revealed(store: Arc<impl Store>) {
    let mut pack = drop_pack("p", 7200);
    let sale_ends = at(-3599);
    pack.sale_ends_at = Some(sale_ends);
    // Written whole before its end passed, as an operator would have.
    testkit::packs::save(&*store, &pack).await;
    let reveal = reveal_at(Some(sale_ends)).unwrap();
    let last_moment =
        Timestamp::from_datetime(sale_ends.datetime() - time::Duration::nanoseconds(1)).unwrap();
    let mut request = start_at("late", "p", "k", last_moment);
    request.expires_at = last_moment.plus_seconds(MAX_HOLD_SECONDS as i64).unwrap();
    let Ok(Started::Created(hold)) = store.start_purchase(&request).await else {
        panic!("a start a nanosecond before the end is on sale")
    };
    let credit = domain::cash::parse_credit("late", "100000", "USD", "late").unwrap();
    store.credit_cash(&credit, Timestamp::now()).await.unwrap();
    assert!(hold.expires_at < reveal);
    assert!(!seed_revealed(
        Some(sale_ends),
        Timestamp::from_datetime(reveal.datetime() - time::Duration::seconds(1)).unwrap()
    ));
    assert_eq!(
        store
            .complete_purchase(&ids::user("late"), &ids::pack("p"), &hold.id, reveal)
            .await,
        Err(CompleteError::Refused(CompleteRefusal::Expired)),
        "at the reveal the last hold has run out"
    );
}

/// An operator ends a sale "now" while a start is landing: the start, decided on the old end,
/// holds a unit for the longest hold from its own time, 100 ms past the reveal (the new end
/// plus the reveal delay). Payments close 5 s before the reveal, so its buyer cannot see the
/// seed and then pay only for a good draw.
async fn a_sale_ended_early_closes_payments_before_its_seed_is_revealed(store: Arc<impl Store>) {
    let mut pack = drop_pack("p", 7200);
    pack.sale_ends_at = Some(at(86_400));
    testkit::packs::save(&*store, &pack).await;
    let credit = domain::cash::parse_credit("buyer", "100000", "USD", "buyer").unwrap();
    store.credit_cash(&credit, Timestamp::now()).await.unwrap();
    let decided = Timestamp::now();
    let landed =
        Timestamp::from_datetime(decided.datetime() + time::Duration::milliseconds(100)).unwrap();
    let mut request = start_at("buyer", "p", "k", landed);
    request.expires_at = landed.plus_seconds(MAX_HOLD_SECONDS as i64).unwrap();
    let Ok(Started::Created(hold)) = store.start_purchase(&request).await else {
        panic!("on sale until the operator's write")
    };
    pack.sale_ends_at = Some(decided);
    store::packs::seed(&*store, &pack, decided)
        .await
        .expect("ending a sale now is allowed");

    let reveal = reveal_at(Some(decided)).unwrap();
    let after = |millis| {
        Timestamp::from_datetime(reveal.datetime() + time::Duration::milliseconds(millis)).unwrap()
    };
    assert!(seed_revealed(Some(decided), after(50)) && after(50) < hold.expires_at);
    for now in [after(-5000), after(50)] {
        assert_eq!(
            store
                .complete_purchase(&ids::user("buyer"), &ids::pack("p"), &hold.id, now)
                .await,
            Err(CompleteError::Refused(CompleteRefusal::SaleClosed)),
            "at {now}"
        );
    }
    let paid = store
        .complete_purchase(&ids::user("buyer"), &ids::pack("p"), &hold.id, after(-5001))
        .await;
    assert!(matches!(paid, Ok(Completed::Paid { .. })), "{paid:?}");
}

fn purchase_state<S>(store: S) -> Arc<PurchaseState<S>> {
    Arc::new(PurchaseState {
        store,
        verifier: testkit::tokens::verifier(),
        hold: std::time::Duration::from_secs(600),
        max_body_bytes: api::http::request::DEFAULT_MAX_BODY_BYTES,
        policy: testkit::purchases::ROOMY,
        human: None,
    })
}

/// Runs `scripts/verify-draw` on the two API answers; its exit code and output.
fn verify_draw(pack: &Value, purchase: &Value, user: &str) -> (Option<i32>, String) {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let dir = std::env::temp_dir();
    let name = format!(
        "{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    let (pack_file, purchase_file) = (
        dir.join(format!("pack-{name}.json")),
        dir.join(format!("purchase-{name}.json")),
    );
    std::fs::write(&pack_file, pack.to_string()).unwrap();
    std::fs::write(&purchase_file, purchase.to_string()).unwrap();
    let output = std::process::Command::new("python3")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../scripts/verify-draw"
        ))
        .args(["--pack", pack_file.to_str().unwrap()])
        .args(["--purchase", purchase_file.to_str().unwrap()])
        .args(["--user", user])
        .output()
        .unwrap();
    let _ = std::fs::remove_file(pack_file);
    let _ = std::fs::remove_file(purchase_file);
    (
        output.status.code(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ),
    )
}

async fn the_verifier_agrees_with_packs_opened_through_the_api(
    store: Arc<impl Store + Clone + 'static>,
) {
    // A drop whose sale ran from three hours ago to two hours ago: its seed is public now, and
    // its buyers paid while it was on sale.
    let mut pack = drop_pack("drop", 3 * 3600);
    let sale_ends = at(-2 * 3600);
    pack.sale_ends_at = Some(sale_ends);
    store::packs::seed(&*store, &pack, at(-2 * 3600 - 60))
        .await
        .unwrap();
    let state = purchase_state((*store).clone());
    let pack_state = Arc::new(GetPackState {
        store: (*store).clone(),
        recent: Default::default(),
    });
    let (status, pack_json) = parts(
        &call(
            get_pack_routes(),
            &pack_state,
            ApiEvent::get("/api/packs/drop").request(),
        )
        .await,
    );
    assert_eq!(status, 200);
    assert!(
        pack_json["pack"]["fairness"]["serverSeed"].is_string(),
        "{pack_json}"
    );
    let mut checked = 0;
    for buyer in 0..12 {
        let user = format!("buyer-{buyer}");
        let when = at(-2 * 3600 - 600 + buyer);
        let purchase = paid(&*store, &user, "drop", &format!("key-{buyer}"), when).await;
        let token = testkit::tokens::token(&user, None);
        let path = format!("/api/packs/drop/purchases/{}/open", purchase.id);
        let event = if buyer % 2 == 0 {
            ApiEvent::post(&path).bearer(&token)
        } else {
            ApiEvent::post(&path).bearer(&token).json("{}")
        };
        let (status, opened) = parts(&call(open_pack_routes(), &state, event.request()).await);
        assert_eq!(status, 200, "{opened}");
        assert_eq!(
            opened["purchase"]["fairness"]["algorithm"],
            "hmac-sha256-v1"
        );
        assert_eq!(
            opened["purchase"]["fairness"]["serverSeed"],
            pack_json["pack"]["fairness"]["serverSeed"]
        );
        let (code, report) = verify_draw(&pack_json, &opened, &user);
        assert_eq!(code, Some(0), "{report}");
        assert!(report.contains("MATCH"), "{report}");
        // Another buyer's id does not verify: the draw is the buyer's own.
        let (code, report) = verify_draw(&pack_json, &opened, "someone-else");
        assert_eq!(code, Some(1), "{report}");
        checked += 1;
    }
    assert_eq!(checked, 12);
}

/// The fairness promise: every purchase of a revealed pack shows its seed. One opened before the
/// reveal kept `serverSeed: null`; once the sweep has published the revealed seed on the pack's
/// public item, get-purchase shows it (and nothing is published before the reveal).
async fn a_purchase_opened_before_the_reveal_shows_the_seed_once_published(
    store: Arc<impl Store + Clone + 'static>,
) {
    let purchase = opened_before_its_packs_reveal(&*store).await;
    let state = purchase_state((*store).clone());
    let shown = || seed_shown(&state, &purchase);
    assert_eq!(shown().await, Value::Null, "opened before the reveal");
    // A sweep before the reveal publishes nothing.
    let before_reveal = at(-200);
    assert_eq!(
        store.publish_revealed_seeds(before_reveal).await.unwrap(),
        0
    );
    assert_eq!(shown().await, Value::Null);
    assert_eq!(
        store
            .publish_revealed_seeds(Timestamp::now())
            .await
            .unwrap(),
        1
    );
    assert_eq!(
        store
            .publish_revealed_seeds(Timestamp::now())
            .await
            .unwrap(),
        0,
        "once"
    );
    let seed = store
        .get_pack(&testkit::ids::pack("p"))
        .await
        .unwrap()
        .unwrap()
        .seed;
    assert_eq!(shown().await, Value::String(seed.to_hex()));
}

/// Fan "fan"'s purchase of pack "p", paid and opened before the sale ended (an hour ago), so
/// before its seed was revealed.
async fn opened_before_its_packs_reveal(store: &impl Store) -> Purchase {
    let mut pack = drop_pack("p", 86_400);
    pack.sale_ends_at = Some(at(-3700));
    testkit::packs::save(store, &pack).await;
    let purchase = paid(store, "fan", "p", "k", at(-7200)).await;
    store
        .open_purchase(&ids::user("fan"), &ids::pack("p"), &purchase.id, at(-7100))
        .await
        .unwrap();
    purchase
}

/// The `serverSeed` get-purchase shows its buyer on `purchase` (of pack "p", fan "fan"), which
/// the fan's list of purchases shows alike (each purchase as GET of it answers).
async fn seed_shown<S: Store + Clone + 'static>(
    state: &Arc<PurchaseState<S>>,
    purchase: &Purchase,
) -> Value {
    use api::state::MeState;
    let token = testkit::tokens::token("fan", None);
    let event = ApiEvent::get(&format!("/api/packs/p/purchases/{}", purchase.id))
        .bearer(&token)
        .request();
    let (status, body) = parts(&call(get_purchase_routes(), state, event).await);
    assert_eq!(status, 200, "{body}");
    let seed = body["purchase"]["fairness"]["serverSeed"].clone();
    let me = Arc::new(MeState {
        store: state.store.clone(),
        verifier: testkit::tokens::verifier(),
        cursors: testkit::cursor_signer(),
        revealed: Default::default(),
    });
    let list = ApiEvent::get("/api/me/purchases").bearer(&token).request();
    let (status, page) = parts(&call(me_purchases_routes(), &me, list).await);
    assert_eq!(status, 200, "{page}");
    assert_eq!(
        page["purchases"][0], body["purchase"],
        "listed as GET answers it"
    );
    seed
}

/// The sweep is what publishes a revealed seed (issue 21 3d): one run of the release-holds
/// handler after the reveal publishes it, and get-purchase then shows it on a purchase opened
/// before the reveal.
async fn the_sweep_publishes_a_revealed_seed(store: Arc<impl Store + Clone + 'static>) {
    use api::handlers::release_holds::{SweepState, release_holds};
    let purchase = opened_before_its_packs_reveal(&*store).await;
    let state = purchase_state((*store).clone());
    assert_eq!(seed_shown(&state, &purchase).await, Value::Null);
    let sweep = SweepState {
        store: (*store).clone(),
        budget: std::time::Duration::from_secs(5),
        refresh_again_after: None,
    };
    let swept = release_holds(&sweep, ()).await.unwrap();
    assert_eq!(swept.seeds_published, 1, "{swept:?}");
    let seed = store
        .get_pack(&testkit::ids::pack("p"))
        .await
        .unwrap()
        .unwrap()
        .seed;
    assert_eq!(
        seed_shown(&state, &purchase).await,
        Value::String(seed.to_hex())
    );
}

/// The stats a locker room shows are kept by the openings' own writes: three purchases, each
/// opened by two racing requests, count three openings and their items, by rarity, exactly.
async fn each_opening_adds_to_the_fans_stats_once(store: Arc<impl Store + 'static>) {
    testkit::packs::save(&*store, &drop_pack("p", 60)).await;
    let mut ids_paid = Vec::new();
    for key in ["k1", "k2", "k3"] {
        ids_paid.push(paid(&*store, "fan", "p", key, Timestamp::now()).await.id);
    }
    let mut tasks = tokio::task::JoinSet::new();
    for id in ids_paid.iter().chain(&ids_paid) {
        let (store, id) = (store.clone(), id.clone());
        tasks.spawn(async move {
            store
                .open_purchase(&ids::user("fan"), &ids::pack("p"), &id, Timestamp::now())
                .await
                .unwrap()
        });
    }
    let answers = tasks.join_all().await;
    let firsts: Vec<&Purchase> = answers
        .iter()
        .filter(|answer| !answer.repeated)
        .map(|answer| &answer.purchase)
        .collect();
    assert_eq!(firsts.len(), 3);
    let expected = domain::locker_room::stats::LockerStats::of_openings(
        firsts.iter().map(|p| p.items.as_deref().unwrap()),
    );
    let empty = domain::locker_room::LockerRoomBody {
        title: None,
        items: Vec::new(),
    };
    let room = store
        .put_locker_room(&ids::user("fan"), &empty, Timestamp::now())
        .await
        .unwrap();
    assert_eq!(room.stats, expected);
    assert_eq!((room.stats.packs_opened, room.stats.items_owned), (3, 18));
    let other = store
        .put_locker_room(&ids::user("other"), &empty, Timestamp::now())
        .await
        .unwrap();
    assert_eq!(
        other.stats,
        Default::default(),
        "another fan's stats are apart"
    );
}
