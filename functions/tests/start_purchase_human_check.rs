//! The `start-purchase` binary on a pack whose operator asks for the human check
//! (`humanCheck`, a pack without a queue), through the Runtime API emulator on moto with
//! testkit's Turnstile siteverify stub: a start needs a token solved for `start_<packId>` since
//! the sale started; refused, 403 `human_check_failed` and nothing held; a repeat of a started
//! key is answered without one; a pack without the term needs none; and a function without
//! `TURNSTILE_SECRET` refuses such a pack (503), never sells it unchecked.

use domain::humancheck::Door;
use domain::ids::UserId;
use domain::purchases::purchase_id;
use store::purchases::GetPurchase;
use testkit::countdowns::without_countdowns;
use testkit::ids::pack;
use testkit::packs::{active, at};
use testkit::purchases::{PurchaseEnv, start_event};
use testkit::tokens::token;
use testkit::turnstile::{FUNCTION_HOSTNAME, SITE_SECRET, TurnstileStub, function_vars};

const BINARY: &str = env!("CARGO_BIN_EXE_start-purchase");

/// A `humanCheck` pack whose sale started 60 s ago, and a pack without the term.
async fn packs(env: &PurchaseEnv) {
    let mut checked = active("checked", 60);
    checked.human_check = true;
    for pack in [checked, active("open", 60)] {
        testkit::packs::save(&env.store, &pack).await;
    }
}

async fn nothing_held(env: &PurchaseEnv, pack_id: &str, key: &str) {
    let user = UserId::parse("buyer").unwrap();
    let held = env
        .store
        .get_purchase(&user, &purchase_id(&user, key))
        .await
        .unwrap();
    assert!(held.is_none(), "{held:?}");
    assert_eq!(testkit::packs::remaining(&env.store, pack_id).await, 100);
}

#[tokio::test]
async fn a_checked_pack_sells_to_a_token_for_its_start_and_refuses_the_rest() {
    let env = PurchaseEnv::new().await;
    packs(&env).await;
    let stub = TurnstileStub::start().await;
    let url = stub.url();
    let function = env
        .spawn(BINARY, &function_vars(&url, SITE_SECRET, &[]))
        .await;
    let buyer = token("buyer", None);
    let start = |key: &str, human_check: Option<&str>| {
        let event = start_event("checked", Some(&buyer), Some(key), None);
        match human_check {
            Some(value) => event.header("human-check", value),
            None => event,
        }
    };
    let action = Door::Start(pack("checked")).action();
    let refusals = [
        ("no token", None),
        (
            "the join's action",
            Some(stub.solve(
                &Door::Join(pack("checked")).action(),
                FUNCTION_HOSTNAME,
                &at(-5).to_string(),
            )),
        ),
        (
            "solved before the sale started",
            Some(stub.solve(&action, FUNCTION_HOSTNAME, &at(-70).to_string())),
        ),
    ];
    for (index, (case, human_check)) in refusals.iter().enumerate() {
        let key = format!("refused-{index}");
        let answer = function.call(&start(&key, human_check.as_deref())).await;
        assert_eq!(
            (answer.status, answer.code()),
            (403, Some("human_check_failed")),
            "{case}: {answer:?}"
        );
        nothing_held(&env, "checked", &key).await;
    }

    let human = stub.solve(&action, FUNCTION_HOSTNAME, &at(-5).to_string());
    let started = function.call(&start("key-1", Some(&human))).await;
    assert_eq!(started.status, 201, "{started:?}");
    // Its repeat, its answer lost: no token needed.
    let again = function.call(&start("key-1", None)).await;
    assert_eq!(
        (again.status, without_countdowns(again.body.clone())),
        (201, without_countdowns(started.body.clone()))
    );
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    // The token is spent: another start is refused with it.
    let reused = function.call(&start("key-2", Some(&human))).await;
    assert_eq!(
        (reused.status, reused.code()),
        (403, Some("human_check_failed"))
    );

    // A pack without the term: no token asked.
    let open = function
        .call(&start_event("open", Some(&buyer), Some("key-3"), None))
        .await;
    assert_eq!(open.status, 201, "{open:?}");
}

#[tokio::test]
async fn without_the_secret_a_checked_pack_is_refused_and_the_others_sold() {
    let env = PurchaseEnv::new().await;
    packs(&env).await;
    let function = env.spawn(BINARY, &[]).await;
    let buyer = token("buyer", None);
    let refused = function
        .call(&start_event("checked", Some(&buyer), Some("key-1"), None))
        .await;
    assert_eq!(
        (refused.status, refused.code()),
        (503, Some("service_unavailable"))
    );
    assert!(refused.header("retry-after").is_some());
    nothing_held(&env, "checked", "key-1").await;
    let sold = function
        .call(&start_event("open", Some(&buyer), Some("key-2"), None))
        .await;
    assert_eq!(sold.status, 201, "{sold:?}");
}
