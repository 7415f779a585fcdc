//! What a fan writes that others read, over API Gateway events on both stores (DynamoStore on
//! moto_server through the one-request-at-a-time proxy, MemoryStore): an avatar URL is answered
//! on the profile, the public locker room and the boards only in its normal form, and one the
//! rules refuse is 400; a reserved display name and a title holding a bidi, zero-width or other
//! invisible character are 400 `invalid_body` and write nothing; names that look alike are one
//! name (409 `display_name_taken`), and each finds the fan who holds it.

use std::sync::Arc;

use api::handlers::leaderboards::LeaderboardsState;
use api::handlers::locker_room::LockerRoomsState;
use api::http::routes::{leaderboards_routes, locker_rooms_routes, me_profile_routes};
use api::state::ProfileState;
use serde_json::Value;
use store::Store;
use testkit::events::{self, ApiEvent, parts};
use testkit::tokens::token;

testkit::store_contract!(
    by_value:
    avatars_are_answered_in_their_normal_form_wherever_they_are_read,
    reserved_names_and_hidden_title_characters_are_400_and_write_nothing,
    look_alike_names_are_one_name_and_each_finds_its_fan,
);

struct Api<S> {
    me: Arc<ProfileState<S>>,
    rooms: Arc<LockerRoomsState<S>>,
    boards: Arc<LeaderboardsState<S>>,
}

impl<S: Store + Clone + 'static> Api<S> {
    fn new(store: S) -> Self {
        Self {
            me: Arc::new(ProfileState {
                store: store.clone(),
                verifier: testkit::tokens::verifier(),
                max_body_bytes: 8192,
            }),
            rooms: Arc::new(LockerRoomsState {
                store: store.clone(),
            }),
            boards: Arc::new(LeaderboardsState {
                store,
                verifier: testkit::tokens::verifier(),
            }),
        }
    }

    async fn me(&self, method: &str, path: &str, fan: &str, body: &str) -> (u16, Value) {
        let event = ApiEvent::new(method, path)
            .bearer(&token(fan, None))
            .json(body);
        parts(&events::call(me_profile_routes(), &self.me, event.request()).await)
    }

    async fn patch(&self, fan: &str, body: &str) -> (u16, Value) {
        self.me("PATCH", "/api/me", fan, body).await
    }

    /// `PATCH /api/me` of `displayName` alone.
    async fn name(&self, fan: &str, name: &str) -> (u16, Value) {
        let body = serde_json::json!({ "displayName": name });
        self.patch(fan, &body.to_string()).await
    }

    async fn put_room(&self, fan: &str, body: &str) -> (u16, Value) {
        self.me("PUT", "/api/me/locker-room", fan, body).await
    }

    async fn room(&self, name: &str) -> (u16, Value) {
        let request = ApiEvent::get(&format!("/api/locker-rooms/{name}")).request();
        parts(&events::call(locker_rooms_routes(), &self.rooms, request).await)
    }

    async fn global_board(&self) -> (u16, Value) {
        let request = ApiEvent::get("/api/leaderboards/global").request();
        parts(&events::call(leaderboards_routes(), &self.boards, request).await)
    }
}

fn code(answer: &(u16, Value)) -> (u16, &str) {
    (answer.0, answer.1["error"]["code"].as_str().unwrap_or("-"))
}

/// Asserts that `answer` (to `sent`) is 400 `invalid_body` with a message that begins `naming`.
fn assert_refused(answer: &(u16, Value), naming: &str, sent: &str) {
    assert_eq!(code(answer), (400, "invalid_body"), "{sent:?}");
    let message = answer.1["error"]["message"].as_str().unwrap();
    assert!(message.starts_with(naming), "{sent:?}: {message}");
}

const XSS_AVATAR: &str = " HTTPS:cdn.example/a.png?\"><img src=x onerror=alert(1)>";
const XSS_NORMAL: &str = "https://cdn.example/a.png?%22%3E%3Cimg%20src=x%20onerror=alert(1)%3E";

async fn avatars_are_answered_in_their_normal_form_wherever_they_are_read(
    store: impl Store + Clone + 'static,
) {
    testkit::packs::save(&store, &testkit::packs::active("board-pack", 60)).await;
    testkit::openings::open_one(&store, "fan-1", "board-pack", "k1", testkit::packs::at(-30)).await;
    let api = Api::new(store);
    let body = serde_json::json!({"displayName": "Av98389", "avatarUrl": XSS_AVATAR});
    let patched = api.patch("fan-1", &body.to_string()).await;
    assert_eq!(patched.0, 200, "{}", patched.1);
    assert_eq!(patched.1["user"]["avatarUrl"], XSS_NORMAL);
    let (status, room) = api.room("Av98389").await;
    assert_eq!(
        (status, &room["lockerRoom"]["avatarUrl"]),
        (200, &XSS_NORMAL.into()),
        "{room}"
    );
    let (status, board) = api.global_board().await;
    assert_eq!(status, 200, "{board}");
    assert_eq!(board["entries"][0]["displayName"], "Av98389");
    assert_eq!(board["entries"][0]["avatarUrl"], XSS_NORMAL);
    for answer in [&room, &board] {
        let text = answer.to_string();
        assert!(!text.contains('<') && !text.contains("\\\""), "{text}");
    }
    for refused in [
        "https://user:pass@cdn.example/a.png",
        "https://127.0.0.1/a.png",
        "https://[::1]/a.png",
        "https://\u{430}pple.com/a.png",
        "https://cdn.example:8443/a.png",
        "http://cdn.example/a.png",
    ] {
        let body = serde_json::json!({"avatarUrl": refused});
        assert_refused(
            &api.patch("fan-1", &body.to_string()).await,
            "avatarUrl",
            refused,
        );
    }
    assert_eq!(api.room("Av98389").await.1, room, "nothing written");
}

async fn reserved_names_and_hidden_title_characters_are_400_and_write_nothing(
    store: impl Store + Clone + 'static,
) {
    let api = Api::new(store);
    for reserved in [
        "admin",
        "Adm1n",
        "ADMIN_96917",
        "Support_1",
        "official.nba",
        "NBA_Official",
        "moderator",
        "fan-api",
        "FanAPI.bot",
        "root_96917",
        "System.Notice",
        "null",
        "NULL",
        "...",
    ] {
        let answer = api.name("fan-1", reserved).await;
        assert_refused(&answer, "displayName is reserved", reserved);
    }
    let (status, me) = api.me("GET", "/api/me", "fan-1", "").await;
    assert_eq!((status, &me["user"]["displayName"]), (200, &Value::Null));
    assert_eq!(api.name("fan-1", "Titled").await.0, 200);
    assert_eq!(
        api.put_room("fan-1", r#"{"title": "Rookie gold", "items": []}"#)
            .await
            .0,
        200
    );
    for hidden in [
        '\u{202e}', '\u{2066}', '\u{200b}', '\u{200d}', '\u{feff}', '\u{3164}',
    ] {
        let body = serde_json::json!({"title": format!("Rookie {hidden}gold"), "items": []});
        let answer = api.put_room("fan-1", &body.to_string()).await;
        assert_refused(&answer, "title", &format!("U+{:04X}", hidden as u32));
    }
    let (status, room) = api.room("titled").await;
    assert_eq!(
        (status, &room["lockerRoom"]["title"]),
        (200, &"Rookie gold".into()),
        "{room}"
    );
}

async fn look_alike_names_are_one_name_and_each_finds_its_fan(store: impl Store + Clone + 'static) {
    let api = Api::new(store);
    assert_eq!(api.name("fan-1", "Hollow.96917").await.0, 200);
    for alike in [
        "HoIlow.96917",
        "H0llow.96917",
        "Hollow_96917",
        "Hollow-96917",
        "hollow96917",
    ] {
        let answer = api.name("fan-2", alike).await;
        assert_eq!(code(&answer), (409, "display_name_taken"), "{alike}");
        let (status, room) = api.room(alike).await;
        assert_eq!(
            (status, &room["lockerRoom"]["displayName"]),
            (200, &"Hollow.96917".into()),
            "{alike}: {room}"
        );
    }
    let (status, me) = api.me("GET", "/api/me", "fan-2", "").await;
    assert_eq!((status, &me["user"]["displayName"]), (200, &Value::Null));
}
