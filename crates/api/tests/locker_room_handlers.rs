//! `PUT /api/me/locker-room` and `GET /api/locker-rooms/{displayName}` over API Gateway events
//! on the in-memory store: every bad body a 400 naming its member and writing nothing, another
//! fan's purchase 422, the public view cacheable, found by a name with a `.` in any case, and
//! never carrying the fan's e-mail or id.

use std::sync::Arc;

use api::handlers::locker_room::LockerRoomsState;
use api::http::routes::{locker_rooms_routes, me_profile_routes};
use api::state::ProfileState;
use domain::timestamp::Timestamp;
use serde_json::Value;
use store::MemoryStore;
use store::purchases::SeedPurchases;
use testkit::events::{self, ApiEvent, parts};
use testkit::tokens::token;

struct Api {
    me: Arc<ProfileState<MemoryStore>>,
    public: Arc<LockerRoomsState<MemoryStore>>,
}

async fn api() -> Api {
    let store = MemoryStore::default();
    let now = Timestamp::now();
    let mut seeded: Vec<_> = (0..3)
        .map(|n| testkit::mine::purchase("fan-1", n, 0, true, now))
        .collect();
    seeded.push(testkit::mine::purchase("fan-2", 0, 0, true, now));
    store.seed_purchases(&seeded).await.unwrap();
    Api {
        me: Arc::new(ProfileState {
            store: store.clone(),
            verifier: testkit::tokens::verifier(),
            max_body_bytes: 8192,
        }),
        public: Arc::new(LockerRoomsState { store }),
    }
}

impl Api {
    async fn me(&self, method: &str, path: &str, fan: &str, body: &str) -> (u16, Value) {
        let event = ApiEvent::new(method, path)
            .bearer(&token(fan, Some("secret@example.com")))
            .json(body);
        parts(&events::call(me_profile_routes(), &self.me, event.request()).await)
    }

    async fn put(&self, fan: &str, body: &str) -> (u16, Value) {
        self.me("PUT", "/api/me/locker-room", fan, body).await
    }

    async fn public(&self, path: &str) -> lambda_http::Response<lambda_http::Body> {
        events::call(
            locker_rooms_routes(),
            &self.public,
            ApiEvent::get(path).request(),
        )
        .await
    }
}

fn code(answer: &(u16, Value)) -> (u16, &str) {
    (answer.0, answer.1["error"]["code"].as_str().unwrap_or("-"))
}

#[tokio::test]
async fn the_public_view_is_found_by_name_in_any_case_and_cacheable() {
    let api = api().await;
    assert_eq!(
        api.me(
            "PATCH",
            "/api/me",
            "fan-1",
            r#"{"displayName": "Zoe.Hoops"}"#
        )
        .await
        .0,
        200
    );
    let put = api
        .put(
            "fan-1",
            r#"{"title": "Gold", "items": [{"purchaseId": "fan-1-0001", "slot": 2}]}"#,
        )
        .await;
    assert_eq!(put.0, 200, "{}", put.1);
    let room = &put.1["lockerRoom"];
    assert_eq!(room["displayName"], "Zoe.Hoops");
    assert_eq!(room["title"], "Gold");
    assert_eq!(room["items"][0]["purchaseId"], "fan-1-0001");
    assert_eq!(room["items"][0]["slot"], 2);
    assert_eq!(
        room["stats"],
        serde_json::json!({"packsOpened": 0, "itemsOwned": 0, "byRarity": {}})
    );
    for path in [
        "/api/locker-rooms/Zoe.Hoops",
        "/api/locker-rooms/zoe.hoops",
        "/api/locker-rooms/ZOE%2EHOOPS",
    ] {
        let response = api.public(path).await;
        assert_eq!(
            response.headers()["cache-control"],
            "public, max-age=10, stale-while-revalidate=60",
            "{path}"
        );
        let (status, body) = parts(&response);
        assert_eq!((status, &body), (200, &put.1), "{path}");
        let text = body.to_string();
        assert!(
            !text.contains("secret@example.com") && !text.contains("fan-1\""),
            "{text}"
        );
    }
    let (status, body) = parts(&api.public("/api/locker-rooms/nobody").await);
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (404, Some("locker_room_not_found"))
    );
    for not_a_name in ["ab", "a%2Fbc", "Zo%C3%AB"] {
        let (status, body) = parts(&api.public(&format!("/api/locker-rooms/{not_a_name}")).await);
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (404, Some("not_found")),
            "{not_a_name}"
        );
    }
}

#[tokio::test]
async fn bad_bodies_are_400_naming_the_member_and_write_nothing() {
    let api = api().await;
    let kept = r#"{"title": "Kept", "items": [{"purchaseId": "fan-1-0000", "slot": 0}]}"#;
    let before = api.put("fan-1", kept).await;
    assert_eq!(before.0, 200);
    let thirteen: Vec<String> = (0..13)
        .map(|slot| format!(r#"{{"purchaseId": "fan-1-0000", "slot": {slot}}}"#))
        .collect();
    for (body, expected, names) in [
        (r#"{"title": "x"}"#.to_owned(), (400, "invalid_body"), ""),
        (r#"{"items": [], "theme": "dark"}"#.to_owned(), (400, "invalid_body"), ""),
        (
            format!(r#"{{"title": "{}", "items": []}}"#, "t".repeat(61)),
            (400, "invalid_body"),
            "title",
        ),
        (r#"{"title": " ", "items": []}"#.to_owned(), (400, "invalid_body"), "title"),
        (
            format!(r#"{{"items": [{}]}}"#, thirteen.join(",")),
            (400, "invalid_body"),
            "items",
        ),
        (
            r#"{"items": [{"purchaseId": "fan-1-0000", "slot": 0}, {"purchaseId": "fan-1-0000", "slot": 0}]}"#
                .to_owned(),
            (400, "invalid_body"),
            "items[1]",
        ),
        (
            r#"{"items": [{"purchaseId": "a/b", "slot": 0}]}"#.to_owned(),
            (400, "invalid_body"),
            "",
        ),
        (
            r#"{"items": [{"purchaseId": "fan-2-0000", "slot": 0}]}"#.to_owned(),
            (422, "item_not_owned"),
            "items[0]",
        ),
        (
            r#"{"items": [{"purchaseId": "fan-1-0000", "slot": 0}, {"purchaseId": "fan-1-0001", "slot": 40}]}"#
                .to_owned(),
            (422, "item_not_owned"),
            "items[1]",
        ),
        ("{".to_owned(), (400, "invalid_json"), ""),
    ] {
        let answer = api.put("fan-1", &body).await;
        assert_eq!(code(&answer), expected, "{body}");
        let message = answer.1["error"]["message"].as_str().unwrap();
        assert!(message.contains(names), "{body}: {message}");
    }
    assert_eq!(api.put("fan-1", kept).await, before, "nothing written");
    let anonymous = parts(
        &events::call(
            me_profile_routes(),
            &api.me,
            ApiEvent::new("PUT", "/api/me/locker-room")
                .json(kept)
                .request(),
        )
        .await,
    );
    assert_eq!(code(&anonymous), (401, "missing_token"));
}
