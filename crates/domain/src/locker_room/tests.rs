use super::*;
use crate::cash::Money;
use crate::ids::PackId;
use crate::purchases::{OpenedItem, PurchaseStatus};

fn at(text: &str) -> Timestamp {
    Timestamp::parse(text).unwrap()
}

fn body(json: &str) -> Result<LockerRoomBody, serde_json::Error> {
    serde_json::from_str(json)
}

fn item_ref(purchase: &str, slot: u32) -> ItemRef {
    ItemRef {
        purchase_id: PurchaseId::parse(purchase).unwrap(),
        slot,
    }
}

fn purchase(id: &str, fan: &str, opened: bool) -> Purchase {
    let reserved_at = at("2026-11-20T10:00:00Z");
    Purchase {
        id: PurchaseId::parse(id).unwrap(),
        pack_id: PackId::parse("nba-rookie-2026").unwrap(),
        user_id: UserId::parse(fan).unwrap(),
        status: if opened {
            PurchaseStatus::Opened
        } else {
            PurchaseStatus::Completed
        },
        price: Money {
            amount: 499,
            currency: "USD".into(),
        },
        client_seed: "seed".into(),
        requested_seed: None,
        nonce: 1,
        reserved_at,
        expires_at: at("2026-11-20T10:10:00Z"),
        completed_at: Some(at("2026-11-20T10:01:00Z")),
        opened_at: opened.then(|| at("2026-11-20T10:02:00Z")),
        items: opened.then(|| {
            (0..3)
                .map(|slot| OpenedItem {
                    slot,
                    item_id: format!("item-{slot}"),
                    name: format!("Item {slot}"),
                    rarity: "common".into(),
                    image_url: None,
                })
                .collect()
        }),
        fairness: None,
        supply_shard: 0,
        hold_slot: None,
        admitted: false,
    }
}

#[test]
fn a_body_holds_an_optional_title_and_the_items() {
    let checked = body(r#"{"title": "My pulls", "items": [{"purchaseId": "p1", "slot": 2}]}"#)
        .unwrap()
        .check()
        .unwrap();
    assert_eq!(checked.title.as_deref(), Some("My pulls"));
    assert_eq!(checked.items, [item_ref("p1", 2)]);
    let untitled = body(r#"{"items": []}"#).unwrap().check().unwrap();
    assert_eq!(untitled.title, None);
    assert_eq!(body(r#"{"title": null, "items": []}"#).unwrap().title, None);
}

#[test]
fn malformed_bodies_do_not_parse() {
    for bad in [
        r#"{"title": "x"}"#,
        r#"{"items": [], "theme": "dark"}"#,
        r#"{"items": [{"purchaseId": "p1"}]}"#,
        r#"{"items": [{"purchaseId": "p1", "slot": -1}]}"#,
        r#"{"items": [{"purchaseId": "p/1", "slot": 0}]}"#,
        r#"{"items": [{"purchaseId": "p1", "slot": 0, "x": 1}]}"#,
        r#"{"items": {}}"#,
    ] {
        assert!(body(bad).is_err(), "{bad}");
    }
}

#[test]
fn each_limit_is_named_with_its_member() {
    let thirteen: Vec<String> = (0..13)
        .map(|n| format!(r#"{{"purchaseId": "p{n}", "slot": 0}}"#))
        .collect();
    let cases = [
        (
            format!(r#"{{"title": "{}", "items": []}}"#, "é".repeat(61)),
            LockerRoomError::TitleTooLong,
            "title",
        ),
        (
            r#"{"title": "  ", "items": []}"#.into(),
            LockerRoomError::TitleBlank,
            "title",
        ),
        (
            r#"{"title": "a\u0000b", "items": []}"#.into(),
            LockerRoomError::TitleHidden(0),
            "title",
        ),
        (
            r#"{"title": "Rookie \u202egold", "items": []}"#.into(),
            LockerRoomError::TitleHidden(0x202E),
            "title",
        ),
        (
            r#"{"title": "a\u200bb", "items": []}"#.into(),
            LockerRoomError::TitleHidden(0x200B),
            "title",
        ),
        (
            format!(r#"{{"items": [{}]}}"#, thirteen.join(",")),
            LockerRoomError::TooManyItems,
            "items",
        ),
        (
            r#"{"items": [{"purchaseId": "p1", "slot": 0}, {"purchaseId": "p1", "slot": 1},
                {"purchaseId": "p1", "slot": 0}]}"#
                .into(),
            LockerRoomError::RepeatedItem(2),
            "items[2]",
        ),
    ];
    for (json, error, field) in cases {
        assert_eq!(body(&json).unwrap().check(), Err(error), "{json}");
        assert_eq!(error.field(), field);
    }
    let sixty = format!(
        r#"{{"title": "{}", "items": [{}]}}"#,
        "é".repeat(60),
        thirteen[..12].join(",")
    );
    assert!(body(&sixty).unwrap().check().is_ok());
}

#[test]
fn only_slots_of_the_fans_opened_purchases_are_shown_in_the_order_asked() {
    let fan = UserId::parse("fan").unwrap();
    let purchases = [
        purchase("mine", "fan", true),
        purchase("theirs", "other", true),
        purchase("unopened", "fan", false),
    ];
    let shown = showcase(
        &fan,
        &[item_ref("mine", 2), item_ref("mine", 0)],
        &purchases,
    )
    .unwrap();
    let slots: Vec<(u32, &str)> = shown
        .iter()
        .map(|item| (item.item.slot, item.purchase_id.as_str()))
        .collect();
    assert_eq!(slots, [(2, "mine"), (0, "mine")]);
    assert_eq!(shown[0].item.item_id, "item-2");
    assert_eq!(shown[0].pack_id.as_str(), "nba-rookie-2026");
    assert_eq!(shown[0].opened_at, at("2026-11-20T10:02:00Z"));
    for (refs, index) in [
        (vec![item_ref("mine", 0), item_ref("theirs", 0)], 1),
        (vec![item_ref("unopened", 0)], 0),
        (vec![item_ref("mine", 3)], 0),
        (vec![item_ref("missing", 0)], 0),
    ] {
        assert_eq!(
            showcase(&fan, &refs, &purchases),
            Err(ItemNotOwned { index })
        );
    }
    assert_eq!(showcase(&fan, &[], &purchases), Ok(vec![]));
}
