//! The real `get-pack` binary, run through a Lambda Runtime API emulator against moto_server.

use std::time::Duration;

use domain::packs::seed::parse_seed;
use domain::packs::{Pack, PackItem, PackStatus};
use domain::timestamp::Timestamp;
use serde_json::Value;
use store::DynamoStore;
use store::packs::{GetPack, ListUpcomingPacks};
use testkit::countdowns::asked;
use testkit::events::ApiEvent;
use testkit::fault_proxy::{Fault, FaultProxy, THROTTLING, counts};
use testkit::packs::{active, ending, listed_json, with_status};
use testkit::runtime_api::{Outcome, RuntimeApi, http_parts};

const BINARY: &str = env!("CARGO_BIN_EXE_get-pack");
const TIMEOUT: Duration = Duration::from_secs(30);

/// The function, started against `table` at `endpoint`.
fn spawn(runtime: &RuntimeApi, table: &str, endpoint: &str) -> tokio::process::Child {
    runtime.spawn(
        BINARY,
        &[
            ("TABLE_NAME", table),
            ("AWS_ENDPOINT_URL_DYNAMODB", endpoint),
            ("RUST_LOG", "warn"),
        ],
    )
}

/// Status, JSON body and headers of the answer to `event`.
async fn call(runtime: &RuntimeApi, event: Value) -> (u16, Value, Value) {
    let outcome = runtime.invoke(event, TIMEOUT).await.expect("answered");
    let (status, body) = http_parts(&outcome);
    let Outcome::Response(document) = outcome else {
        unreachable!("http_parts accepted it")
    };
    (status, body, document["headers"].clone())
}

async fn get(runtime: &RuntimeApi, path: &str) -> (u16, Value, Value) {
    call(runtime, ApiEvent::get(path).to_json()).await
}

fn is_hex_64(value: &Value) -> bool {
    value.as_str().is_some_and(|text| {
        text.len() == 64 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}

/// `answer` is `pack` (every field as listed, and its items) with the fairness of its stored seed
/// (a pack whose instants have passed or are null: its countdowns are 0 or null).
async fn assert_answers(store: &DynamoStore, answer: &Value, pack: &Pack, revealed: bool) {
    let mut fields = answer["pack"].clone();
    let fairness = fields
        .as_object_mut()
        .and_then(|object| object.remove("fairness"))
        .expect("fairness");
    let mut listed = listed_json(pack);
    listed["items"] = serde_json::to_value(&pack.items).unwrap();
    assert_eq!(fields, listed, "{answer}");
    let stored = store
        .get_pack(&testkit::ids::pack(&pack.id))
        .await
        .unwrap()
        .expect("stored");
    assert!(is_hex_64(&fairness["serverSeedHash"]), "{fairness}");
    assert_eq!(fairness["serverSeedHash"], stored.seed.commitment());
    if revealed {
        assert!(is_hex_64(&fairness["serverSeed"]), "{fairness}");
        assert_eq!(fairness["serverSeed"], stored.seed.to_hex());
    } else {
        assert_eq!(fairness["serverSeed"], Value::Null, "{fairness}");
    }
    assert_eq!(fairness.as_object().map(|f| f.len()), Some(2), "{fairness}");
}

#[tokio::test]
async fn answers_packs_and_refuses_what_is_not_one_over_the_runtime_api() {
    let store = testkit::moto::shared_table().await;
    let mut rookies = active("rookies", 10);
    rookies.image_url = Some("https://cdn.example.com/packs/rookies.png".into());
    rookies.items.push(PackItem {
        id: "rookies-guard".into(),
        name: "A rookie guard".into(),
        rarity: "common".into(),
        image_url: Some("https://cdn.example.com/items/rookies-guard.png".into()),
    });
    let draft = with_status(active("draft-pack", 10), PackStatus::Draft);
    // Archived, its sale over for longer than the reveal delay: its seed is public.
    let archived = with_status(
        ending(active("old-pack", 100_000), -7_200),
        PackStatus::Archived,
    );
    for pack in [&rookies, &draft, &archived] {
        testkit::packs::save(&store, pack).await;
    }
    let runtime = RuntimeApi::start().await;
    let _function = spawn(&runtime, store.table(), testkit::moto::shared_endpoint());

    let (status, body, headers) = get(&runtime, "/api/packs/rookies").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(headers["content-type"], "application/json");
    assert_eq!(body.as_object().map(|b| b.len()), Some(1), "only `pack`");
    assert_eq!(body["pack"]["items"].as_array().map(Vec::len), Some(2));
    assert_eq!(
        body["pack"]["items"][1]["imageUrl"],
        "https://cdn.example.com/items/rookies-guard.png"
    );
    assert_eq!(body["pack"]["items"][0]["imageUrl"], Value::Null);
    assert_answers(&store, &body, &rookies, false).await;

    let (status, body, _) = get(&runtime, "/api/packs/old-pack").await;
    assert_eq!(status, 200, "an archived pack is answered: {body}");
    assert_answers(&store, &body, &archived, true).await;

    for id in ["does-not-exist", "draft-pack"] {
        let (status, body, _) = get(&runtime, &format!("/api/packs/{id}")).await;
        assert_eq!(
            (status, body["error"]["code"].as_str(), &body["success"]),
            (404, Some("pack_not_found"), &Value::Bool(false)),
            "{id}: {body}"
        );
    }

    let long = "a".repeat(65);
    for id in ["a%2Fb", "..", long.as_str(), "%C3%A9", "a%252Fb", "%zz"] {
        let (status, body, _) = get(&runtime, &format!("/api/packs/{id}")).await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (404, Some("not_found")),
            "{id:?}: {body}"
        );
    }
    // An empty id: `/api/packs/` has a trailing slash, which is no route (README's rule,
    // api::http::routes, `Routes::function_app`): the 404. API Gateway and `cargo lambda
    // watch` never send it here.
    let (status, body, _) = get(&runtime, "/api/packs/").await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (404, Some("not_found")),
        "{body}"
    );

    let (status, body, headers) = call(
        &runtime,
        ApiEvent::new("DELETE", "/api/packs/rookies").to_json(),
    )
    .await;
    assert_eq!(
        (
            status,
            body["error"]["code"].as_str(),
            headers["allow"].as_str()
        ),
        (405, Some("method_not_allowed"), Some("GET")),
        "{body}"
    );
}

/// `infra/events/get-pack.json`, as API Gateway sends it, answered after the shipped seed's
/// `nba-rookie-2026` is seeded.
#[tokio::test]
async fn the_event_fixture_gets_the_shipped_seed_pack() {
    let seed_file = concat!(env!("CARGO_MANIFEST_DIR"), "/../infra/seed/packs.json");
    let packs = parse_seed(&std::fs::read(seed_file).unwrap()).expect("the shipped seed parses");
    let pack = packs
        .into_iter()
        .find(|pack| pack.id == "nba-rookie-2026")
        .expect("the shipped seed has nba-rookie-2026");
    let store = testkit::moto::shared_table().await;
    testkit::packs::save(&store, &pack).await;
    let runtime = RuntimeApi::start().await;
    let _function = spawn(&runtime, store.table(), testkit::moto::shared_endpoint());

    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/../infra/events/get-pack.json");
    let event: Value = serde_json::from_str(&std::fs::read_to_string(fixture).unwrap()).unwrap();
    let (status, body, _) = call(&runtime, event).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["pack"]["id"], "nba-rookie-2026");
    assert!(
        !body["pack"]["items"].as_array().unwrap().is_empty(),
        "{body}"
    );
    let revealed = body["pack"]["fairness"]["serverSeed"] != Value::Null;
    assert_answers(&store, &body, &pack, revealed).await;
}

/// Issue 44: a pack the instance answers from memory still counts down from each answer, and
/// the countdown is never stored.
#[tokio::test]
async fn a_pack_kept_in_memory_counts_down_from_each_answer() {
    let store = testkit::moto::shared_table().await;
    let mut pack = active("countdown-kept", -60);
    testkit::packs::save(&store, &pack).await;
    let runtime = RuntimeApi::start().await;
    let _function = spawn(&runtime, store.table(), testkit::moto::shared_endpoint());
    let ((_, first, _), first_asked) = asked(get(&runtime, "/api/packs/countdown-kept")).await;
    pack.name = "Renamed".into();
    testkit::packs::save(&store, &pack).await;
    // The clock moves on between the answers, so that one kept whole would show.
    tokio::time::sleep(Duration::from_millis(20)).await;
    let ((_, second, _), second_asked) = asked(get(&runtime, "/api/packs/countdown-kept")).await;
    assert_eq!(
        second["pack"]["name"], "Pack countdown-kept",
        "answered from memory"
    );
    let first = first_asked.assert_counts_down(&first["pack"], "saleStarts");
    let second = second_asked.assert_counts_down(&second["pack"], "saleStarts");
    assert!(
        second < first && first <= Some(60_000),
        "{first:?} then {second:?}"
    );

    let stored = store
        .list_upcoming_packs(Timestamp::now(), 100)
        .await
        .unwrap()
        .into_iter()
        .find(|document| document.fields().contains("\"countdown-kept\""))
        .expect("listed as upcoming");
    assert!(!stored.fields().contains("InMs"), "{}", stored.fields());
}

#[tokio::test]
async fn missing_table_name_stops_the_function_with_a_clear_message() {
    testkit::runtime_api::assert_init_fails_naming(BINARY, &[], "TABLE_NAME").await;
}

#[tokio::test]
async fn a_dynamodb_outage_is_a_503_and_the_same_process_serves_again_after_it() {
    let store = testkit::moto::shared_table().await;
    // One pack per fault: an instance answers a pack it read lately from memory (5 s).
    for id in ["p0", "p1"] {
        testkit::packs::save(&store, &active(id, 10)).await;
    }
    let proxy = FaultProxy::start(testkit::moto::shared_endpoint()).await;
    let runtime = RuntimeApi::start().await;
    let mut function = spawn(&runtime, store.table(), &proxy.endpoint());
    for (path, fault) in [
        ("/api/packs/p0", THROTTLING),
        ("/api/packs/p1", Fault::Hangup),
    ] {
        proxy.set(fault.clone());
        let (status, body, headers) = get(&runtime, path).await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (503, Some("service_unavailable")),
            "{fault:?}"
        );
        assert!(headers["retry-after"].is_string(), "{headers}");
        proxy.set(Fault::None);
        assert_eq!(get(&runtime, path).await.0, 200, "after {fault:?}");
    }
    assert!(
        function.try_wait().unwrap().is_none(),
        "the function process is still running"
    );
}

/// Forwarded headers that make no URI (`x-forwarded-proto: h_t`, `host: example.com:99999`, ...)
/// get the pack from the same warm process: lambda_http alone panics building the request's URI.
#[tokio::test]
async fn forwarded_headers_that_make_no_uri_get_the_pack() {
    let store = testkit::moto::shared_table().await;
    testkit::packs::save(&store, &active("p", 10)).await;
    let runtime = RuntimeApi::start().await;
    let mut function = spawn(&runtime, store.table(), testkit::moto::shared_endpoint());
    for (name, value) in testkit::attacks::HEADERS_THAT_MAKE_NO_URI {
        let event = ApiEvent::get("/api/packs/p").header(name, value).to_json();
        let (status, body, _) = call(&runtime, event).await;
        assert_eq!(status, 200, "{name}: {value:?}: {body}");
        assert_eq!(body["pack"]["id"], "p", "{name}: {value:?}");
    }
    assert_eq!(get(&runtime, "/api/packs/p").await.0, 200);
    assert!(
        function.try_wait().unwrap().is_none(),
        "the same process answered throughout"
    );
}

/// The DynamoDB requests of a pack's read, counted at a proxy in front of moto: the numbers
/// docs/design.md states (What one request costs): the pack's and its draw's items at once, then
/// nothing for 5 s (the instance's copy), and never a rate counter (counted in memory).
#[tokio::test]
async fn a_pack_read_makes_the_requests_the_docs_count() {
    let (env, proxy) = testkit::purchases::PurchaseEnv::behind_proxy().await;
    let function = env.spawn(BINARY, &[]).await;
    // The first call pays for what a cold start does once (another pack: `p` not kept yet).
    let other = ApiEvent::get("/api/packs/other");
    function.requests_of(&proxy, &other, 404).await;
    let pack = ApiEvent::get("/api/packs/p");
    assert_eq!(
        function.requests_of(&proxy, &pack, 200).await,
        counts(&[("BatchGetItem", 1)]),
        "a public read writes no rate counter (issue 45)"
    );
    assert_eq!(
        function.requests_of(&proxy, &pack, 200).await,
        counts(&[]),
        "the instance's copy: no call at all"
    );
}
