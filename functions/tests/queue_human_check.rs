//! The `queue` binary's human check at the door (issue 30), through the Runtime API emulator on
//! moto with testkit's Turnstile siteverify stub: a first join needs a token solved for
//! `join_<packId>` on a configured hostname, since the line opened and within 300 s, used once;
//! every refusal is 403 `human_check_failed` with nothing written but its count for the drop's
//! report (`excluded`), and siteverify down or answering `internal-error` is 503 with
//! `Retry-After`, not counted.

use domain::humancheck::{Door, token_hash};
use domain::ids::UserId;
use domain::queue::excluded::Exclusion;
use domain::timestamp::Timestamp;
use store::packs::seed;
use store::queue::GetQueueEntry;
use store::queue_excluded::ReadExclusions;
use store::ratelimit::SpendToken;
use testkit::events::ApiEvent;
use testkit::ids::pack;
use testkit::packs::{at, queued};
use testkit::purchases::{Function, PurchaseEnv};
use testkit::runtime_api::assert_init_fails_naming;
use testkit::tokens::token;
use testkit::turnstile::{
    ALREADY_SPENT, ALWAYS_FAILS, FUNCTION_HOSTNAME as HOST, SITE_SECRET, TurnstileStub,
    function_vars,
};

const BINARY: &str = env!("CARGO_BIN_EXE_queue");
const RECEIPT_KEY: &str = "a receipt key of at least thirty-two characters";
/// The queue opened this many seconds ago.
const OPENED: i64 = -120;

async fn queue_with(env: &PurchaseEnv, url: &str, secret: &str) -> Function {
    let vars = function_vars(url, secret, &[("QUEUE_RECEIPT_KEY", RECEIPT_KEY)]);
    env.spawn(BINARY, &vars).await
}

async fn drop_env() -> PurchaseEnv {
    let env = PurchaseEnv::new().await;
    seed(&env.store, &queued("drop", OPENED, 3600), Timestamp::now())
        .await
        .unwrap();
    env
}

fn join(fan: &str, human_check: Option<&str>) -> ApiEvent {
    let event = ApiEvent::post("/api/packs/drop/queue")
        .bearer(&token(fan, None))
        .source_ip("203.0.113.9");
    match human_check {
        Some(value) => event.header("human-check", value),
        None => event,
    }
}

fn action() -> String {
    Door::Join(pack("drop")).action()
}

/// The refused first joins counted for the drop's report.
async fn refused_joins(env: &PurchaseEnv) -> u64 {
    let counts = env.store.exclusions(&pack("drop")).await.unwrap();
    counts[&Exclusion::HumanCheckFailed]
}

/// Nothing was written for `fan`: no entry.
async fn no_entry(env: &PurchaseEnv, fan: &str) {
    let entry = env
        .store
        .queue_entry(&pack("drop"), &UserId::parse(fan).unwrap())
        .await
        .unwrap();
    assert!(entry.is_none(), "{fan} has an entry: {entry:?}");
}

#[tokio::test]
async fn a_token_for_the_door_joins_once_and_is_refused_again() {
    let env = drop_env().await;
    let stub = TurnstileStub::start().await;
    let queue = queue_with(&env, &stub.url(), SITE_SECRET).await;
    let token = stub.solve(&action(), HOST, &at(-5).to_string());

    let joined = queue.call(&join("auth0|one", Some(&token))).await;
    assert_eq!(joined.status, 201, "{joined:?}");
    let form = &stub.received()[0];
    assert!(form.contains(&("remoteip".into(), "203.0.113.9".into())));
    // Joined: the same fan is answered their entry, with no token at all.
    let again = queue.call(&join("auth0|one", None)).await;
    assert_eq!((again.status, &again.body), (200, &joined.body));
    assert_eq!(again.header("idempotent-replayed"), Some("true"));

    // Spent: another fan sending the same token is refused, though siteverify, asked with the
    // same idempotency key, answers it as it did the first time.
    let reused = queue.call(&join("auth0|two", Some(&token))).await;
    assert_eq!(
        (reused.status, reused.code()),
        (403, Some("human_check_failed"))
    );
    no_entry(&env, "auth0|two").await;
    assert_eq!(refused_joins(&env).await, 1);
}

#[tokio::test]
async fn every_token_that_does_not_prove_the_door_is_refused_and_writes_nothing() {
    let env = drop_env().await;
    let stub = TurnstileStub::start().await;
    let queue = queue_with(&env, &stub.url(), SITE_SECRET).await;
    let other_pack = Door::Join(pack("other")).action();
    let start = Door::Start(pack("drop")).action();
    let cases = [
        ("no token", None),
        ("not a token", Some("0.never-solved".to_owned())),
        (
            "another pack's action",
            Some(stub.solve(&other_pack, HOST, &at(-5).to_string())),
        ),
        (
            "the start's action",
            Some(stub.solve(&start, HOST, &at(-5).to_string())),
        ),
        (
            "another hostname",
            Some(stub.solve(&action(), "evil.example", &at(-5).to_string())),
        ),
        (
            "solved 301 s ago",
            Some(stub.solve(&action(), HOST, &at(-301).to_string())),
        ),
        (
            "solved before the line opened",
            Some(stub.solve(&action(), HOST, &at(OPENED - 10).to_string())),
        ),
    ];
    for (index, (case, human_check)) in cases.iter().enumerate() {
        let fan = format!("auth0|refused-{index}");
        let answer = queue.call(&join(&fan, human_check.as_deref())).await;
        assert_eq!(
            (answer.status, answer.code()),
            (403, Some("human_check_failed")),
            "{case}: {answer:?}"
        );
        no_entry(&env, &fan).await;
        if let Some(token) = human_check {
            // Not recorded as spent either.
            assert!(
                env.store.spend(&token_hash(token), i64::MAX).await.unwrap(),
                "{case}: the refused token was recorded"
            );
        }
        // But counted, each refusal once, for the drop's report.
        assert_eq!(refused_joins(&env).await, index as u64 + 1, "{case}");
    }
}

#[tokio::test]
async fn cloudflares_failing_and_spent_test_secrets_are_refused() {
    let env = drop_env().await;
    let stub = TurnstileStub::start().await;
    for secret in [ALWAYS_FAILS, ALREADY_SPENT] {
        let queue = queue_with(&env, &stub.url(), secret).await;
        let answer = queue
            .call(&join("auth0|tester", Some("XXXX.DUMMY.TOKEN.XXXX")))
            .await;
        assert_eq!(
            (answer.status, answer.code()),
            (403, Some("human_check_failed")),
            "{secret}"
        );
        no_entry(&env, "auth0|tester").await;
    }
}

#[tokio::test]
async fn siteverify_down_or_failing_is_a_503_with_retry_after_and_the_retry_joins() {
    let env = drop_env().await;
    let stub = TurnstileStub::start().await;
    let token = stub.solve(&action(), HOST, &at(-5).to_string());

    // Nothing listens there.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!(
            "http://{}/turnstile/v0/siteverify",
            listener.local_addr().unwrap()
        );
        drop(listener);
        url
    };
    let down = queue_with(&env, &closed, SITE_SECRET).await;
    let answer = down.call(&join("auth0|patient", Some(&token))).await;
    assert_eq!(
        (answer.status, answer.code()),
        (503, Some("service_unavailable")),
        "{answer:?}"
    );
    assert!(answer.header("retry-after").is_some());
    no_entry(&env, "auth0|patient").await;

    let queue = queue_with(&env, &stub.url(), SITE_SECRET).await;
    stub.internal_errors(1);
    let answer = queue.call(&join("auth0|patient", Some(&token))).await;
    assert_eq!(
        (answer.status, answer.code()),
        (503, Some("service_unavailable"))
    );
    assert!(answer.header("retry-after").is_some());
    no_entry(&env, "auth0|patient").await;

    // The fan retries with the same token: it joins.
    let answer = queue.call(&join("auth0|patient", Some(&token))).await;
    assert_eq!(answer.status, 201, "{answer:?}");
    // A 503 is not a refusal: nothing counted.
    assert_eq!(refused_joins(&env).await, 0);
}

#[tokio::test]
async fn init_fails_fast_without_the_turnstile_secret_or_hostnames() {
    let base = [
        ("TABLE_NAME", "fan-api"),
        ("AUTH_ISSUER", "https://issuer.example"),
        ("AUTH_JWKS_URL", "https://issuer.example/jwks"),
        ("AUTH_AUDIENCE", "fan-app"),
        ("QUEUE_RECEIPT_KEY", RECEIPT_KEY),
    ];
    assert_init_fails_naming(BINARY, &base, "TURNSTILE_SECRET").await;
    let mut env = base.to_vec();
    env.push(("TURNSTILE_SECRET", SITE_SECRET));
    assert_init_fails_naming(BINARY, &env, "HUMAN_CHECK_HOSTNAMES").await;
}
