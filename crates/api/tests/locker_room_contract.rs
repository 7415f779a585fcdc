//! The locker room, run against both stores (DynamoStore on moto_server through the
//! one-request-at-a-time proxy, MemoryStore): only the fan's own pulls are shown, in their
//! order; a refused put writes nothing; the public view is found by name in any case, moves with
//! a rename (the old name finds nothing) and never shows what a patch did not make public; a
//! look-alike of a name finds its fan; an avatar is served, here and on the boards, only in its
//! normal form.

use std::sync::Arc;

use domain::leaderboards::Board;
use domain::locker_room::{ItemRef, LockerRoomBody};
use domain::profile::name::DisplayName;
use domain::profile::patch::ProfilePatchBody;
use domain::timestamp::Timestamp;
use store::Store;
use store::locker_room::PutLockerRoomError;
use store::purchases::SeedPurchases;
use testkit::ids;
use testkit::mine::purchase;

testkit::store_contract!(
    arc:
    a_locker_room_shows_the_fans_own_pulls_in_their_order,
    an_item_not_pulled_by_the_fan_is_refused_and_nothing_is_written,
    the_public_view_follows_the_name_in_any_case_and_a_rename,
    a_look_alike_finds_the_fan_and_the_avatar_is_served_normalised_here_and_on_the_board,
);

pub(crate) fn body(title: Option<&str>, items: &[(&str, u32)]) -> LockerRoomBody {
    LockerRoomBody {
        title: title.map(str::to_owned),
        items: items
            .iter()
            .map(|(purchase, slot)| ItemRef {
                purchase_id: ids::purchase(purchase),
                slot: *slot,
            })
            .collect(),
    }
    .check()
    .unwrap()
}

fn name(text: &str) -> DisplayName {
    DisplayName::parse(text).unwrap()
}

async fn rename(store: &impl Store, fan: &str, json: &str) {
    let patch = serde_json::from_str::<ProfilePatchBody>(json)
        .unwrap()
        .check()
        .unwrap();
    store
        .patch_profile(&ids::user(fan), None, &patch, Timestamp::now())
        .await
        .unwrap();
}

/// Opened purchases `<fan>-0000` to `-0002` and one paid, not opened (`<fan>-0008`), seeded.
async fn pulls(store: &(impl Store + SeedPurchases), fan: &str) {
    let now = Timestamp::now();
    let mut seeded: Vec<_> = (0..3).map(|n| purchase(fan, n, 0, true, now)).collect();
    seeded.push(purchase(fan, 8, 0, false, now));
    store.seed_purchases(&seeded).await.unwrap();
}

async fn a_locker_room_shows_the_fans_own_pulls_in_their_order(
    store: Arc<impl Store + SeedPurchases>,
) {
    pulls(&*store, "fan").await;
    let room = store
        .put_locker_room(
            &ids::user("fan"),
            &body(
                Some("My pulls"),
                &[("fan-0002", 1), ("fan-0000", 0), ("fan-0000", 2)],
            ),
            Timestamp::now(),
        )
        .await
        .unwrap();
    assert_eq!(room.title.as_deref(), Some("My pulls"));
    assert_eq!(room.display_name, None, "no name yet");
    let shown: Vec<(String, u32)> = room
        .items
        .iter()
        .map(|item| (item.purchase_id.to_string(), item.item.slot))
        .collect();
    assert_eq!(
        shown,
        [
            ("fan-0002".to_owned(), 1),
            ("fan-0000".to_owned(), 0),
            ("fan-0000".to_owned(), 2)
        ]
    );
    let expected = purchase("fan", 2, 0, true, Timestamp::now());
    assert_eq!(room.items[0].item, expected.items.unwrap()[1]);
    // Replaced whole: fewer items, no title.
    let replaced = store
        .put_locker_room(&ids::user("fan"), &body(None, &[]), Timestamp::now())
        .await
        .unwrap();
    assert_eq!((replaced.title, replaced.items.len()), (None, 0));
}

async fn an_item_not_pulled_by_the_fan_is_refused_and_nothing_is_written(
    store: Arc<impl Store + SeedPurchases>,
) {
    pulls(&*store, "fan").await;
    pulls(&*store, "other").await;
    rename(&*store, "fan", r#"{"displayName": "Shower"}"#).await;
    store
        .put_locker_room(
            &ids::user("fan"),
            &body(Some("Kept"), &[("fan-0001", 0)]),
            Timestamp::now(),
        )
        .await
        .unwrap();
    for (items, index) in [
        (vec![("fan-0000", 0), ("other-0000", 0)], 1),
        (vec![("fan-0008", 0)], 0),
        (vec![("fan-0000", 99)], 0),
        (vec![("nobody-0000", 0)], 0),
    ] {
        let refused = store
            .put_locker_room(
                &ids::user("fan"),
                &body(Some("Changed"), &items),
                Timestamp::now(),
            )
            .await;
        match refused {
            Err(PutLockerRoomError::NotOwned(not_owned)) => {
                assert_eq!(not_owned.index, index, "{items:?}")
            }
            other => panic!("{items:?}: {other:?}"),
        }
    }
    let room = store
        .get_locker_room(&name("shower"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(room.title.as_deref(), Some("Kept"), "nothing written");
    assert_eq!(room.items.len(), 1);
}

async fn the_public_view_follows_the_name_in_any_case_and_a_rename(
    store: Arc<impl Store + SeedPurchases>,
) {
    store
        .put_team(&testkit::profiles::team("nba-lal"))
        .await
        .unwrap();
    pulls(&*store, "fan").await;
    assert_eq!(store.get_locker_room(&name("Nobody")).await.unwrap(), None);
    rename(
        &*store,
        "fan",
        r#"{"displayName": "Zoe.Hoops", "favoriteTeamId": "nba-lal", "avatarUrl": "https://a.example/z.png"}"#,
    )
    .await;
    // A named fan who never put a locker room has an empty one.
    let empty = store
        .get_locker_room(&name("zoe.hoops"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(empty.display_name, Some(name("Zoe.Hoops")));
    assert_eq!(empty.title, None);
    assert!(empty.items.is_empty());
    let put = store
        .put_locker_room(
            &ids::user("fan"),
            &body(Some("Gold"), &[("fan-0001", 2)]),
            Timestamp::now(),
        )
        .await
        .unwrap();
    for asked in ["Zoe.Hoops", "ZOE.HOOPS", "zoe.hoops"] {
        assert_eq!(
            store.get_locker_room(&name(asked)).await.unwrap().as_ref(),
            Some(&put),
            "{asked}"
        );
    }
    assert_eq!(put.display_name, Some(name("Zoe.Hoops")));
    assert_eq!(
        put.favorite_team_id.as_ref().map(|id| id.as_str()),
        Some("nba-lal")
    );
    assert_eq!(
        put.avatar_url.as_ref().map(|url| url.as_str()),
        Some("https://a.example/z.png")
    );
    rename(
        &*store,
        "fan",
        r#"{"displayName": "Zoe.Dunks", "avatarUrl": null}"#,
    )
    .await;
    assert_eq!(
        store.get_locker_room(&name("zoe.hoops")).await.unwrap(),
        None
    );
    let moved = store
        .get_locker_room(&name("zoe.dunks"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(moved.display_name, Some(name("Zoe.Dunks")));
    assert_eq!(moved.avatar_url, None);
    assert_eq!((moved.title, moved.items), (put.title, put.items));
    // Another fan takes the old name: it shows theirs.
    rename(&*store, "fan-2", r#"{"displayName": "ZOE.hoops"}"#).await;
    let theirs = store
        .get_locker_room(&name("zoe.hoops"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(theirs.display_name, Some(name("ZOE.hoops")));
    assert!(theirs.items.is_empty());
    // A cleared name is found by nobody.
    rename(&*store, "fan", r#"{"displayName": null}"#).await;
    assert_eq!(
        store.get_locker_room(&name("zoe.dunks")).await.unwrap(),
        None
    );
}

async fn a_look_alike_finds_the_fan_and_the_avatar_is_served_normalised_here_and_on_the_board(
    store: Arc<impl Store + SeedPurchases>,
) {
    testkit::packs::save(&*store, &testkit::packs::active("board-pack", 60)).await;
    testkit::openings::open_one(&*store, "fan", "board-pack", "k1", testkit::packs::at(-30)).await;
    rename(
        &*store,
        "fan",
        r#"{"displayName": "Av98389", "avatarUrl": " HTTPS:cdn.example/a.png?\"><img src=x onerror=alert(1)>"}"#,
    )
    .await;
    let normal = "https://cdn.example/a.png?%22%3E%3Cimg%20src=x%20onerror=alert(1)%3E";
    for asked in ["Av98389", "AV98389", "Av9838g", "Av.98389", "Av_98389"] {
        let found = store.get_locker_room(&name(asked)).await.unwrap();
        if asked == "Av9838g" {
            assert_eq!(found, None, "g is not 9");
            continue;
        }
        let room = found.unwrap_or_else(|| panic!("{asked} finds nobody"));
        assert_eq!(room.display_name, Some(name("Av98389")), "{asked}");
        assert_eq!(
            room.avatar_url.as_ref().map(|url| url.as_str()),
            Some(normal)
        );
    }
    let board = store.read_board(&Board::Global, 10).await.unwrap();
    assert_eq!(board.len(), 1);
    assert_eq!(board[0].display_name, name("Av98389"));
    assert_eq!(
        board[0].avatar_url.as_ref().map(|url| url.as_str()),
        Some(normal)
    );
    // A tab inside the host and a newline before markup are dropped, the markup encoded.
    rename(
        &*store,
        "fan",
        r#"{"avatarUrl": "https://cdn.ex\tample/\n<script>alert(1)</script>"}"#,
    )
    .await;
    let board = store.read_board(&Board::Global, 10).await.unwrap();
    assert_eq!(
        board[0].avatar_url.as_ref().map(|url| url.as_str()),
        Some("https://cdn.example/%3Cscript%3Ealert(1)%3C/script%3E")
    );
}

/// An avatar an older release stored as sent (DynamoDB only: the in-memory store holds only
/// what this release wrote) is served in its normal form, or not at all when the rules refuse
/// it now, on the public view and on the board: the read normalises it again.
#[tokio::test]
async fn a_raw_avatar_stored_by_an_older_release_is_served_normalised_or_not_at_all() {
    use aws_sdk_dynamodb::types::AttributeValue;
    use store::leaderboards::ReadBoard;
    use store::locker_room::GetLockerRoom;
    use store::schema::{PK, SHOW_SK, SK, fan_pk};

    let store = testkit::moto::shared_table().await;
    testkit::packs::save(&store, &testkit::packs::active("board-pack", 60)).await;
    testkit::openings::open_one(&store, "old", "board-pack", "k1", testkit::packs::at(-30)).await;
    rename(&store, "old", r#"{"displayName": "Old.Timer"}"#).await;
    let store_raw = |raw: &'static str| {
        store
            .client()
            .update_item()
            .table_name(store.table())
            .key(PK, AttributeValue::S(fan_pk(&ids::user("old"))))
            .key(SK, AttributeValue::S(SHOW_SK.into()))
            .update_expression("SET avatarUrl = :raw")
            .expression_attribute_values(":raw", AttributeValue::S(raw.into()))
            .send()
    };
    let served = || async {
        let room = store
            .get_locker_room(&name("old.timer"))
            .await
            .unwrap()
            .unwrap();
        let board = store.read_board(&Board::Global, 10).await.unwrap();
        let text =
            |url: Option<&domain::profile::AvatarUrl>| url.map(|url| url.as_str().to_owned());
        (
            text(room.avatar_url.as_ref()),
            text(board[0].avatar_url.as_ref()),
        )
    };
    store_raw("https://cdn.ex\tample/\n<script>alert(1)</script>")
        .await
        .unwrap();
    let normal = Some("https://cdn.example/%3Cscript%3Ealert(1)%3C/script%3E".to_owned());
    assert_eq!(served().await, (normal.clone(), normal));
    store_raw("https://127.0.0.1/a.png").await.unwrap();
    assert_eq!(served().await, (None, None));
}
