//! The real `queue` binary (a pack's waiting room), run through a Lambda Runtime API emulator
//! against moto_server: a queued pack seeded as seed-packs seeds it, a fan's join (201, then 200
//! replayed), their entry, the public record; and a start without `QUEUE_RECEIPT_KEY` refused.
//! The join's human check is tests/queue_human_check.rs's.

use domain::queue::entry::verify_receipt;
use domain::timestamp::Timestamp;
use store::packs::seed;
use testkit::events::ApiEvent;
use testkit::packs::queued;
use testkit::purchases::PurchaseEnv;
use testkit::runtime_api::assert_init_fails_naming;
use testkit::tokens::token;
use testkit::turnstile::{FUNCTION_HOSTNAME, SITE_SECRET, TurnstileStub, function_vars};

const BINARY: &str = env!("CARGO_BIN_EXE_queue");
const RECEIPT_KEY: &str = "a receipt key of at least thirty-two characters";

#[tokio::test]
async fn a_fan_joins_once_and_reads_their_entry_and_the_line() {
    let env = PurchaseEnv::new().await;
    seed(&env.store, &queued("drop", -60, 3600), Timestamp::now())
        .await
        .unwrap();
    let turnstile = TurnstileStub::start().await;
    let siteverify = turnstile.url();
    let vars = function_vars(
        &siteverify,
        SITE_SECRET,
        &[("QUEUE_RECEIPT_KEY", RECEIPT_KEY)],
    );
    let queue = env.spawn(BINARY, &vars).await;
    let fan = token("auth0|fan", None);
    let human = turnstile.solve(
        &domain::humancheck::Door::Join(testkit::ids::pack("drop")).action(),
        FUNCTION_HOSTNAME,
        &Timestamp::now().to_string(),
    );

    let joined = queue
        .call(
            &ApiEvent::post("/api/packs/drop/queue")
                .bearer(&fan)
                .header("human-check", &human),
        )
        .await;
    assert_eq!(joined.status, 201, "{joined:?}");
    let again = queue
        .call(&ApiEvent::post("/api/packs/drop/queue").bearer(&fan))
        .await;
    assert_eq!(again.status, 200);
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    assert_eq!(again.body, joined.body);
    let mine = queue
        .call(&ApiEvent::get("/api/packs/drop/queue/me").bearer(&fan))
        .await;
    assert_eq!((mine.status, &mine.body), (200, &joined.body));

    let line = queue.call(&ApiEvent::get("/api/packs/drop/queue")).await;
    assert_eq!(line.status, 200, "{line:?}");
    assert_eq!(
        line.header("cache-control"),
        Some("public, max-age=2, stale-while-revalidate=2")
    );
    assert_eq!(line.body["queue"]["status"], "open");
    let entry = &joined.body["entry"];
    assert!(verify_receipt(
        line.body["queue"]["receiptKey"].as_str().unwrap(),
        &testkit::ids::pack("drop"),
        &domain::ids::EntryId::parse(entry["entryId"].as_str().unwrap()).unwrap(),
        Timestamp::parse(entry["joinedAt"].as_str().unwrap()).unwrap(),
        entry["receipt"].as_str().unwrap(),
    ));

    let stranger = queue
        .call(&ApiEvent::get("/api/packs/drop/queue/me").bearer(&token("other", None)))
        .await;
    assert_eq!(
        (stranger.status, stranger.code()),
        (404, Some("queue_entry_not_found"))
    );
    let unknown = queue.call(&ApiEvent::get("/api/packs/nope/queue")).await;
    assert_eq!(
        (unknown.status, unknown.code()),
        (404, Some("queue_not_found"))
    );
}

#[tokio::test]
async fn init_fails_fast_without_a_receipt_key() {
    let env = [
        ("TABLE_NAME", "fan-api"),
        ("AUTH_ISSUER", "https://issuer.example"),
        ("AUTH_JWKS_URL", "https://issuer.example/jwks"),
        ("AUTH_AUDIENCE", "fan-app"),
    ];
    assert_init_fails_naming(BINARY, &env, "QUEUE_RECEIPT_KEY").await;
}
