//! The `seed-packs` binary against moto_server.

use std::process::Output;
use testkit::ids;

use aws_sdk_dynamodb::types::AttributeValue;
use domain::packs::Pack;
use domain::packs::listing::{PackFilter, PageRequest};
use domain::packs::seed::parse_seed;
use domain::timestamp::Timestamp;
use store::DynamoStore;
use store::packs::{GetPack, ListActivePacks};

const BINARY: &str = env!("CARGO_BIN_EXE_seed-packs");
const SEED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../seed/packs.json");
const CATALOG: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../seed/catalog.json");

async fn seed(endpoint: &str, table: &str, args: &[&str]) -> Output {
    tokio::process::Command::new(BINARY)
        .args(args)
        .env_clear()
        .env("TABLE_NAME", table)
        .env("AWS_ENDPOINT_URL_DYNAMODB", endpoint)
        .env("AWS_REGION", "us-east-1")
        .env("AWS_ACCESS_KEY_ID", "test")
        .env("AWS_SECRET_ACCESS_KEY", "test")
        .output()
        .await
        .unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[tokio::test]
async fn creates_the_table_and_upserts_the_shipped_packs_idempotently() {
    let output = seed(
        testkit::moto::shared_endpoint(),
        "fan-api-seeded",
        &["--catalog", CATALOG, "--file", SEED, "--create-table"],
    )
    .await;
    assert!(output.status.success(), "{output:?}");
    let expected = parse_seed(&std::fs::read(SEED).unwrap()).unwrap();
    assert!(stdout(&output).contains("table fan-api-seeded: created"));
    assert!(stdout(&output).contains(&format!("{} packs written", expected.len())));

    let again = seed(
        testkit::moto::shared_endpoint(),
        "fan-api-seeded",
        &["--catalog", CATALOG, "--file", SEED, "--create-table"],
    )
    .await;
    assert!(
        again.status.success() && stdout(&again).contains("already exists"),
        "{again:?}"
    );

    let store = DynamoStore::new(
        testkit::moto::client_for(testkit::moto::shared_endpoint()).await,
        "fan-api-seeded",
    );
    for pack in &expected {
        assert_eq!(
            store
                .get_pack(&testkit::ids::pack(&pack.id))
                .await
                .unwrap()
                .map(|stored| stored.pack)
                .as_ref(),
            Some(&Pack {
                supply_shards: Some(pack.shard_count()),
                ..pack.clone()
            })
        );
    }
    let now = Timestamp::now();
    let listed = store
        .list_active_packs(&PageRequest {
            now,
            limit: 100,
            after: None,
            filter: PackFilter::default(),
        })
        .await
        .unwrap();
    let active = expected.iter().filter(|p| p.is_active_at(now)).count();
    assert_eq!(listed.packs.len(), active);
    assert!(active >= 5, "the seed keeps several packs on sale");
}

#[tokio::test]
async fn a_bad_pack_is_named_and_nothing_is_written() {
    let store = testkit::moto::shared_table().await;
    let mut packs: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(SEED).unwrap()).unwrap();
    packs[3]["odds"][0]["chanceBps"] = 1.into();
    let file = std::env::temp_dir().join(format!("bad-packs-{}.json", std::process::id()));
    std::fs::write(&file, packs.to_string()).unwrap();

    let output = seed(
        testkit::moto::shared_endpoint(),
        store.table(),
        &["--file", file.to_str().unwrap()],
    )
    .await;
    std::fs::remove_file(&file).unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("pack [3]")
            && stderr.contains("odds")
            && stderr.contains("nothing was written"),
        "{stderr}"
    );
    assert!(
        store
            .get_pack(&testkit::ids::pack(packs[0]["id"].as_str().unwrap()))
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn usage_errors_exit_2_and_help_0() {
    for args in [
        &[][..],
        &["--file"][..],
        &["--catalog"][..],
        &["--bogus"][..],
    ] {
        let output = seed("http://127.0.0.1:9", "fan-api", args).await;
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(String::from_utf8_lossy(&output.stderr).contains("usage: seed-packs"));
    }
    let help = seed("http://127.0.0.1:9", "fan-api", &["--help"]).await;
    assert_eq!(
        help.status.code(),
        Some(0),
        "the usage asked for is no failure"
    );
    assert!(stdout(&help).contains("usage: seed-packs"));
}

/// A catalogue file of the shipped catalogue's NBA and NFL and three of their teams: what the
/// test packs name (the whole file's 89 entries in every table would slow each of moto's
/// transactions, which copy every table).
fn small_catalog() -> &'static str {
    static PATH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PATH.get_or_init(|| {
        let catalog: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(CATALOG).unwrap()).unwrap();
        let keep = |list: &str, ids: &[&str]| -> serde_json::Value {
            catalog[list]
                .as_array()
                .unwrap()
                .iter()
                .filter(|entry| ids.contains(&entry["id"].as_str().unwrap()))
                .cloned()
                .collect()
        };
        let small = serde_json::json!({
            "leagues": keep("leagues", &["nba", "nfl"]),
            "teams": keep("teams", &["nba-lal", "nba-bos", "nfl-lac"]),
        });
        let path = std::env::temp_dir().join(format!("catalog-{}.json", std::process::id()));
        std::fs::write(&path, small.to_string()).unwrap();
        path.to_str().unwrap().to_owned()
    })
}

/// Writes `packs` to a file of its own and seeds the table with it.
async fn seed_packs(table: &str, packs: &[domain::packs::Pack]) -> Output {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let file = std::env::temp_dir().join(format!(
        "seed-packs-{}-{}.json",
        std::process::id(),
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    std::fs::write(&file, serde_json::to_string(packs).unwrap()).unwrap();
    let output = seed(
        testkit::moto::shared_endpoint(),
        table,
        &[
            "--catalog",
            small_catalog(),
            "--file",
            file.to_str().unwrap(),
        ],
    )
    .await;
    std::fs::remove_file(&file).unwrap();
    output
}

/// The catalogue loads whole and again to the same (the leagues and teams read back as the
/// file has them); a pack naming a team the catalogue lacks (or a team of another league) is
/// refused before anything is written; one naming an entry already in the table seeds without
/// the file.
#[tokio::test]
async fn the_catalogue_loads_idempotently_and_packs_must_name_it() {
    use domain::catalog::parse_catalog;
    use store::catalog::{CatalogPageRequest, GetTeam, ListLeagues, ListTeams};
    let store = testkit::moto::shared_table().await;
    let catalog = parse_catalog(&std::fs::read_to_string(CATALOG).unwrap()).unwrap();
    for _ in 0..2 {
        let output = seed(
            testkit::moto::shared_endpoint(),
            store.table(),
            &["--catalog", CATALOG],
        )
        .await;
        assert!(output.status.success(), "{output:?}");
        assert!(
            stdout(&output).contains("catalogue: 7 leagues and 82 teams written"),
            "{}",
            stdout(&output)
        );
    }
    let all = CatalogPageRequest {
        limit: 100,
        after: None,
        league: None,
    };
    let leagues = store.list_leagues(&all).await.unwrap();
    assert_eq!(leagues.entries.len(), catalog.leagues.len());
    let teams = store.list_teams(&all).await.unwrap();
    assert_eq!(teams.entries.len(), catalog.teams.len());
    assert!(
        teams
            .entries
            .iter()
            .all(|team| catalog.team(&team.id) == Some(team))
    );

    let mut unknown = testkit::packs::active("unknown-team", 60);
    unknown.team_id = Some("nba-zzz".into());
    let mut elsewhere = testkit::packs::active("team-elsewhere", 60);
    elsewhere.team_id = Some("nfl-lac".into());
    for (pack, problem) in [
        (unknown, "teamId names no team of the catalogue"),
        (
            elsewhere,
            "teamId names a team of another league than leagueId",
        ),
    ] {
        let id = pack.id.clone();
        let refused = seed_packs(store.table(), &[testkit::packs::active("fine", 60), pack]).await;
        assert_eq!(refused.status.code(), Some(1), "{refused:?}");
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert!(
            stderr.contains(&format!("pack {id}: {problem}; nothing was written")),
            "{stderr}"
        );
        assert!(store.get_pack(&ids::pack("fine")).await.unwrap().is_none());
    }

    // Without --catalog, the table's catalogue is the one packs must name.
    let mut lakers = testkit::packs::active("lakers-only", 60);
    lakers.team_id = Some("nba-lal".into());
    let file = std::env::temp_dir().join(format!("lakers-{}.json", std::process::id()));
    std::fs::write(&file, serde_json::to_string(&[lakers]).unwrap()).unwrap();
    let seeded = seed(
        testkit::moto::shared_endpoint(),
        store.table(),
        &["--file", file.to_str().unwrap()],
    )
    .await;
    std::fs::remove_file(&file).unwrap();
    assert!(seeded.status.success(), "{seeded:?}");
    assert!(
        store
            .get_pack(&ids::pack("lakers-only"))
            .await
            .unwrap()
            .is_some()
    );
    assert!(
        store
            .get_team(&domain::ids::TeamId::parse("nba-lal").unwrap())
            .await
            .unwrap()
            .is_some()
    );
}

#[tokio::test]
async fn reseeding_keeps_what_buyers_did_and_refuses_to_change_what_they_pay_for() {
    let store = testkit::moto::shared_table().await;
    let on_sale = testkit::packs::active("on-sale", 3600);
    let upcoming = testkit::packs::active("upcoming", -3600);
    let first = seed_packs(store.table(), &[on_sale.clone(), upcoming.clone()]).await;
    assert!(first.status.success(), "{first:?}");

    // Five buyers took a unit each (from its first share).
    store
        .client()
        .update_item()
        .table_name(store.table())
        .key("PK", AttributeValue::S("PACK#on-sale#0".into()))
        .key("SK", AttributeValue::S("SUPPLY".into()))
        .update_expression("SET remaining = remaining - :five")
        .expression_attribute_values(":five", AttributeValue::N("5".into()))
        .send()
        .await
        .unwrap();
    let stored = |id: &'static str| {
        let store = store.clone();
        async move {
            store
                .get_pack(&testkit::ids::pack(id))
                .await
                .unwrap()
                .unwrap()
                .pack
        }
    };
    let remaining = |id: &'static str| {
        let store = store.clone();
        async move { testkit::packs::remaining(&store, id).await }
    };

    // A new price for the pack on sale is refused, and nothing of it lands; the upcoming pack
    // may still change whole.
    let mut repriced = on_sale.clone();
    repriced.price.amount += 100;
    repriced.name = "Renamed with the price".into();
    let mut upcoming_repriced = upcoming.clone();
    upcoming_repriced.price.amount = 1;
    let refused = seed_packs(store.table(), &[repriced, upcoming_repriced.clone()]).await;
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("pack on-sale")
            && stderr.contains("price")
            && stderr.contains("nothing was written"),
        "{stderr}"
    );
    let kept = stored("on-sale").await;
    assert_eq!(
        (kept.name.as_str(), kept.price.amount),
        (on_sale.name.as_str(), 499)
    );
    assert_eq!(remaining("on-sale").await, on_sale.remaining - 5);
    upcoming_repriced.supply_shards = Some(upcoming_repriced.shard_count());
    assert_eq!(stored("upcoming").await, upcoming_repriced);

    // A cosmetic change lands and does not reset `remaining`, whatever the file says.
    let mut renamed = on_sale.clone();
    renamed.name = "Renamed".into();
    renamed.description = "New words.".into();
    let again = seed_packs(store.table(), &[renamed]).await;
    assert!(again.status.success(), "{again:?}");
    assert!(
        stdout(&again).contains("remaining kept"),
        "{}",
        stdout(&again)
    );
    let kept = stored("on-sale").await;
    assert_eq!(kept.name, "Renamed");
    assert_eq!(remaining("on-sale").await, on_sale.remaining - 5);
}

/// `--books` adds up each pack's units as the store counts them apart (its shares, the holds
/// index, the sold counts): a pack bought and paid through the store balances; units that
/// vanish from a share without a purchase are caught.
#[tokio::test]
async fn the_books_check_finds_a_unit_that_went_missing() {
    use store::cash::CreditCash;
    use store::purchases::CompletePurchase;
    let store = testkit::moto::shared_table().await;
    let mut pack = testkit::packs::active("books", 3600);
    (pack.total_supply, pack.remaining, pack.supply_shards) = (10, 10, Some(3));
    testkit::packs::save(&store, &pack).await;
    let paid = testkit::purchases::reserve(&store, "buyer", "books", "k1", 600).await;
    testkit::purchases::reserve(&store, "holder", "books", "k2", 600).await;
    let credit = domain::cash::parse_credit("buyer", "1000", "USD", "books-grant").unwrap();
    store.credit_cash(&credit, Timestamp::now()).await.unwrap();
    store
        .complete_purchase(
            &ids::user("buyer"),
            &ids::pack("books"),
            &paid.id,
            Timestamp::now(),
        )
        .await
        .unwrap();
    let books = |store: DynamoStore| async move {
        seed(
            testkit::moto::shared_endpoint(),
            store.table(),
            &["--books", "books"],
        )
        .await
    };
    let checked = books(store.clone()).await;
    assert!(checked.status.success(), "{checked:?}");
    assert!(
        stdout(&checked)
            .contains("pack books: remaining 8 + held 1 + sold 1 = 10 of totalSupply 10: balanced"),
        "{}",
        stdout(&checked)
    );

    // A unit taken from a share with no purchase to show for it.
    store
        .client()
        .update_item()
        .table_name(store.table())
        .key("PK", AttributeValue::S("PACK#books#2".into()))
        .key("SK", AttributeValue::S("SUPPLY".into()))
        .update_expression("SET remaining = remaining - :one")
        .expression_attribute_values(":one", AttributeValue::N("1".into()))
        .send()
        .await
        .unwrap();
    let checked = books(store).await;
    assert_eq!(checked.status.code(), Some(1), "{checked:?}");
    assert!(stdout(&checked).contains("= 9 of totalSupply 10: DOES NOT BALANCE"));
}

/// A pack item written before the supply had shares (no `shards`, its `remaining` the exact
/// count, no share items) reads, and `seed-packs` gives it shares holding that count; then it
/// sells and its books balance.
#[tokio::test]
async fn a_pack_stored_before_shares_gets_them_when_seeded_again() {
    use store::packs::ReadSupply;
    let store = testkit::moto::shared_table().await;
    let pack = testkit::packs::active("legacy", 3600);
    testkit::packs::save(&store, &pack).await;
    // Today's item as the previous release wrote it: no shares, `remaining` on the pack item.
    for shard in 0..pack.shard_count() {
        store
            .client()
            .delete_item()
            .table_name(store.table())
            .key("PK", AttributeValue::S(format!("PACK#legacy#{shard}")))
            .key("SK", AttributeValue::S("SUPPLY".into()))
            .send()
            .await
            .unwrap();
    }
    store
        .client()
        .update_item()
        .table_name(store.table())
        .key("PK", AttributeValue::S("PACK#legacy".into()))
        .key("SK", AttributeValue::S("PACK".into()))
        .update_expression("SET remaining = :left REMOVE shards")
        .expression_attribute_values(":left", AttributeValue::N("93".into()))
        .send()
        .await
        .unwrap();
    let read = store
        .get_pack(&testkit::ids::pack("legacy"))
        .await
        .unwrap()
        .unwrap()
        .pack;
    assert_eq!((read.remaining, read.supply_shards), (93, None));
    assert_eq!(
        store
            .read_supply(&testkit::ids::pack("legacy"))
            .await
            .unwrap(),
        None
    );
    // A hold of before the deploy, released after it: its unit went back to share 0.
    store
        .client()
        .update_item()
        .table_name(store.table())
        .key("PK", AttributeValue::S("PACK#legacy#0".into()))
        .key("SK", AttributeValue::S("SUPPLY".into()))
        .update_expression("ADD remaining :one")
        .expression_attribute_values(":one", AttributeValue::N("1".into()))
        .send()
        .await
        .unwrap();

    let seeded = seed_packs(store.table(), std::slice::from_ref(&pack)).await;
    assert!(seeded.status.success(), "{seeded:?}");
    let supply = store
        .read_supply(&testkit::ids::pack("legacy"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        supply.remaining(),
        94,
        "the pack item's count split over the shares, with the unit released meanwhile"
    );
    assert_eq!(supply.shares.len(), pack.shard_count() as usize);
    testkit::purchases::reserve(&store, "buyer", "legacy", "k", 600).await;
    assert_eq!(testkit::packs::remaining(&store, "legacy").await, 93);
}

const QUESTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../seed/quests.json");

#[tokio::test]
async fn the_shipped_quests_are_written_with_their_leagues_resolved() {
    use store::quests::ListQuests;
    let store = testkit::moto::shared_table().await;
    let output = seed(
        testkit::moto::shared_endpoint(),
        store.table(),
        &["--catalog", CATALOG, "--file", SEED, "--quests", QUESTS],
    )
    .await;
    assert!(output.status.success(), "{output:?}");
    assert!(stdout(&output).contains("5 quests written"), "{output:?}");
    let quests = store.list_quests().await.unwrap();
    let nba = quests
        .iter()
        .find(|q| q.id.as_str() == "nba-regular")
        .unwrap();
    let packs: Vec<&str> = nba
        .league_packs
        .iter()
        .flatten()
        .map(|id| id.as_str())
        .collect();
    assert!(packs.contains(&"nba-rookie-2026") && !packs.contains(&"f1-season-finale"));
    // A pack reward (of a pack of the file) is written as the file has it.
    let double = quests.iter().find(|q| q.id.as_str() == "rookie-double");
    assert_eq!(
        double.map(|q| &q.reward),
        Some(&domain::quests::Reward::Pack {
            pack_id: testkit::ids::pack("nba-rookie-2026")
        })
    );
}

#[tokio::test]
async fn a_quest_naming_what_does_not_exist_writes_nothing() {
    let store = testkit::moto::shared_table().await;
    let mut quests: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(QUESTS).unwrap()).unwrap();
    quests[3]["goal"]["itemIds"][0] = "no-such-item".into();
    let file = std::env::temp_dir().join(format!("bad-quests-{}.json", std::process::id()));
    std::fs::write(&file, quests.to_string()).unwrap();
    let output = seed(
        testkit::moto::shared_endpoint(),
        store.table(),
        &[
            "--catalog",
            CATALOG,
            "--file",
            SEED,
            "--quests",
            file.to_str().unwrap(),
        ],
    )
    .await;
    std::fs::remove_file(&file).unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("gunners-trio")
            && stderr.contains("no-such-item")
            && stderr.contains("nothing was written"),
        "{stderr}"
    );
    assert!(
        store
            .get_pack(&testkit::ids::pack("nba-rookie-2026"))
            .await
            .unwrap()
            .is_none()
    );
    // --quests without the packs it names is a usage error.
    let usage = seed(
        testkit::moto::shared_endpoint(),
        store.table(),
        &["--quests", QUESTS],
    )
    .await;
    assert_eq!(usage.status.code(), Some(2));
}
