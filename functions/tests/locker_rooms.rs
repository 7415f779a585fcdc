//! The real `locker-rooms` binary (GET /api/locker-rooms/{displayName}), run through a Lambda
//! Runtime API emulator against moto_server; the locker room put through the `me-profile`
//! binary beside it, as deployed.

use domain::timestamp::Timestamp;
use store::purchases::SeedPurchases;
use testkit::events::ApiEvent;
use testkit::purchases::{Function, PurchaseEnv, fixture, sibling_binary};
use testkit::tokens::token;

const BINARY: &str = env!("CARGO_BIN_EXE_locker-rooms");

async fn spawn(env: &PurchaseEnv) -> Function {
    env.spawn(BINARY, &[]).await
}

#[tokio::test]
async fn answers_the_locker_room_a_fan_put_under_their_name_only() {
    let env = PurchaseEnv::new().await;
    let opened = testkit::mine::purchase("fan-1", 0, 0, true, Timestamp::now());
    env.store.seed_purchases(&[opened]).await.unwrap();
    let me = env
        .spawn(&sibling_binary(BINARY, "me-profile").to_string_lossy(), &[])
        .await;
    let fan = token("fan-1", Some("one@example.com"));
    let call_me =
        |method: &str, path: &str, body: &str| ApiEvent::new(method, path).bearer(&fan).json(body);
    let named = me
        .call(&call_me(
            "PATCH",
            "/api/me",
            r#"{"displayName": "Zoe.Hoops"}"#,
        ))
        .await;
    assert_eq!(named.status, 200, "{named:?}");
    let put = me
        .call(&call_me(
            "PUT",
            "/api/me/locker-room",
            r#"{"title": "Gold", "items": [{"purchaseId": "fan-1-0000", "slot": 1}]}"#,
        ))
        .await;
    assert_eq!(put.status, 200, "{put:?}");
    let refused = me
        .call(&call_me(
            "PUT",
            "/api/me/locker-room",
            r#"{"items": [{"purchaseId": "fan-2-0000", "slot": 0}]}"#,
        ))
        .await;
    assert_eq!(
        (refused.status, refused.code()),
        (422, Some("item_not_owned"))
    );

    let public = spawn(&env).await;
    let room = public
        .call(&ApiEvent::get("/api/locker-rooms/zoe.HOOPS"))
        .await;
    assert_eq!(room.status, 200, "{room:?}");
    assert_eq!(
        room.header("cache-control"),
        Some("public, max-age=10, stale-while-revalidate=60")
    );
    assert_eq!(room.body, put.body);
    assert!(!room.body.to_string().contains("one@example.com"));
    me.call(&call_me(
        "PATCH",
        "/api/me",
        r#"{"displayName": "Zoe.Dunks"}"#,
    ))
    .await;
    let old = public
        .call(&ApiEvent::get("/api/locker-rooms/Zoe.Hoops"))
        .await;
    assert_eq!(
        (old.status, old.code()),
        (404, Some("locker_room_not_found"))
    );
    let moved = public
        .call(&ApiEvent::get("/api/locker-rooms/Zoe.Dunks"))
        .await;
    assert_eq!(
        moved.body["lockerRoom"]["items"],
        put.body["lockerRoom"]["items"]
    );
}

/// `infra/events/locker-rooms.json`: the locker room of the name the PATCH fixture gives `me`,
/// and `me-profile.locker-room.json`.
#[tokio::test]
async fn the_event_fixtures_answer() {
    let env = PurchaseEnv::new().await;
    let me = env
        .spawn(&sibling_binary(BINARY, "me-profile").to_string_lossy(), &[])
        .await;
    let public = spawn(&env).await;
    let none = public.call_json(fixture("locker-rooms", None)).await;
    assert_eq!(
        (none.status, none.code()),
        (404, Some("locker_room_not_found"))
    );
    let me_token = token("me", None);
    let named = me
        .call_json(fixture("me-profile.patch", Some(&me_token)))
        .await;
    assert_eq!(named.status, 200, "{named:?}");
    let put = me
        .call_json(fixture("me-profile.locker-room", Some(&me_token)))
        .await;
    assert_eq!(put.status, 200, "{put:?}");
    let room = public.call_json(fixture("locker-rooms", None)).await;
    assert_eq!(room.status, 200, "{room:?}");
    assert_eq!(room.body["lockerRoom"]["title"], "Rookie gold");
}

#[tokio::test]
async fn a_dynamodb_outage_is_a_503_with_retry_after() {
    let (env, proxy) = PurchaseEnv::behind_proxy().await;
    let function = spawn(&env).await;
    let event = ApiEvent::get("/api/locker-rooms/nobody");
    use testkit::fault_proxy::{Fault, THROTTLING};
    proxy.set(THROTTLING);
    function.call(&event).await.assert_unavailable();
    proxy.set(Fault::None);
    let answer = function.call(&event).await;
    assert_eq!(answer.status, 404, "{answer:?}");
}

/// The DynamoDB requests of a locker room's read, counted at a proxy in front of moto: the
/// numbers docs/design.md states (What one request costs): the name's holder, then their
/// public items.
#[tokio::test]
async fn a_locker_room_read_makes_the_requests_the_docs_count() {
    let (env, proxy) = PurchaseEnv::behind_proxy().await;
    testkit::profiles::name(&env.store, "fan-1", "Zoe.Hoops", None).await;
    let function = spawn(&env).await;
    // The first call pays for what a cold start does once.
    let room = ApiEvent::get("/api/locker-rooms/Zoe.Hoops");
    function.requests_of(&proxy, &room, 200).await;
    assert_eq!(
        function.requests_of(&proxy, &room, 200).await,
        testkit::fault_proxy::counts(&[("GetItem", 1), ("Query", 1)])
    );
}
