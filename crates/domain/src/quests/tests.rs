use super::seed::{parse_quests, resolve};
use super::*;
use crate::purchases::OpenedItem;

fn at(text: &str) -> Timestamp {
    Timestamp::parse(text).unwrap()
}

fn pulled(purchase: &str, pack: &str, item: &str, rarity: &str, opened: &str) -> MyItem {
    MyItem {
        item: OpenedItem {
            slot: 0,
            item_id: item.into(),
            name: item.into(),
            rarity: rarity.into(),
            image_url: None,
        },
        pack_id: PackId::parse(pack).unwrap(),
        purchase_id: PurchaseId::parse(purchase).unwrap(),
        opened_at: at(opened),
    }
}

fn shipped() -> Vec<Quest> {
    let mut quests = parse_quests(include_bytes!("../../../../infra/seed/quests.json")).unwrap();
    let packs = crate::packs::seed::parse_seed(include_bytes!("../../../../infra/seed/packs.json"))
        .unwrap();
    let catalog =
        crate::catalog::parse_catalog(include_str!("../../../../infra/seed/catalog.json")).unwrap();
    resolve(&mut quests, &packs, &catalog).unwrap();
    quests
}

fn quest(id: &str) -> Quest {
    shipped().into_iter().find(|q| q.id.as_str() == id).unwrap()
}

#[test]
fn open_packs_counts_openings_in_the_window_of_the_league_once_per_purchase() {
    let nba = quest("nba-regular");
    let items = [
        // Two items of one opening count once.
        pulled(
            "p1",
            "nba-rookie-2026",
            "a",
            "common",
            "2026-11-01T00:00:00Z",
        ),
        pulled(
            "p1",
            "nba-rookie-2026",
            "b",
            "common",
            "2026-11-01T00:00:00Z",
        ),
        pulled("p2", "lakers-legends", "c", "rare", "2026-11-02T00:00:00Z"),
        // Another league's, and one before the window: not counted.
        pulled(
            "p3",
            "f1-season-finale",
            "d",
            "common",
            "2026-11-02T00:00:00Z",
        ),
        pulled(
            "p4",
            "nba-rookie-2026",
            "e",
            "common",
            "2026-09-30T23:59:59Z",
        ),
    ];
    let progress = progress(&nba, &items, false);
    assert_eq!((progress.current, progress.target), (2, 5));
    assert!(!progress.completed);
}

#[test]
fn progress_stops_at_the_target_and_a_quest_seeded_later_counts_earlier_openings() {
    // first-pack's window began before any of these openings were made or the quest seeded.
    let first = quest("first-pack");
    let items = [
        pulled(
            "p1",
            "f1-season-finale",
            "a",
            "common",
            "2026-02-01T00:00:00Z",
        ),
        pulled(
            "p2",
            "f1-season-finale",
            "b",
            "common",
            "2026-03-01T00:00:00Z",
        ),
    ];
    let progress = progress(&first, &items, true);
    assert_eq!(
        progress,
        Progress {
            current: 1,
            target: 1,
            completed: true,
            claimed: true
        }
    );
}

#[test]
fn collect_goals_count_distinct_items_and_rarities_of_their_league() {
    let trio = quest("gunners-trio");
    let items = [
        pulled(
            "p1",
            "arsenal-invincibles",
            "arsenal-invincibles-epic-1",
            "epic",
            "2026-11-20T00:00:00Z",
        ),
        pulled(
            "p2",
            "arsenal-invincibles",
            "arsenal-invincibles-epic-1",
            "epic",
            "2026-11-21T00:00:00Z",
        ),
        pulled(
            "p2",
            "arsenal-invincibles",
            "arsenal-invincibles-lege-1",
            "legendary",
            "2026-11-21T00:00:00Z",
        ),
    ];
    assert_eq!(progress(&trio, &items, false).current, 2);
    let legends = quest("legend-hunter");
    assert!(
        !progress(&legends, &items, false).completed,
        "not an NBA pack"
    );
    let nba = [pulled(
        "p9",
        "celtics-banner-17",
        "x",
        "legendary",
        "2026-11-21T00:00:00Z",
    )];
    assert!(progress(&legends, &nba, false).completed);
}

#[test]
fn a_claim_needs_completion_and_ends_seven_days_after_the_quest() {
    let first = quest("first-pack");
    let done = progress(
        &first,
        &[pulled(
            "p1",
            "f1-season-finale",
            "a",
            "common",
            "2026-02-01T00:00:00Z",
        )],
        false,
    );
    let todo = progress(&first, &[], false);
    assert_eq!(
        check_claim(&first, &todo, at("2026-06-01T00:00:00Z")),
        Err(ClaimRefusal::NotCompleted)
    );
    assert_eq!(
        check_claim(&first, &done, at("2028-01-07T23:59:59Z")),
        Ok(())
    );
    assert_eq!(
        check_claim(&first, &done, at("2028-01-08T00:00:00Z")),
        Err(ClaimRefusal::Ended)
    );
}

#[test]
fn credit_references_name_the_quest_and_the_fan() {
    let user = UserId::parse("auth0|fan:1").unwrap();
    let id = QuestId::parse("first-pack").unwrap();
    let reference = credit_reference(&id, &user);
    assert_eq!(reference, "quest:first-pack:auth0|fan:1");
    assert_eq!(quest_of_reference(&reference), Some(id));
    assert_eq!(quest_of_reference("topup:abc"), None);
    assert_ne!(claim_id(&user, "k1"), claim_id(&user, "k2"));
}

#[test]
fn the_seeding_refuses_what_names_nothing() {
    let mut packs =
        crate::packs::seed::parse_seed(include_bytes!("../../../../infra/seed/packs.json"))
            .unwrap();
    let mut human_checked = packs[0].clone();
    human_checked.id = "human-checked".into();
    human_checked.human_check = true;
    packs.push(human_checked);
    let catalog =
        crate::catalog::parse_catalog(include_str!("../../../../infra/seed/catalog.json")).unwrap();
    let file = |goal: &str, reward: &str| {
        format!(
            r#"[{{"id": "q", "name": "Q", "description": "", "startsAt": "2026-01-01T00:00:00Z",
            "endsAt": "2027-01-01T00:00:00Z", "goal": {goal}, "reward": {reward}}}]"#
        )
    };
    let cash = r#"{"type": "cash", "amount": 100, "currency": "USD"}"#;
    for (goal, reward, problem) in [
        (
            r#"{"type": "open_packs", "count": 1, "packId": "nope"}"#,
            cash,
            "no pack nope",
        ),
        (
            r#"{"type": "open_packs", "count": 1, "leagueId": "nope"}"#,
            cash,
            "no league nope",
        ),
        (
            r#"{"type": "collect_items", "itemIds": ["nope"]}"#,
            cash,
            "no pack holds item nope",
        ),
        (
            r#"{"type": "collect_rarity", "rarity": "mythic", "count": 1}"#,
            cash,
            "no pack has rarity",
        ),
        (
            r#"{"type": "open_packs", "count": 1}"#,
            r#"{"type": "pack", "packId": "nope"}"#,
            "reward: no pack nope",
        ),
        // A reward would skip the drop's door: its line, or its human check.
        (
            r#"{"type": "open_packs", "count": 1}"#,
            r#"{"type": "pack", "packId": "nba-all-star-2027"}"#,
            "reward: pack nba-all-star-2027 has a waiting room",
        ),
        (
            r#"{"type": "open_packs", "count": 1}"#,
            r#"{"type": "pack", "packId": "human-checked"}"#,
            "reward: pack human-checked asks for a human check",
        ),
        // Goals no fan could meet with the packs of their league.
        (
            r#"{"type": "open_packs", "count": 1, "leagueId": "nba", "packId": "f1-season-finale"}"#,
            cash,
            "goal: pack f1-season-finale is not a pack of league nba",
        ),
        (
            r#"{"type": "collect_rarity", "rarity": "legendary", "count": 1, "leagueId": "nhl"}"#,
            cash,
            "goal: no pack has rarity legendary of league nhl",
        ),
    ] {
        let mut quests = parse_quests(file(goal, reward).as_bytes()).unwrap();
        let error = resolve(&mut quests, &packs, &catalog).unwrap_err();
        assert!(error.problem.contains(problem), "{error}");
    }
    // A known league the file has no pack of.
    let without_nhl: Vec<_> = packs
        .iter()
        .filter(|pack| pack.league_id.as_deref() != Some("nhl"))
        .cloned()
        .collect();
    let mut quests = parse_quests(
        file(
            r#"{"type": "open_packs", "count": 1, "leagueId": "nhl"}"#,
            cash,
        )
        .as_bytes(),
    )
    .unwrap();
    let error = resolve(&mut quests, &without_nhl, &catalog).unwrap_err();
    assert_eq!(error.problem, "goal: no pack of league nhl");
    for (goal, reward, problem) in [
        (r#"{"type": "open_packs", "count": 0}"#, cash, "at least 1"),
        (
            r#"{"type": "collect_items", "itemIds": []}"#,
            cash,
            "1-50 items",
        ),
        (
            r#"{"type": "open_packs", "count": 1}"#,
            r#"{"type": "cash", "amount": 0, "currency": "USD"}"#,
            "minor units",
        ),
        (
            r#"{"type": "open_packs", "count": 1}"#,
            r#"{"type": "nft", "packId": "nba-rookie-2026"}"#,
            "unknown variant",
        ),
    ] {
        let error = parse_quests(file(goal, reward).as_bytes()).unwrap_err();
        assert!(error.problem.contains(problem), "{error}");
    }
}
