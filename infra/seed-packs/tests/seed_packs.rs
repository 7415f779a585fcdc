//! The `seed-packs` binary against moto_server.

use std::process::Output;

use shared::packs::listing::PageRequest;
use shared::packs::seed::parse_seed;
use shared::store::{DynamoStore, GetPack, ListActivePacks};
use shared::timestamp::Timestamp;
use testkit::moto::MotoServer;

const BINARY: &str = env!("CARGO_BIN_EXE_seed-packs");
const SEED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../seed/packs.json");

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
    let moto = MotoServer::start().await;
    let output = seed(
        &moto.endpoint,
        "fan-api-seeded",
        &["--file", SEED, "--create-table"],
    )
    .await;
    assert!(output.status.success(), "{output:?}");
    let expected = parse_seed(&std::fs::read(SEED).unwrap()).unwrap();
    assert!(stdout(&output).contains("table fan-api-seeded: created"));
    assert!(stdout(&output).contains(&format!("{} packs written", expected.len())));

    let again = seed(
        &moto.endpoint,
        "fan-api-seeded",
        &["--file", SEED, "--create-table"],
    )
    .await;
    assert!(
        again.status.success() && stdout(&again).contains("already exists"),
        "{again:?}"
    );

    let store = DynamoStore::new(moto.client().await, "fan-api-seeded");
    for pack in &expected {
        assert_eq!(store.get_pack(&pack.id).await.unwrap().as_ref(), Some(pack));
    }
    let now = Timestamp::now();
    let listed = store
        .list_active_packs(&PageRequest {
            now,
            limit: 100,
            after: None,
        })
        .await
        .unwrap();
    let active = expected.iter().filter(|p| p.is_active_at(now)).count();
    assert_eq!(listed.packs.len(), active);
    assert!(active >= 5, "the seed keeps several packs on sale");
}

#[tokio::test]
async fn a_bad_pack_is_named_and_nothing_is_written() {
    let moto = MotoServer::start().await;
    let store = moto.new_table().await;
    let mut packs: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(SEED).unwrap()).unwrap();
    packs[3]["odds"][0]["chanceBps"] = 1.into();
    let file = std::env::temp_dir().join(format!("bad-packs-{}.json", std::process::id()));
    std::fs::write(&file, packs.to_string()).unwrap();

    let output = seed(
        &moto.endpoint,
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
            .get_pack(packs[0]["id"].as_str().unwrap())
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn usage_errors_exit_2() {
    for args in [&[][..], &["--file"][..], &["--bogus"][..]] {
        let output = seed("http://127.0.0.1:9", "fan-api", args).await;
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(String::from_utf8_lossy(&output.stderr).contains("usage: seed-packs"));
    }
}
