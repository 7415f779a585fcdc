//! The `app-config` binary against moto_server: a configuration is set from the revision shown,
//! a stale revision or an invalid file writes nothing, and maintenance is switched on and off.

use std::process::Output;

use store::DynamoStore;
use store::app_config::GetAppConfig;

const BINARY: &str = env!("CARGO_BIN_EXE_app-config");

async fn app_config(store: &DynamoStore, args: &[&str]) -> Output {
    crate::tool(
        BINARY,
        testkit::moto::shared_endpoint(),
        Some(store.table()),
        args,
    )
    .await
}

fn said(output: &Output) -> (Option<i32>, String) {
    let text = String::from_utf8_lossy(&output.stdout) + String::from_utf8_lossy(&output.stderr);
    (output.status.code(), text.into_owned())
}

#[tokio::test]
async fn a_configuration_is_set_from_the_revision_shown_and_never_over_anothers() {
    let store = testkit::moto::shared_table().await;
    let (code, text) = said(&app_config(&store, &["show"]).await);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains(r#""revision": 0"#), "{text}");

    let dir = std::env::temp_dir().join(format!("app-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("config.json");
    std::fs::write(
        &file,
        r#"{"minimumVersions": {"ios": {"version": "2.3", "update": "forced",
            "storeUrl": "https://apps.apple.com/app/id1"}}, "flags": {"quests": true}}"#,
    )
    .unwrap();
    let file = file.to_str().unwrap();
    let (code, text) = said(&app_config(&store, &["set", file, "--revision", "0"]).await);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("written at revision 1"), "{text}");

    let (code, text) = said(&app_config(&store, &["set", file, "--revision", "0"]).await);
    assert_eq!(code, Some(1), "a stale revision is refused: {text}");
    assert!(text.contains("at revision 1, not 0"), "{text}");

    let invalid = dir.join("invalid.json");
    std::fs::write(&invalid, r#"{"flags": {"no spaces": true}}"#).unwrap();
    let (code, text) = said(
        &app_config(
            &store,
            &["set", invalid.to_str().unwrap(), "--revision", "1"],
        )
        .await,
    );
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("nothing was written"), "{text}");
    let stored = store.app_config().await.unwrap().unwrap();
    assert_eq!((stored.revision, stored.config.flags["quests"]), (1, true));

    let (code, text) = said(&app_config(&store, &["maintenance", "on", "--revision", "1"]).await);
    assert_eq!(code, Some(0), "{text}");
    let stored = store.app_config().await.unwrap().unwrap();
    assert!(stored.config.maintenance.active);
    assert_eq!(stored.revision, 2);
    assert!(stored.config.flags["quests"], "the switch keeps the rest");
    let (code, _) = said(&app_config(&store, &["maintenance", "off", "--revision", "2"]).await);
    assert_eq!(code, Some(0));
    assert!(
        !store
            .app_config()
            .await
            .unwrap()
            .unwrap()
            .config
            .maintenance
            .active
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn a_change_without_its_revision_is_a_usage_error() {
    let store = testkit::moto::shared_table().await;
    for args in [
        &["set", "x.json"][..],
        &["maintenance", "on"],
        &["maintenance", "maybe", "--revision", "0"],
        &[],
    ] {
        let (code, text) = said(&app_config(&store, args).await);
        assert_eq!(code, Some(2), "{args:?}: {text}");
    }
    assert_eq!(
        store.app_config().await.unwrap(),
        None,
        "nothing was written"
    );
}
