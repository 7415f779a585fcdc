//! A queued drop end to end through the real binaries on moto_server (issue 29): fans join a
//! line open now through `queue`, `queue-keeper` closes it, draws it and admits by position,
//! admitted fans start through `start-purchase` (the others refused 403
//! `queue_admission_required`) and pay through `complete-purchase`, the keeper finishes the line
//! and `queue`'s report has the exact counts (once `release-holds` refreshed the pack's summary); `scripts/verify-queue` recomputes every position
//! from the public answers alone.
//!
//! The keeper draws with the local beacon (`DRAND_LOCAL_BEACON=1`): a line open now draws with a
//! quicknet round five minutes after its close, which no recording holds (the drand relays'
//! path through the binary is `queue_keeper.rs`'s). The functions started after the joins run
//! their clocks ahead (`CLOCK_SKEW_SECONDS`), so that the close and the round's time come in
//! seconds, as a deployed keeper would meet them minutes later.

use std::process::{Command, Stdio};
use std::time::Duration;

use api::handlers::queue_keeper::CLOSE_GRACE_SECONDS;
use domain::beacon::quicknet;
use domain::humancheck::Door;
use domain::timestamp::Timestamp;
use serde_json::{Value, json};
use testkit::events::ApiEvent;
use testkit::purchases::{
    Answer, Function, PurchaseEnv, complete_event, credit, fixture, start_event,
};
use testkit::runtime_api::Outcome;
use testkit::scripts::{TempFiles, finish};
use testkit::tokens::token;
use testkit::turnstile::{FUNCTION_HOSTNAME, SITE_SECRET, TurnstileStub, function_vars};

const QUEUE: &str = env!("CARGO_BIN_EXE_queue");
const KEEPER: &str = env!("CARGO_BIN_EXE_queue-keeper");
const START: &str = env!("CARGO_BIN_EXE_start-purchase");
const COMPLETE: &str = env!("CARGO_BIN_EXE_complete-purchase");
const RELEASE_HOLDS: &str = env!("CARGO_BIN_EXE_release-holds");
const RECEIPT_KEY: &str = "a receipt key of at least thirty-two characters";

const PACK: &str = "queued-drop";
const FANS: usize = 5;
const UNITS: u64 = 3;
/// Seconds from seeding to the close: time for five joins on a loaded machine.
const OPEN_FOR: i64 = 20;

/// A session token of `user`, made when needed: the test outlasts a token's lifetime.
fn fan(user: &str) -> String {
    token(user, None)
}

/// `user`'s join (`POST /api/packs/{PACK}/queue`) with a human check solved just now for the
/// door, on the shared siteverify stub.
async fn join(queue: &Function, user: &str) -> Answer {
    let now = Timestamp::now().to_string();
    let action = Door::Join(testkit::ids::pack(PACK)).action();
    let solved = TurnstileStub::shared().solve(&action, FUNCTION_HOSTNAME, &now);
    let event = ApiEvent::post(&format!("/api/packs/{PACK}/queue"))
        .bearer(&fan(user))
        .header("human-check", &solved);
    queue.call(&event).await
}

async fn get(function: &Function, path: &str, user: Option<&str>) -> Answer {
    let mut event = ApiEvent::get(&format!("/api/packs/{PACK}/queue{path}"));
    if let Some(user) = user {
        event = event.bearer(&fan(user));
    }
    let answer = function.call(&event).await;
    assert_eq!(answer.status, 200, "{path}: {answer:?}");
    answer
}

/// One keeper run's counts (a run of one pass: see `ONE_PASS`).
async fn run(keeper: &Function) -> Value {
    match keeper.invoke(fixture("queue-keeper", None)).await {
        Outcome::Response(counts) => counts,
        other => panic!("the run failed: {other:?}"),
    }
}

fn counts(step: &[(&str, u64)]) -> Value {
    let mut counts = json!({"passes": 1, "closed": 0, "drawn": 0, "beaconsLate": 0,
        "admitted": 0, "lapsed": 0, "soldOut": 0, "finished": 0});
    for (name, n) in step {
        counts[*name] = json!(n);
    }
    counts
}

/// A fan's entry once drawn: their user id and entry as `GET .../queue/me` answers.
struct Drawn {
    position: u64,
    user: String,
    entry: Value,
}

/// The clock skew (`CLOCK_SKEW_SECONDS`) that puts a function just past the Unix time `at`.
fn skew_past(at: i64) -> String {
    let now = i64::try_from(Timestamp::now().unix_seconds()).unwrap();
    (at - now + 1).max(0).to_string()
}

#[tokio::test]
async fn a_queued_drop_sells_to_admitted_fans_in_drawn_order() {
    let env = PurchaseEnv::new().await;
    let siteverify = TurnstileStub::shared().url();
    let vars = function_vars(
        &siteverify,
        SITE_SECRET,
        &[("QUEUE_RECEIPT_KEY", RECEIPT_KEY)],
    );
    let queue = env.spawn(QUEUE, &vars).await;
    let unknown = queue.call(&ApiEvent::get("/api/packs/nope/queue")).await;
    assert_eq!(unknown.status, 404, "the queue function is up");
    let mut pack = testkit::packs::queued(PACK, -60, OPEN_FOR);
    (pack.total_supply, pack.remaining, pack.max_per_user) = (UNITS, UNITS, Some(1));
    testkit::packs::save(&env.store, &pack).await;
    let closes_at = pack.queue.unwrap().closes_at;

    let fans: Vec<String> = (0..FANS).map(|n| format!("fan-{n}")).collect();
    for user in &fans {
        let joined = join(&queue, user).await;
        assert_eq!(joined.status, 201, "{joined:?}");
        assert_eq!(joined.body["entry"]["status"], "waiting");
    }
    assert_eq!(get(&queue, "", None).await.body["queue"]["status"], "open");

    // The close, once the grace for joins under way has passed.
    let closes = i64::try_from(closes_at.unix_seconds()).unwrap();
    let skew = skew_past(closes + CLOSE_GRACE_SECONDS);
    let keeper = spawn_keeper(&env, &skew).await;
    let queue = env.spawn(QUEUE, &with_skew(&vars, &skew)).await;
    assert_eq!(run(&keeper).await, counts(&[("closed", 1)]));
    let line = get(&queue, "", None).await.body["queue"].clone();
    assert_eq!(
        (line["status"].as_str(), line["entrants"].as_u64()),
        (Some("closed"), Some(5))
    );
    let root = line["entrantsRoot"].clone();
    assert!(root.is_string(), "{line}");
    let late = join(&queue, "late-fan").await;
    assert_eq!((late.status, late.code()), (409, Some("queue_closed")));

    // The draw, once the round fixed with the terms is out.
    let round = line["beacon"]["round"]
        .as_u64()
        .expect("the round, public from the start");
    let skew = skew_past(quicknet::time_of(round));
    let keeper = spawn_keeper(&env, &skew).await;
    let queue = env.spawn(QUEUE, &with_skew(&vars, &skew)).await;
    assert_eq!(run(&keeper).await, counts(&[("drawn", 1)]));
    let line = get(&queue, "", None).await;
    assert_eq!(line.body["queue"]["status"], "drawn");
    assert_eq!(
        line.body["queue"]["entrantsRoot"], root,
        "the committed set drawn"
    );
    assert_eq!(line.body["queue"]["beacon"]["chain"], "local");

    // Admission: one unit a fan, so the first three by position.
    let admission = run(&keeper).await;
    let mut by_position = Vec::new();
    for user in fans {
        let entry = get(&queue, "/me", Some(&user)).await.body["entry"].clone();
        by_position.push(Drawn {
            position: entry["position"].as_u64().expect("drawn"),
            user,
            entry,
        });
    }
    let entries: Vec<&Value> = by_position.iter().map(|drawn| &drawn.entry).collect();
    assert_eq!(
        admission,
        counts(&[("admitted", UNITS)]),
        "{line:?}\n{entries:#?}\n{:?}",
        get(&queue, "/entrants", None).await
    );
    by_position.sort_by_key(|drawn| drawn.position);
    let positions: Vec<u64> = by_position.iter().map(|drawn| drawn.position).collect();
    assert_eq!(positions, [1, 2, 3, 4, 5]);
    let statuses: Vec<&str> = by_position
        .iter()
        .map(|drawn| drawn.entry["status"].as_str().unwrap())
        .collect();
    assert_eq!(
        statuses,
        ["admitted", "admitted", "admitted", "queued", "queued"]
    );
    verify_positions(&queue, &by_position).await;

    // Only admitted fans start; each pays with Cash.
    let limits = [("RATE_LIMIT_START", "fan=10/10,addr=1000000/10")];
    let start = env.spawn(START, &with_skew(&limits, &skew)).await;
    let complete = env.spawn(COMPLETE, &with_skew(&[], &skew)).await;
    for Drawn { position, user, .. } in &by_position[3..] {
        let refused = start
            .call(&start_event(PACK, Some(&fan(user)), Some("k"), None))
            .await;
        assert_eq!(
            (refused.status, refused.code()),
            (403, Some("queue_admission_required")),
            "position {position}: {refused:?}"
        );
    }
    let stranger = start
        .call(&start_event(
            PACK,
            Some(&fan("never-joined")),
            Some("k"),
            None,
        ))
        .await;
    assert_eq!(
        (stranger.status, stranger.code()),
        (403, Some("queue_admission_required"))
    );
    for Drawn { position, user, .. } in &by_position[..3] {
        let started = start
            .call(&start_event(PACK, Some(&fan(user)), Some("k"), None))
            .await;
        assert_eq!(started.status, 201, "position {position}: {started:?}");
        let id = started.body["purchase"]["id"].as_str().unwrap();
        credit(&env.store, user, 499, "USD", &format!("grant-{user}")).await;
        let paid = complete.call(&complete_event(PACK, id, &fan(user))).await;
        assert_eq!(paid.body["purchase"]["status"], "completed", "{paid:?}");
    }

    // Every unit paid: the line finishes, the two fans still queued are sold out.
    assert_eq!(
        run(&keeper).await,
        counts(&[("soldOut", 2), ("finished", 1)])
    );
    let mut statuses = Vec::new();
    for drawn in &by_position {
        let entry = get(&queue, "/me", Some(&drawn.user)).await.body["entry"].clone();
        statuses.push(entry["status"].as_str().unwrap().to_owned());
    }
    assert_eq!(statuses, ["done", "done", "done", "sold_out", "sold_out"]);
    // unitsSold is the pack's `remaining` summary, which release-holds refreshes from the shares
    // every minute: its run, as scheduled.
    let refresh = [("SUMMARY_REFRESH_AGAIN_SECONDS", "0")];
    let sweep = env.spawn(RELEASE_HOLDS, &with_skew(&refresh, &skew)).await;
    let swept = sweep.invoke(fixture("release-holds", None)).await;
    assert!(matches!(swept, Outcome::Response(_)), "{swept:?}");
    let report = get(&queue, "/report", None).await;
    assert_eq!(
        report.body,
        json!({"report": {"entrants": 5, "admitted": 3, "bought": 3, "lapsed": 0,
            "unitsSold": 3, "unitsLeft": 0, "lastAdmittedPosition": 3,
            "excluded": {"human_check_failed": 0}}})
    );
}

/// The keeper, its clock `skew` seconds ahead, drawing with the local beacon.
async fn spawn_keeper(env: &PurchaseEnv, skew: &str) -> Function {
    let keeper = env
        .spawn(KEEPER, &with_skew(&[("DRAND_LOCAL_BEACON", "1")], skew))
        .await;
    keeper.runtime.set_timeout(ONE_PASS);
    keeper
}

/// `vars` and `CLOCK_SKEW_SECONDS`.
fn with_skew<'a>(vars: &[(&'a str, &'a str)], skew: &'a str) -> Vec<(&'a str, &'a str)> {
    let mut vars = vars.to_vec();
    vars.push(("CLOCK_SKEW_SECONDS", skew));
    vars
}

/// The function's timeout for keeper runs: its 10 s reserve plus 2 s, one pass each.
const ONE_PASS: Duration = Duration::from_secs(12);

/// `scripts/verify-queue`, given only the public line and its entrants list, prints the
/// positions the fans see.
async fn verify_positions(queue: &Function, by_position: &[Drawn]) {
    let mut files = TempFiles::new("queued-drop");
    let line = files.write(&get(queue, "", None).await.body.to_string());
    let entrants = files.write(&get(queue, "/entrants", None).await.body.to_string());
    let child = Command::new("python3")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../scripts/verify-queue"
        ))
        .args([
            "--queue".as_ref(),
            line.as_os_str(),
            "--entrants".as_ref(),
            entrants.as_os_str(),
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    let verified = finish(child);
    assert_eq!(verified.code, 0, "{}\n{}", verified.stdout, verified.stderr);
    for Drawn {
        position, entry, ..
    } in by_position
    {
        let line = format!(
            "position {position}: {}",
            entry["entryId"].as_str().unwrap()
        );
        assert!(
            verified.stdout.contains(&line),
            "{line}\n{}",
            verified.stdout
        );
    }
}
