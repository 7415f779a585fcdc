//! Issue 44: every answer naming an instant a client counts down to also says how many
//! milliseconds from the answer it is (`<x>InMs` beside `<x>At`, 0 once passed, null when the
//! instant is), through the handlers on both stores: the packs (a page, one pack, the
//! dashboard's drops), a line and a fan's entry in it, a purchase's hold and the quests. One
//! instant per answer: two countdowns to one instant agree to the millisecond.

use std::sync::Arc;

use api::handlers::dashboard::{DashboardState, queue_part};
use api::handlers::get_pack::{GetPackState, RecentPacks};
use api::handlers::list_packs::ListPacksState;
use api::handlers::queue_keeper::{KeeperRun, pass};
use api::http::routes::{
    Routes, dashboard_routes, get_pack_routes, get_purchase_routes, list_packs_routes,
    quests_routes, queue_routes, start_purchase_routes,
};
use api::state::MeState;
use domain::timestamp::Timestamp;
use serde_json::Value;
use store::Store;
use store::purchases::Started;
use testkit::countdowns::{Asked, asked};
use testkit::events::{ApiEvent, call, parts};
use testkit::packs::{active, at, ending, queued, save};
use testkit::tokens::token;
use testkit::waiting_room::{beacon, by_position, close_and_draw, line, queued_pack};

testkit::store_contract!(
    by_value:
    packs_count_down_to_their_sale_and_their_line,
    a_fan_in_a_line_counts_down_to_admission_and_their_window,
    a_hold_counts_down_to_its_expiry,
    quests_count_down_to_their_start_and_end,
);

/// `event` to the function of `routes` over `state`: status, body, and when it was asked.
async fn ask<St: Send + Sync + 'static>(
    routes: Routes<Arc<St>>,
    state: &Arc<St>,
    event: ApiEvent,
) -> (u16, Value, Asked) {
    let (response, asked) = asked(call(routes, state, event.request())).await;
    let (status, body) = parts(&response);
    (status, body, asked)
}

/// `GET path` as `fan`.
fn signed_in(path: &str, fan: &str) -> ApiEvent {
    ApiEvent::get(path).bearer(&token(fan, None))
}

/// A pack on sale since a minute ago, ending in a minute; one whose line opens in a minute and
/// closes as its sale starts, in two; one whose line opened a minute ago.
async fn packs_count_down_to_their_sale_and_their_line<S: Store + Clone + 'static>(store: S) {
    let live = ending(active("live", 60), 60);
    for pack in [&live, &queued("soon", 60, 120), &queued("open", -60, 60)] {
        save(&store, pack).await;
    }

    let state = Arc::new(ListPacksState {
        store: store.clone(),
        cursors: testkit::cursor_signer(),
    });
    let (status, page, asked) = ask(list_packs_routes(), &state, ApiEvent::get("/api/packs")).await;
    assert_eq!(status, 200, "{page}");
    let listed = &page["packs"][0];
    assert_eq!(
        (&listed["id"], &page["packs"][1]),
        (&"live".into(), &Value::Null)
    );
    assert_eq!(asked.assert_counts_down(listed, "saleStarts"), Some(0));
    assert!(asked.assert_counts_down(listed, "saleEnds") > Some(0));

    let state = Arc::new(GetPackState {
        store: store.clone(),
        recent: RecentPacks::default(),
    });
    let (status, soon, asked) =
        ask(get_pack_routes(), &state, ApiEvent::get("/api/packs/soon")).await;
    assert_eq!(status, 200, "{soon}");
    let soon = &soon["pack"];
    let starts = asked.assert_counts_down(soon, "saleStarts");
    assert_eq!(asked.assert_counts_down(soon, "saleEnds"), None);
    assert!(asked.assert_counts_down(&soon["queue"], "opens") > Some(0));
    assert_eq!(asked.assert_counts_down(&soon["queue"], "closes"), starts);
    let (_, open, asked) = ask(get_pack_routes(), &state, ApiEvent::get("/api/packs/open")).await;
    assert_eq!(
        asked.assert_counts_down(&open["pack"]["queue"], "opens"),
        Some(0)
    );

    let state = testkit::waiting_room::api(store.clone());
    for (pack, opened) in [("soon", false), ("open", true)] {
        let path = format!("/api/packs/{pack}/queue");
        let (status, queue, asked) = ask(queue_routes(), &state, ApiEvent::get(&path)).await;
        assert_eq!(status, 200, "{queue}");
        let opens = asked.assert_counts_down(&queue["queue"], "opens");
        assert_eq!(opens == Some(0), opened, "{queue}");
        assert!(asked.assert_counts_down(&queue["queue"], "closes") > Some(0));
    }

    let state = Arc::new(DashboardState {
        store: store.clone(),
        verifier: testkit::tokens::verifier(),
        quests: None,
        queue: Some(queue_part(store)),
    });
    let event = signed_in("/api/dashboard", "fan");
    let (status, home, asked) = ask(dashboard_routes(), &state, event).await;
    assert_eq!(status, 200, "{home}");
    let drops = home["drops"].as_array().expect("drops");
    for drop in drops {
        let pack = &drop["pack"];
        let starts = asked.assert_counts_down(pack, "saleStarts");
        assert_eq!(starts == Some(0), drop["phase"] == "live", "{drop}");
        asked.assert_counts_down(pack, "saleEnds");
        if pack["id"] == "soon" {
            assert_eq!(asked.assert_counts_down(&pack["queue"], "closes"), starts);
        }
    }
    assert_eq!(drops.len(), 3, "{home}");
}

/// One unit, three fans: the first admitted, with their window; the next two queued, with the
/// latest they may expect admission.
async fn a_fan_in_a_line_counts_down_to_admission_and_their_window<S: Store + 'static>(store: S) {
    let (_stub, beacon) = beacon().await;
    let pack_id = line(&store, &queued_pack("line", 1, 1), 3).await;
    close_and_draw(&store, &beacon).await;
    let mut run = KeeperRun::default();
    pass(&store, &beacon, Timestamp::now(), &mut run)
        .await
        .unwrap();
    assert_eq!(run.admitted, 1, "{run:?}");
    let entries = by_position(&store, &pack_id, 3).await;
    let state = testkit::waiting_room::api(store);
    for (entry, admitted) in entries.iter().zip([true, false, false]) {
        let event = signed_in("/api/packs/line/queue/me", entry.user_id.as_str());
        let (status, body, asked) = ask(queue_routes(), &state, event).await;
        assert_eq!(status, 200, "{body}");
        let entry = &body["entry"];
        let window = asked.assert_counts_down(entry, "passExpires");
        let admission = asked.assert_counts_down(entry, "estimatedAdmission");
        assert_eq!(
            (window.is_some(), admission.is_some()),
            (admitted, !admitted),
            "{entry}"
        );
    }
}

/// A hold started now counts down exactly its length; one that ran out, 0.
async fn a_hold_counts_down_to_its_expiry<S: Store + 'static>(store: S) {
    save(&store, &active("p", 600)).await;
    let old = testkit::purchases::start_request("fan", "p", "old", at(-120), 60);
    let Ok(Started::Created(old)) = store.start_purchase(&old).await else {
        panic!("reserved");
    };
    let state = crate::purchase_handlers::state(store);
    let event = ApiEvent::post("/api/packs/p/purchases")
        .bearer(&token("fan", None))
        .header("idempotency-key", "new");
    let (status, started, asked) = ask(start_purchase_routes(), &state, event).await;
    assert_eq!(status, 201, "{started}");
    let purchase = &started["purchase"];
    assert_eq!(asked.assert_counts_down(purchase, "expires"), Some(600_000));

    for (id, status) in [
        (purchase["id"].as_str().unwrap(), "reserved"),
        (old.id.as_str(), "expired"),
    ] {
        let path = format!("/api/packs/p/purchases/{id}");
        let (code, read, asked) = ask(get_purchase_routes(), &state, signed_in(&path, "fan")).await;
        assert_eq!(
            (code, &read["purchase"]["status"]),
            (200, &status.into()),
            "{read}"
        );
        let left = asked.assert_counts_down(&read["purchase"], "expires");
        assert_eq!(left == Some(0), status == "expired", "{read}");
    }
}

/// A quest on since a day and one starting in a day: both count down to their end, the later
/// one to its start too.
async fn quests_count_down_to_their_start_and_end<S: Store + 'static>(store: S) {
    let mut quests = testkit::quests::shipped();
    quests.truncate(2);
    quests[0].starts_at = at(-86_400);
    quests[0].ends_at = at(86_400);
    quests[1].starts_at = at(86_400);
    quests[1].ends_at = at(2 * 86_400);
    store.seed_quests(&quests).await.unwrap();
    let state = Arc::new(MeState {
        store,
        verifier: testkit::tokens::verifier(),
        cursors: testkit::cursor_signer(),
        revealed: Default::default(),
    });
    for (quest, started) in quests.iter().zip([true, false]) {
        let path = format!("/api/quests/{}", quest.id);
        let (status, body, asked) = ask(quests_routes(), &state, signed_in(&path, "fan")).await;
        assert_eq!(status, 200, "{body}");
        let starts = asked.assert_counts_down(&body["quest"], "starts");
        assert_eq!(starts == Some(0), started, "{body}");
        assert!(asked.assert_counts_down(&body["quest"], "ends") > starts);
    }
}
