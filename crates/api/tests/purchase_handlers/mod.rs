//! The purchase endpoints over API Gateway events: every bad input gets its 4xx JSON error,
//! DynamoDB faults during a start or a completion answer 503 and leave the books balanced, and
//! the logs of a whole flow hold no token, e-mail or balance.

use std::sync::Arc;

use api::http::routes::{
    complete_purchase_routes, get_purchase_routes, open_pack_routes, start_purchase_routes,
};
use api::state::PurchaseState;
use domain::timestamp::Timestamp;
use serde_json::Value;
use store::purchases::{ReleaseHolds, StartPurchase};
use store::{DynamoStore, MemoryStore, Store};
use testkit::countdowns::without_countdowns;
use testkit::events::{ApiEvent, call, parts};
use testkit::fault_proxy::{Fault, FaultProxy, THROTTLING};
use testkit::ids;
use testkit::tokens::token;

mod faults;

const EMAIL: &str = "buyer@example.com";

/// The purchase functions' state over `store`: a 600 s hold, roomy limits (also countdowns.rs').
pub(crate) fn state<S>(store: S) -> Arc<PurchaseState<S>> {
    Arc::new(PurchaseState {
        store,
        verifier: testkit::tokens::verifier(),
        hold: std::time::Duration::from_secs(600),
        max_body_bytes: api::http::request::DEFAULT_MAX_BODY_BYTES,
        policy: testkit::purchases::ROOMY,
        human: None,
    })
}

async fn memory_state() -> Arc<PurchaseState<MemoryStore>> {
    let store = MemoryStore::default();
    testkit::packs::save(&store, &testkit::packs::active("p", 60)).await;
    testkit::packs::save(&store, &testkit::packs::active("q", 60)).await;
    state(store)
}

fn start_event(user: &str, key: &str) -> ApiEvent {
    ApiEvent::post("/api/packs/p/purchases")
        .bearer(&token(user, Some(EMAIL)))
        .header("idempotency-key", key)
}

fn pay_event(user: &str, id: &str) -> ApiEvent {
    ApiEvent::new("PUT", &format!("/api/packs/p/purchases/{id}"))
        .bearer(&token(user, Some(EMAIL)))
        .json(r#"{"payment":{"method":"cash"}}"#)
}

type Answer = (u16, Value, lambda_http::http::HeaderMap);

async fn start(state: &Arc<PurchaseState<impl Store + 'static>>, event: ApiEvent) -> Answer {
    let response = call(start_purchase_routes(), state, event.request()).await;
    let (status, body) = parts(&response);
    (status, body, response.headers().clone())
}

async fn pay(state: &Arc<PurchaseState<impl Store + 'static>>, event: ApiEvent) -> Answer {
    let response = call(complete_purchase_routes(), state, event.request()).await;
    let (status, body) = parts(&response);
    (status, body, response.headers().clone())
}

fn code(answer: &Answer) -> (u16, &str) {
    (answer.0, answer.1["error"]["code"].as_str().unwrap_or("-"))
}

async fn credit(store: &impl Store, user: &str, amount: u64) {
    let credit =
        domain::cash::parse_credit(user, &amount.to_string(), "USD", &format!("grant-{user}"))
            .unwrap();
    store.credit_cash(&credit, Timestamp::now()).await.unwrap();
}

#[tokio::test]
async fn a_start_answers_201_with_its_location_and_a_repeat_answers_it_again() {
    let state = memory_state().await;
    let first = start(&state, start_event("fan", "k1")).await;
    assert_eq!(first.0, 201, "{}", first.1);
    let id = first.1["purchase"]["id"].as_str().unwrap();
    assert_eq!(first.2["location"], format!("/api/packs/p/purchases/{id}"));
    assert!(first.2.get("idempotent-replayed").is_none());
    let purchase = &first.1["purchase"];
    assert_eq!(purchase["status"], "reserved");
    assert_eq!(purchase["nonce"], 1);
    assert_eq!(
        purchase["price"],
        serde_json::json!({"amount": 499, "currency": "USD"})
    );
    assert_eq!(purchase["items"], Value::Null);
    assert!(purchase.get("fairness").is_none());

    // A repeat answers the same purchase, as it is now.
    let again = start(&state, start_event("fan", "k1")).await;
    assert_eq!(
        (again.0, without_countdowns(again.1)),
        (201, without_countdowns(first.1.clone()))
    );
    assert_eq!(again.2["idempotent-replayed"], "true");
    assert_eq!(again.2["location"], first.2["location"]);
    credit(&state.store, "fan", 499).await;
    assert_eq!(pay(&state, pay_event("fan", id)).await.0, 200);
    let again = start(&state, start_event("fan", "k1")).await;
    assert_eq!(again.0, 201);
    assert_eq!(again.1["purchase"]["status"], "completed");
    assert_eq!(again.1["purchase"]["id"], first.1["purchase"]["id"]);
    assert_eq!(again.2["idempotent-replayed"], "true");
}

/// A start repeated after its hold ran out answers the purchase as GET does, `expired`, where it
/// answered `reserved` with an `expiresAt` in the past.
#[tokio::test]
async fn a_start_repeated_after_its_hold_ran_out_answers_expired() {
    let state = state(MemoryStore::default());
    testkit::packs::save(&state.store, &testkit::packs::active("p", 7200)).await;
    let request = hold_of_fan(&state.store, -1200, -600).await;
    let again = start(&state, start_event("fan", "k")).await;
    assert_eq!(again.0, 201, "{}", again.1);
    assert_eq!(again.2["idempotent-replayed"], "true");
    assert_eq!(again.1["purchase"]["id"], request.purchase_id.as_str());
    assert_eq!(again.1["purchase"]["status"], "expired");
}

/// API Gateway (payload 2.0) joins a header sent twice into one value, with a comma: two
/// `Idempotency-Key` headers `a` and `b` reach the function as the one key `a,b`, the key of
/// `Idempotency-Key: a,b` (local-api joins them the same way: its `hostile.rs`). Only a request
/// handed to the router with two values, which neither makes, is 400 `invalid_idempotency_key`.
/// SECURITY.md says so.
#[tokio::test]
async fn a_key_sent_twice_is_one_joined_key_through_api_gateway_and_refused_as_two() {
    let state = memory_state().await;
    let twice = start(
        &state,
        start_event("fan", "a").header("idempotency-key", "b"),
    )
    .await;
    assert_eq!(twice.0, 201, "{}", twice.1);
    let joined = start(&state, start_event("fan", "a,b")).await;
    assert_eq!(
        (joined.0, without_countdowns(joined.1)),
        (201, without_countdowns(twice.1))
    );
    assert_eq!(joined.2["idempotent-replayed"], "true");

    let mut request = start_event("fan", "a").request();
    request.headers_mut().append(
        "idempotency-key",
        lambda_http::http::HeaderValue::from_static("b"),
    );
    let (status, body) = parts(&call(start_purchase_routes(), &state, request).await);
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (400, Some("invalid_idempotency_key"))
    );
}

#[tokio::test]
async fn every_bad_start_gets_its_4xx() {
    let state = memory_state().await;
    let long = "k".repeat(256);
    let seed_65 = format!(r#"{{"clientSeed":"{}"}}"#, "s".repeat(65));
    let cases: Vec<(ApiEvent, u16, &str)> = vec![
        (
            ApiEvent::post("/api/packs/p/purchases").header("idempotency-key", "k"),
            401,
            "missing_token",
        ),
        (
            ApiEvent::post("/api/packs/p/purchases").bearer(&token("fan", None)),
            400,
            "missing_idempotency_key",
        ),
        (start_event("fan", &long), 400, "invalid_idempotency_key"),
        (
            start_event("fan", "has space"),
            400,
            "invalid_idempotency_key",
        ),
        (
            start_event("fan", "k").json(&seed_65),
            400,
            "invalid_client_seed",
        ),
        (
            start_event("fan", "k").json(r#"{"clientSeed":"tab\there"}"#),
            400,
            "invalid_client_seed",
        ),
        (
            start_event("fan", "k").json(r#"{"clientSeed":""}"#),
            400,
            "invalid_client_seed",
        ),
        (
            start_event("fan", "k").json(r#"{"clientSeed":null}"#),
            400,
            "invalid_client_seed",
        ),
        (
            start_event("fan", "k").json(r#"{"clientSeed":7}"#),
            400,
            "invalid_body",
        ),
        (
            start_event("fan", "k").json(r#"{"clientSeed":"a","clientSeed":"b"}"#),
            400,
            "invalid_body",
        ),
        (
            start_event("fan", "k").json(r#"{"seed":"a"}"#),
            400,
            "invalid_body",
        ),
        (
            start_event("fan", "k").json(r#"["a"]"#),
            400,
            "invalid_body",
        ),
        (
            start_event("fan", "k").json(r#"{"clientSeed":"a""#),
            400,
            "invalid_json",
        ),
        (
            start_event("fan", "k").body(r#"{"clientSeed":"a"}"#),
            415,
            "unsupported_media_type",
        ),
        (
            ApiEvent::post("/api/packs/a%2Fb/purchases")
                .bearer(&token("fan", None))
                .header("idempotency-key", "k"),
            404,
            "not_found",
        ),
        (
            ApiEvent::post("/api/packs/nope/purchases")
                .bearer(&token("fan", None))
                .header("idempotency-key", "k"),
            404,
            "pack_not_found",
        ),
    ];
    for (event, status, expected) in cases {
        let answer = start(&state, event).await;
        assert_eq!(code(&answer), (status, expected), "{}", answer.1);
    }
    let non_ascii = start_event("fan", "k").request().map(|body| body);
    let mut request = non_ascii;
    request.headers_mut().insert(
        "idempotency-key",
        lambda_http::http::HeaderValue::from_bytes("clé".as_bytes()).unwrap(),
    );
    let (status, body) = parts(&call(start_purchase_routes(), &state, request).await);
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (400, Some("invalid_idempotency_key"))
    );
    assert_eq!(
        testkit::packs::remaining(&state.store, "p").await,
        100,
        "no refused start took a unit"
    );
}

#[tokio::test]
async fn a_purchase_is_found_only_by_its_buyer_under_its_pack() {
    let state = memory_state().await;
    let first = start(&state, start_event("fan", "k")).await;
    let id = first.1["purchase"]["id"].as_str().unwrap().to_owned();
    let get = |user: &str, path: String| {
        let event = ApiEvent::get(&path).bearer(&token(user, None));
        let state = &state;
        async move { parts(&call(get_purchase_routes(), state, event.request()).await) }
    };
    let (status, body) = get("fan", format!("/api/packs/p/purchases/{id}")).await;
    assert_eq!(
        (status, without_countdowns(body["purchase"].clone())),
        (200, without_countdowns(first.1["purchase"].clone()))
    );
    for (user, path, expected) in [
        (
            "thief",
            format!("/api/packs/p/purchases/{id}"),
            "purchase_not_found",
        ),
        (
            "fan",
            format!("/api/packs/q/purchases/{id}"),
            "purchase_not_found",
        ),
        (
            "fan",
            "/api/packs/p/purchases/unknown".to_owned(),
            "purchase_not_found",
        ),
        ("fan", format!("/api/packs/p/purchases/{id}.x"), "not_found"),
    ] {
        let (status, body) = get(user, path.clone()).await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (404, Some(expected)),
            "{path}"
        );
    }
}

#[tokio::test]
async fn every_bad_completion_gets_its_4xx_and_a_paid_one_answers_its_balance() {
    let state = memory_state().await;
    let id = start(&state, start_event("fan", "k")).await.1["purchase"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let put = |body: &str| {
        ApiEvent::new("PUT", &format!("/api/packs/p/purchases/{id}"))
            .bearer(&token("fan", None))
            .json(body)
    };
    for (event, status, expected) in [
        (
            put(r#"{"payment":{"method":"card"}}"#),
            400,
            "unsupported_payment_method",
        ),
        (put(r#"{"payment":1.5}"#), 400, "invalid_body"),
        (put(r#"{"payment":"cash"}"#), 400, "invalid_body"),
        (put(r#"{}"#), 400, "invalid_body"),
        (
            put(r#"{"payment":{"method":"cash"},"payment":{"method":"cash"}}"#),
            400,
            "invalid_body",
        ),
        (
            put(r#"{"payment":{"method":"cash","tip":1}}"#),
            400,
            "invalid_body",
        ),
        (put("nope"), 400, "invalid_json"),
        (
            ApiEvent::new("PUT", &format!("/api/packs/p/purchases/{id}"))
                .bearer(&token("fan", None))
                .body(r#"{"payment":{"method":"cash"}}"#),
            415,
            "unsupported_media_type",
        ),
        (pay_event("thief", &id), 404, "purchase_not_found"),
        (pay_event("fan", &id), 402, "insufficient_funds"),
    ] {
        let answer = pay(&state, event).await;
        assert_eq!(code(&answer), (status, expected), "{}", answer.1);
    }
    credit(&state.store, "fan", 1000).await;
    let paid = pay(&state, pay_event("fan", &id)).await;
    assert_eq!(paid.0, 200, "{}", paid.1);
    assert_eq!(paid.1["purchase"]["status"], "completed");
    assert_eq!(
        paid.1["cash"],
        serde_json::json!({"balance": {"amount": 501, "currency": "USD"}})
    );
    let again = pay(&state, pay_event("fan", &id)).await;
    assert_eq!(
        (again.0, without_countdowns(again.1)),
        (200, without_countdowns(paid.1))
    );
    assert_eq!(again.2["idempotent-replayed"], "true");
    assert_eq!(
        testkit::purchases::debit_count(&state.store, "fan").await,
        1
    );
}

/// A purchase of pack `p` by "fan" with key "k", made through the store: started and ending
/// these many seconds from now.
async fn hold_of_fan(
    store: &MemoryStore,
    started: i64,
    ends: i64,
) -> domain::purchases::StartRequest {
    let request = domain::purchases::StartRequest {
        user_id: ids::user("fan"),
        pack_id: ids::pack("p"),
        purchase_id: domain::purchases::purchase_id(&ids::user("fan"), "k"),
        requested_seed: None,
        client_seed: "s".into(),
        now: testkit::packs::at(started),
        expires_at: testkit::packs::at(ends),
        policy: testkit::purchases::ROOMY,
        human_checked: false,
    };
    store.start_purchase(&request).await.unwrap();
    request
}

/// A hold made on the old end of a sale ended early outlives the seed's reveal: from 5 s before
/// the reveal it cannot be paid, a 410 that says why, and nothing is debited.
#[tokio::test]
async fn a_hold_outliving_its_packs_reveal_is_410() {
    let state = state(MemoryStore::default());
    let mut pack = testkit::packs::active("p", 7200);
    // Revealed 2 s from now: payments closed 3 s ago.
    pack.sale_ends_at = Some(testkit::packs::at(2 - domain::packs::REVEAL_DELAY_SECONDS));
    testkit::packs::save(&state.store, &pack).await;
    let request = hold_of_fan(&state.store, -3600, 600).await;
    credit(&state.store, "fan", 1000).await;
    let answer = pay(&state, pay_event("fan", request.purchase_id.as_str())).await;
    assert_eq!(code(&answer), (410, "reservation_expired"));
    let message = answer.1["error"]["message"].as_str().unwrap();
    assert!(message.contains("seed"), "{message}");
    assert_eq!(
        testkit::purchases::debit_count(&state.store, "fan").await,
        0
    );
}

#[tokio::test]
async fn an_expired_reservation_is_410_and_its_unit_is_back() {
    let state = state(MemoryStore::default());
    testkit::packs::save(&state.store, &testkit::packs::active("p", 3600)).await;
    let request = hold_of_fan(&state.store, -1200, -600).await;
    credit(&state.store, "fan", 1000).await;
    let answer = pay(&state, pay_event("fan", request.purchase_id.as_str())).await;
    assert_eq!(code(&answer), (410, "reservation_expired"));
    let (status, body) = parts(
        &call(
            get_purchase_routes(),
            &state,
            ApiEvent::get(&format!("/api/packs/p/purchases/{}", request.purchase_id))
                .bearer(&token("fan", None))
                .request(),
        )
        .await,
    );
    assert_eq!(
        (status, body["purchase"]["status"].as_str()),
        (200, Some("expired"))
    );
    assert_eq!(testkit::packs::remaining(&state.store, "p").await, 100);
}

#[tokio::test]
async fn bad_opens_get_their_4xx() {
    let state = memory_state().await;
    let id = start(&state, start_event("fan", "k")).await.1["purchase"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let open = |user: &str| {
        ApiEvent::post(&format!("/api/packs/p/purchases/{id}/open")).bearer(&token(user, None))
    };
    for (event, status, expected) in [
        (open("fan").json(r#"{"a":1}"#), 400, "invalid_body"),
        (open("fan").json("[]"), 400, "invalid_body"),
        (open("fan").json("{"), 400, "invalid_json"),
        (open("fan").body("{}"), 415, "unsupported_media_type"),
        (open("thief"), 404, "purchase_not_found"),
        (open("fan"), 409, "purchase_not_completed"),
    ] {
        let (actual, body) = parts(&call(open_pack_routes(), &state, event.request()).await);
        assert_eq!(
            (actual, body["error"]["code"].as_str()),
            (status, Some(expected)),
            "{body}"
        );
    }
}
