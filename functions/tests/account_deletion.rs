//! The real `account-deletion` binary (`DELETE /api/me`) beside a signed-in function (`me-cash`),
//! and the real `account-erasure` binary on its schedule's event, each run through a Lambda
//! Runtime API emulator against moto_server: a fan with Cash is told what they lose, confirms,
//! is refused everywhere at once, and a repeat answers the first outcome; a deletion left
//! halfway is finished by the scheduled run.

use serde_json::json;
use store::account::AccountDeletion;
use store::cash::GetBalance;
use testkit::events::ApiEvent;
use testkit::purchases::{Function, PurchaseEnv, credit, sibling_binary};
use testkit::runtime_api::Outcome;
use testkit::tokens::token;

const BINARY: &str = env!("CARGO_BIN_EXE_account-deletion");
const KEY: &str = "an operator's pseudonym key of 32+ bytes";

fn delete(token: &str, body: Option<&str>) -> ApiEvent {
    let event = ApiEvent::new("DELETE", "/api/me")
        .bearer(token)
        .header("Idempotency-Key", "del-1");
    match body {
        Some(body) => event.json(body),
        None => event,
    }
}

#[tokio::test]
async fn a_fan_confirms_what_they_lose_and_is_refused_everywhere_at_once() {
    let env = PurchaseEnv::new().await;
    let deletion = env.spawn(BINARY, &[("ACCOUNT_PSEUDONYM_KEY", KEY)]).await;
    let me_cash = env
        .spawn(
            sibling_binary(BINARY, "me-cash").to_str().unwrap(),
            &[("CURSOR_SECRET", testkit::CURSOR_SECRET)],
        )
        .await;
    credit(&env.store, "fan-1", 4_200, "USD", "grant-1").await;
    let token = token("fan-1", None);

    let told = deletion.call(&delete(&token, None)).await;
    assert_eq!(
        (told.status, told.code()),
        (409, Some("confirmation_required"))
    );
    assert_eq!(told.body["error"]["losses"]["cash"]["USD"], 4_200);
    let cash = me_cash
        .call(&ApiEvent::get("/api/me/cash").bearer(&token))
        .await;
    assert_eq!(cash.status, 200, "nothing deleted before the confirmation");

    let done = deletion
        .call(&delete(&token, Some(r#"{"confirm": true}"#)))
        .await;
    assert_eq!(done.status, 200, "{done:?}");
    assert_eq!(done.body["status"], "deleted");
    let refused = me_cash
        .call(&ApiEvent::get("/api/me/cash").bearer(&token))
        .await;
    assert_eq!(
        (refused.status, refused.code()),
        (401, Some("session_revoked"))
    );
    let again = deletion.call(&delete(&token, None)).await;
    assert_eq!(again.status, 200);
    assert_eq!(again.body["requestedAt"], done.body["requestedAt"]);
}

#[tokio::test]
async fn the_scheduled_run_finishes_a_deletion_left_halfway() {
    let env = PurchaseEnv::new().await;
    credit(&env.store, "fan-2", 900, "USD", "grant-2").await;
    let fan = testkit::ids::user("fan-2");
    // Begun, then its request "crashed" before any step.
    let begun = domain::account::Deletion::new(
        fan.clone(),
        "k".into(),
        domain::account::Losses::default(),
        domain::timestamp::Timestamp::now(),
    );
    env.store.begin_deletion(&begun).await.unwrap();
    assert_eq!(env.store.unfinished_deletions(5).await.unwrap().len(), 1);

    let erasure = Function::spawn(
        sibling_binary(BINARY, "account-erasure").to_str().unwrap(),
        &[
            ("TABLE_NAME".into(), env.store.table().into()),
            ("AWS_ENDPOINT_URL_DYNAMODB".into(), env.endpoint.clone()),
            ("RUST_LOG".into(), "warn".into()),
            ("ACCOUNT_PSEUDONYM_KEY".into(), KEY.into()),
        ],
    )
    .await;
    let outcome = erasure.invoke(json!({"source": "aws.scheduler"})).await;
    assert_eq!(
        outcome,
        Outcome::Response(json!({"found": 1, "finished": 1}))
    );
    let stored = env.store.deletion(&fan).await.unwrap().unwrap();
    assert!(stored.is_done(), "{stored:?}");
    assert!(env.store.unfinished_deletions(5).await.unwrap().is_empty());
    let pseudonym = domain::account::PseudonymKey::new(KEY)
        .unwrap()
        .pseudonym(&fan);
    assert_eq!(env.store.get_balance(&pseudonym, "USD").await.unwrap(), 900);
    assert_eq!(env.store.get_balance(&fan, "USD").await.unwrap(), 0);
}
